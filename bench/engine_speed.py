"""Games per second: the naive baseline vs the scalar engine vs the batched engine, side by side.

Two-player games of ``threshold:0.2`` against itself, default rules, measured
in one process and alternating (naive, scalar, batched kernel, ``evaluate``
with the fast backend; repeated ``--repeats`` times) so that machine load
hits every engine alike.  The naive baseline (``bench/naive_engine.py``) and
the scalar engine play fewer games; every rate is games per second of wall
clock.  The batched engine's one-time costs are measured apart, each in a
fresh process: compiling the kernel with an empty Numba cache, and loading it
from the cache (what every later process pays on its first call).

Usage::

    python -m lama_dice.bench.engine_speed                      # about a minute on a quiet core
    python -m lama_dice.bench.engine_speed --repeats 5 --json bench-results/engine_speed.json
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from lama_dice.bench import naive_engine

SPEC = "threshold:0.2"


def _rate(games: int, fn: Callable[[], object]) -> float:
    t0 = time.perf_counter()
    fn()
    return games / (time.perf_counter() - t0)


def naive(games: int, seed: int) -> float:
    """Games/s of the naive baseline engine (:mod:`lama_dice.bench.naive_engine`)."""
    return _rate(games, lambda: naive_engine.play_games(games, 0.2, 2, seed))


def scalar(games: int, seed: int) -> float:
    """The reference :class:`LamaGame` engine, one game at a time, with the Python ``threshold:0.2`` agent."""
    from lama_dice.agents.registry import make_agent
    from lama_env.engine import LamaGame

    pol = make_agent(SPEC, seed=seed)

    def run() -> None:
        for s in range(games):
            g = LamaGame(2, seed=seed * 1_000_003 + s, record=False)
            while not g.game_over:
                g.step(pol.act(g, g.legal_actions()))

    return _rate(games, run)


def batched(games: int, seed: int) -> float:
    """The compiled kernel alone (:func:`lama_env.batched.play_batch`)."""
    from lama_dice.agents.native import play_batch

    return _rate(games, lambda: play_batch(2, [SPEC], games=games, seed=seed))


def evaluate_fast(games: int, seed: int) -> float:
    """``lama_dice.evaluation.evaluate.evaluate`` (what ``lama-dice evaluate`` runs) with the fast backend, warm."""
    from lama_dice.evaluation import evaluate

    def run() -> None:
        res = evaluate([SPEC, SPEC], num_players=2, games=games, seed=seed, backend="fast")
        assert res.backend == "fast"

    return _rate(games, run)


_COLD = """
import time
t0 = time.perf_counter()
from lama_dice.agents.native import play_batch
t1 = time.perf_counter()
play_batch(2, ["threshold:0.2", "random"], games=1, seed=0, log_games=[0])
t2 = time.perf_counter()
print(t1 - t0, t2 - t1)
"""


def one_time_costs() -> dict[str, float]:
    """Import and first-call seconds in fresh processes: empty Numba cache, then cached."""
    out: dict[str, float] = {}
    with tempfile.TemporaryDirectory() as cache:
        env = dict(os.environ, NUMBA_CACHE_DIR=cache)
        for label in ("compile", "cached"):
            run = subprocess.run([sys.executable, "-c", _COLD], env=env, capture_output=True, text=True,
                                 check=True)
            imp, first = (float(x) for x in run.stdout.split())
            out["import_s"] = imp
            out[f"first_call_{label}_s"] = first
    return out


def main(argv: list[str] | None = None) -> int:
    """Command line: measure every engine, print the rates and ratios, optionally write them as JSON."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=20000, help="games per batched measurement (default 20000)")
    parser.add_argument("--naive-games", type=int, default=2000, help="games per naive / scalar measurement")
    parser.add_argument("--repeats", type=int, default=3, help="alternating repetitions (default 3)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", help="also write the results to this JSON file")
    parser.add_argument("--skip-cold", action="store_true", help="do not measure the one-time costs")
    args = parser.parse_args(argv)

    cold = {} if args.skip_cold else one_time_costs()
    batched(1, 0), evaluate_fast(2, 0)  # load the kernel once (its cost is reported above)

    engines = {
        "naive": lambda s: naive(args.naive_games, s),
        "scalar": lambda s: scalar(args.naive_games, s),
        "batched": lambda s: batched(args.games, s),
        "evaluate_fast": lambda s: evaluate_fast(args.games, s),
    }
    rates: dict[str, list[float]] = {k: [] for k in engines}
    for r in range(args.repeats):
        for name, fn in engines.items():
            rates[name].append(fn(args.seed + r))
            print(f"  repeat {r}: {name:<14} {rates[name][-1]:>12,.0f} games/s", file=sys.stderr)
    med = {k: statistics.median(v) for k, v in rates.items()}
    # paired ratios (same repeat, so the same machine load), then their median
    ratio = {k: statistics.median(a / b for a, b in zip(rates[k], rates["naive"], strict=True)) for k in rates}
    result = {
        "players": 2, "agents": [SPEC, SPEC], "games": args.games, "naive_games": args.naive_games,
        "repeats": args.repeats, "games_per_s": med, "all_games_per_s": rates,
        "ratio_to_naive": ratio,
        **cold,
    }
    print(f"two-player {SPEC} vs {SPEC}, median of {args.repeats} alternating runs "
          f"(ratio: median of the per-repeat ratios):")
    for k in engines:
        print(f"  {k:<14} {med[k]:>12,.0f} games/s   {ratio[k]:>8.1f} x naive")
    if cold:
        print(f"  batched engine: import {cold['import_s']:.2f} s; first call {cold['first_call_compile_s']:.2f} s "
              f"with an empty Numba cache, {cold['first_call_cached_s']:.2f} s cached")
    if args.json:
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json).write_text(json.dumps(result, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
