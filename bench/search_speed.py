"""Decisions per second of search agents, side by side on the same positions.

    python -m lama_dice.bench.search_speed mcts:50 mcts:200 lookahead ppo:2p [--positions 60] [--json -]
    python -m lama_dice.bench.search_speed search:ppo:2p search:ppo:2p,depth=2 ppo:2p lookahead

The positions are the decisions (with more than one legal action) of seeded two-player
games between two ``threshold:0.2`` players (``--players 4``: four); every agent decides
at each of them once and the time of its ``act`` calls is totalled.  Run it in one process
so that the agents share the machine's load (ratios are what to compare on a busy machine).
For a ``search:`` agent the value network's leaves per decision are reported too.
"""

from __future__ import annotations

import argparse
import json
import sys
import time

from lama_env.engine import LamaGame, Phase

from ..agents.registry import make_agent


def positions(count: int, players: int = 2, seed: int = 0) -> list[LamaGame]:
    """``count`` decision positions (copies) of seeded ``threshold:0.2`` games."""
    player = make_agent("threshold:0.2", seed=seed)
    out: list[LamaGame] = []
    g = 0
    while len(out) < count:
        game = LamaGame(players, seed=seed + g, record=False)
        g += 1
        while not game.game_over and len(out) < count:
            if game.phase is Phase.ROUND_OVER:
                game.next_round()
                continue
            legal = game.legal_actions()
            if len(legal) > 1:
                out.append(game.copy())
            game.step(player.act(game, legal))
    return out


def decisions_per_second(spec: str, games: list[LamaGame], seed: int = 0) -> dict:
    """Time ``spec``'s decisions at ``games``; returns ``{"spec", "decisions", "seconds", "per_second"}``.

    A ``search:`` agent's result also has ``leaves_per_decision`` (value-network leaves).
    """
    agent = make_agent(spec, seed=seed)
    agent.act(games[0].copy(), games[0].legal_actions())  # warm-up (loading, compiling)
    leaves0: int | None = getattr(agent, "leaves_valued", None)
    t0 = time.perf_counter()
    for g in games:
        agent.act(g, g.legal_actions())
    dt = time.perf_counter() - t0
    out: dict = {"spec": spec, "decisions": len(games), "seconds": round(dt, 3), "per_second": len(games) / dt}
    if leaves0 is not None:  # a search: its cost in value-network leaves
        leaves: int = agent.leaves_valued  # type: ignore[attr-defined]
        out["leaves_per_decision"] = (leaves - leaves0) / len(games)
    return out


def main(argv: list[str] | None = None) -> int:
    """Command line: print each agent's decisions per second (or write them as JSON)."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("agents", nargs="+", metavar="SPEC")
    ap.add_argument("--positions", type=int, default=60)
    ap.add_argument("--players", type=int, default=2, help="players of the games the positions come from")
    ap.add_argument("--json", metavar="OUT", help="write the results as JSON to OUT ('-': standard output)")
    args = ap.parse_args(argv)
    games = positions(args.positions, players=args.players)
    results = [decisions_per_second(spec, games) for spec in args.agents]
    if args.json:
        text = json.dumps({"positions": len(games), "players": args.players, "agents": results}, indent=1)
        if args.json == "-":
            print(text)
        else:
            with open(args.json, "w", encoding="utf-8") as f:
                f.write(text + "\n")
    for r in results:
        leaves = f"  {r['leaves_per_decision']:8.1f} leaves/decision" if "leaves_per_decision" in r else ""
        print(f"{r['spec']:<28} {r['per_second']:10.1f} decisions/s{leaves}",
              file=sys.stderr if args.json == "-" else None)
    return 0


if __name__ == "__main__":
    sys.exit(main())
