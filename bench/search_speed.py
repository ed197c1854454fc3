"""Decisions per second of search agents, side by side on the same positions.

    python -m lama_dice.bench.search_speed mcts:50 mcts:200 lookahead ppo:2p [--positions 60] [--json -]
    python -m lama_dice.bench.search_speed search:ppo:2p search:ppo:2p,depth=1 ppo:2p lookahead

The positions are the decisions (with more than one legal action) of seeded two-player
games between two ``threshold:0.2`` players (``--players 4``: four); every agent decides
at each of them once and the time of its ``act`` calls is totalled (``--batch B``: its
``act_batch`` calls on ``B`` positions at a time, as ``evaluate``'s lockstep chunks call it).
``--repeat K`` times the agents ``K`` times in turn, alternating, and totals each one's
times, so that a changing load falls on all of them alike.  Run it in one process so that
the agents share the machine's load (ratios are what to compare on a busy machine).  For a
``search:`` agent the value network's leaves (the tree) or the rollout steps (``rollouts=R``)
per decision are reported too::

    python -m lama_dice.bench.search_speed search:ppo:2p,rollouts=32,rounds=100,z=1 \
        search:ppo:2p,rollouts=32,rounds=100,z=1,engine=python --positions 20 --repeat 3
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

from lama_env.engine import LamaGame

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
            legal = game.legal_actions()
            if len(legal) > 1:
                out.append(game.clone())
            game.step(player.act(game, legal))
    return out


def _cost(agent: object) -> tuple[str, int] | None:
    """The search's own count of its work: value-network leaves (the tree) or rollout steps (``rollouts=R``)."""
    for name, attr in (("steps_per_decision", "steps_played"), ("leaves_per_decision", "leaves_valued")):
        if hasattr(agent, attr):
            return name, int(getattr(agent, attr))
    return None


def decisions_per_second(spec: str, games: list[LamaGame], seed: int = 0, batch: int = 1, repeat: int = 1) -> dict:
    """Time ``spec``'s decisions at ``games``; returns ``{"spec", "decisions", "seconds", "per_second"}``.

    A ``search:`` agent's result also has ``leaves_per_decision`` (value-network leaves) or
    ``steps_per_decision`` (rollout steps).  (:func:`compare` times several agents alternately.)
    """
    return compare([spec], games, seed=seed, batch=batch, repeat=repeat)[0]


def compare(specs: list[str], games: list[LamaGame], seed: int = 0, batch: int = 1, repeat: int = 1) -> list[dict]:
    """:func:`decisions_per_second` of every spec, timed ``repeat`` times in turn (alternating)."""
    agents = [make_agent(spec, seed=seed) for spec in specs]
    for agent in agents:
        agent.act(games[0].clone(), games[0].legal_actions())  # warm-up (loading, compiling)
    seconds = [0.0] * len(specs)
    work = [0] * len(specs)
    for _ in range(repeat):
        for k, agent in enumerate(agents):
            before = _cost(agent)
            t0 = time.perf_counter()
            for i in range(0, len(games), batch):
                chunk = games[i:i + batch]
                agent.act_batch(chunk, [g.legal_actions() for g in chunk])
            seconds[k] += time.perf_counter() - t0
            after = _cost(agent)
            if before is not None and after is not None:
                work[k] += after[1] - before[1]
    out = []
    for k, spec in enumerate(specs):
        decisions = len(games) * repeat
        r: dict = {"spec": spec, "decisions": decisions, "seconds": round(seconds[k], 3),
                   "per_second": decisions / seconds[k]}
        cost = _cost(agents[k])
        if cost is not None:
            r[cost[0]] = work[k] / decisions
        out.append(r)
    return out


def main(argv: list[str] | None = None) -> int:
    """Command line: print each agent's decisions per second (or write them as JSON)."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("agents", nargs="+", metavar="SPEC")
    ap.add_argument("--positions", type=int, default=60)
    ap.add_argument("--players", type=int, default=2, help="players of the games the positions come from")
    ap.add_argument("--batch", type=int, default=1, help="positions per act_batch call (1: one decision at a time)")
    ap.add_argument("--repeat", type=int, default=1, help="time the agents this many times in turn, alternating")
    ap.add_argument("--json", metavar="OUT", help="write the results as JSON to OUT ('-': standard output)")
    args = ap.parse_args(argv)
    if args.batch < 1 or args.repeat < 1:
        ap.error("--batch and --repeat must be at least 1")
    games = positions(args.positions, players=args.players)
    results = compare(args.agents, games, batch=args.batch, repeat=args.repeat)
    if args.json:
        text = json.dumps({"positions": len(games), "players": args.players, "batch": args.batch,
                           "repeat": args.repeat, "load": os.getloadavg(), "agents": results}, indent=1)
        if args.json == "-":
            print(text)
        else:
            with open(args.json, "w", encoding="utf-8") as f:
                f.write(text + "\n")
    where = sys.stderr if args.json == "-" else None
    for r in results:
        cost = "".join(f"  {r[key]:8.1f} {what}/decision" for key, what in
                       (("leaves_per_decision", "leaves"), ("steps_per_decision", "steps")) if key in r)
        print(f"{r['spec']:<28} {r['per_second']:10.1f} decisions/s{cost}", file=where)
    print(f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}", file=where)
    return 0


if __name__ == "__main__":
    sys.exit(main())
