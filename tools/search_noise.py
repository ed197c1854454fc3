"""How noisy the rollout search's choices are: many rollouts on the same positions, and what fewer would pick.

    python -m tools.search_noise measure --net ppo:2p --positions 400 --rollouts 2048 --rounds 100 --out full.json
    python -m tools.search_noise measure --net ppo:2p --positions 400 --rollouts 2048 --rounds 1 --out round.json
    python -m tools.search_noise compare full.json round.json
    python -m tools.search_noise simulate round.json

``measure``: decision positions (with more than one legal action) of seeded ``--net``
(default ``ppo:2p``) self-play games, each kept with probability 0.15; at each, every legal action is rolled out
``--rollouts`` times by :class:`lama_dice.agents.rollout.RolloutPolicy` (``top=0``: all of them,
on common random numbers) to the end of the game (``--rounds 100``) or of the round
(``--rounds 1``, the value network at the cut), and each action's mean and the standard error of
its paired difference with the network's choice are written.  ``compare``: the same positions
under two settings: the correlation of the differences and their standard errors.
``simulate``: taking a file's differences as the truth, what a search with ``R`` rollouts and
threshold ``z`` would gain per decision in expectation (its estimate drawn about the truth with
the standard error scaled by ``sqrt(rollouts / R)``), and how often it leaves the network.
"""

from __future__ import annotations

import argparse
import json
import sys
import time

import numpy as np

from lama_dice.agents.registry import make_agent
from lama_dice.agents.rollout import RolloutPolicy
from lama_env.engine import LamaGame


def positions(count: int, seed: int = 0, keep: float = 0.15, net: str = "ppo:2p") -> list[LamaGame]:
    """``count`` decision positions of seeded ``net`` self-play games (each decision kept with ``keep``)."""
    player = make_agent(net)
    rng = np.random.default_rng(seed)
    out: list[LamaGame] = []
    g = 0
    while len(out) < count:
        game = LamaGame(2, seed=seed * 100_000 + g, record=False)
        g += 1
        while not game.game_over and len(out) < count:
            legal = game.legal_actions()
            if len(legal) > 1 and rng.random() < keep:
                out.append(game.clone())
            game.step(player.act(game, legal))
    return out


def measure(args: argparse.Namespace) -> int:
    """Every legal action's rollout mean and paired standard error at each position (the module docstring)."""
    pos = positions(args.positions, seed=args.seed, net=args.net)
    search = RolloutPolicy(args.net, rollouts=args.rollouts, rounds=args.rounds, top=0, seed=123)
    t0 = time.perf_counter()
    rows = []
    for i in range(0, len(pos), 8):
        for g, (_, vals) in zip(pos[i:i + 8], search.search_many(pos[i:i + 8]), strict=True):
            base = next(iter(vals))  # the network's choice comes first
            rows.append({"phase": g.phase.name, "legal": len(g.legal_actions()), "base": int(base),
                         "vals": {int(k): [float(v[0]), float(v[1])] for k, v in vals.items()}})
    seconds = time.perf_counter() - t0
    with open(args.out, "w", encoding="utf-8") as f:
        json.dump({"net": args.net, "rollouts": args.rollouts, "rounds": args.rounds, "seconds": seconds,
                   "positions": rows}, f)
    print(f"{len(rows)} positions, {args.rollouts} rollouts per action, rounds={args.rounds}: {seconds:.0f} s; "
          f"wrote {args.out}")
    return 0


def _diffs(row: dict) -> dict[str, tuple[float, float]]:
    v, base = row["vals"], str(row["base"])
    return {k: (m - v[base][0], se) for k, (m, se) in v.items() if k != base}


