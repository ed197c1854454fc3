"""Random games per second of the bare rules engine (two players, uniform random legal actions).

    python -m lama_dice.bench.engine_games [--seconds 4] [--players 2]

Plays whole games with ``LamaGame`` (without and with the turn log that
``to_record()`` needs) for a fixed time each and prints games and actions per second.
"""

from __future__ import annotations

import argparse
import random
import time

from lama_env.engine import LamaGame


def games_per_second(players: int, record: bool, seconds: float) -> tuple[float, float, int]:
    """(games/s, actions/s, games) of random play for ``seconds``."""
    rnd = random.Random(0)
    games = actions = 0
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        g = LamaGame(players, seed=games, record=record)
        while not g.game_over:  # rounds flow: a step that ends one deals the next
            g.step(rnd.choice(g.legal_actions()))
            actions += 1
        games += 1
    dt = time.perf_counter() - t0
    return games / dt, actions / dt, games


def main() -> None:
    """Command line: print random games and actions per second, without and with the turn log."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=4.0)
    ap.add_argument("--players", type=int, default=2)
    args = ap.parse_args()
    for record in (False, True):
        gps, aps, n = games_per_second(args.players, record, args.seconds)
        print(f"record={record}: {gps:,.0f} games/s, {aps:,.0f} actions/s ({n:,} games, {args.players} players)")


if __name__ == "__main__":
    main()