def compare(args: argparse.Namespace) -> int:
    """The two files' differences on the same positions: correlation, standard errors, agreement of the switches."""
    a, b = (json.load(open(p, encoding="utf-8")) for p in (args.a, args.b))
    if a.get("net", "ppo:2p") != b.get("net", "ppo:2p"):
        sys.exit(f"compare: the files come from other networks ({a.get('net')} and {b.get('net')})")
    xs, ys, sa, sb = [], [], [], []
    for ra, rb in zip(a["positions"], b["positions"], strict=True):
        if ra["base"] != rb["base"]:
            sys.exit("compare: the files hold other positions (another --positions or --seed)")
        da, db = _diffs(ra), _diffs(rb)
        for k in da:
            xs.append(da[k][0])
            ys.append(db[k][0])
            sa.append(da[k][1])
            sb.append(db[k][1])
    x, y, s, t = map(np.array, (xs, ys, sa, sb))
    print(f"{len(x)} (position, other action) pairs; correlation of the differences {np.corrcoef(x, y)[0, 1]:.4f}")
    print(f"median standard error: {args.a} {np.median(s):.4f} ({a['seconds']:.0f} s), "
          f"{args.b} {np.median(t):.4f} ({b['seconds']:.0f} s)")
    for th in (2, 3):
        sel = y / np.maximum(t, 1e-12) > th
        print(f"where {args.b} finds an action better by z > {th} ({int(sel.sum())}): mean difference there "
              f"{y[sel].mean() if sel.any() else 0:+.4f} by {args.b}, {x[sel].mean() if sel.any() else 0:+.4f} "
              f"by {args.a}")
    return 0


def simulate(args: argparse.Namespace) -> int:
    """Expected gain per decision of ``R`` rollouts and threshold ``z``, the file's differences taken as truth."""
    d = json.load(open(args.file, encoding="utf-8"))
    rng = np.random.default_rng(0)
    print(f"{args.file}: {len(d['positions'])} positions, {d['rollouts']} rollouts, rounds={d['rounds']}")
    print("gain per decision in thousandths of a win (share of decisions that leave the network)")
    print("R      " + "  ".join(f"z={z:<13g}" for z in args.z))
    for r in args.r:
        scale = np.sqrt(d["rollouts"] / r)
        cells = []
        for z in args.z:
            gain = switched = 0.0
            for _ in range(args.trials):
                for row in d["positions"]:
                    diffs = np.array([v for v, _ in _diffs(row).values()])
                    se = np.array([s for _, s in _diffs(row).values()]) * scale
                    est = diffs + rng.normal(size=len(diffs)) * se
                    j = int(np.argmax(est))
                    if est[j] > 0 and est[j] > z * se[j]:
                        gain += diffs[j]
                        switched += 1
            n = args.trials * len(d["positions"])
            cells.append(f"{gain / n * 1000:+.2f} ({switched / n:.3f})")
        print(f"{r:<6} " + "  ".join(f"{c:<15}" for c in cells))
    return 0


def main(argv: list[str] | None = None) -> int:
    """Command line: ``measure``, ``compare``, ``simulate`` (the module docstring)."""
    ap = argparse.ArgumentParser(prog="python -m tools.search_noise", description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="command", required=True)
    m = sub.add_parser("measure")
    m.add_argument("--net", default="ppo:2p", help="the network that plays the games and the rollouts")
    m.add_argument("--positions", type=int, default=400)
    m.add_argument("--rollouts", type=int, default=2048)
    m.add_argument("--rounds", type=int, default=100)
    m.add_argument("--seed", type=int, default=0)
    m.add_argument("--out", required=True)
    c = sub.add_parser("compare")
    c.add_argument("a")
    c.add_argument("b")
    s = sub.add_parser("simulate")
    s.add_argument("file")
    s.add_argument("-r", type=int, nargs="+", default=[32, 64, 128, 256, 512])
    s.add_argument("-z", type=float, nargs="+", default=[0, 1, 2, 3])
    s.add_argument("--trials", type=int, default=20)
    args = ap.parse_args(argv)
    return {"measure": measure, "compare": compare, "simulate": simulate}[args.command](args)


if __name__ == "__main__":
    sys.exit(main())
