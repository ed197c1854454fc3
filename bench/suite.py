"""Every benchmark of ``lama-dice bench``, as one JSON-ready report.

:func:`run_suite` runs the sections in a fixed order (those that import torch
last, so that ``workers=2`` forks cheaply) and returns::

    {"format": "lama-dice-bench/1", "meta": {...}, "sections": {name: {...}}, "targets": [...],
     "errors": {...}}

``targets`` lists the project's speed targets (the AEC env against leduc, evaluation against a
naive engine, the vector game and the vector env against their scalar counterparts, the vector
game against Pgx's leduc_holdem) with the
measured ratio (paired wall-clock ratios, medians over the repeats) and whether it is met.
A section that fails is reported under ``errors`` (one line) and the others
still run.
"""

from __future__ import annotations

import importlib.metadata
import os
import platform
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from . import aec_speed, eval_speed, first_use, pgx_speed, render_speed, train_speed, vector_speed
from .measure import load_average

FORMAT = "lama-dice-bench/1"
SECTIONS = ("aec", "vector", "pgx", "render", "evaluate", "kernel_load", "one_shot", "first_use", "scaling", "memory",
            "solver", "ppo_inference", "training")


@dataclass(frozen=True)
class Sizes:
    """How much work each section does (``FULL`` or ``QUICK``)."""

    aec_steps: int
    aec_slices: int
    eval_games: int
    naive_games: int
    one_shot_games: int
    one_shot_runs: int
    cold_compile: bool
    ppo_games: int
    scaling_games: int
    kernel_sizes: tuple[int, ...]
    chunk_sizes: tuple[int, ...]
    memory_games: int
    training: dict
    repeats: int
    heavy_repeats: int
    render_frames: int = 2000
    gif_frames: int = 300
    vector_steps: int = 200
    vector_scaling_envs: tuple[int, ...] = (1, 16, 256, 4096, 16384)
    vector_scaling_players: tuple[int, ...] = (1, 2, 3, 4, 5, 6)
    vector_scaling_agent_steps: int = 400_000
    pgx_games: tuple[str, ...] = pgx_speed.GAMES
    pgx_sweep: tuple[int, ...] = pgx_speed.SWEEP
    pgx_seconds: float = 1.0
    pgx_slices: int = 4
    first_use_cases: tuple[str, ...] = tuple(first_use.CASES)


FULL = Sizes(aec_steps=20000, aec_slices=20, eval_games=20000, naive_games=2000, one_shot_games=20000,
             one_shot_runs=3, cold_compile=True, ppo_games=512, scaling_games=2000,
             kernel_sizes=(10, 100, 1000, 10000, 100000), chunk_sizes=(1, 16, 128, 512), memory_games=20000,
             training=train_speed.FULL, repeats=5, heavy_repeats=3)
QUICK = Sizes(aec_steps=2000, aec_slices=2, eval_games=2000, naive_games=200, one_shot_games=2000,
              one_shot_runs=1, cold_compile=False, ppo_games=32, scaling_games=200,
              kernel_sizes=(10, 100, 1000), chunk_sizes=(1, 16, 128), memory_games=2000,
              training=train_speed.QUICK, repeats=1, heavy_repeats=1, render_frames=300, gif_frames=40,
              vector_steps=20, vector_scaling_envs=(16, 4096), vector_scaling_players=(2, 6),
              vector_scaling_agent_steps=40_000, pgx_games=("leduc_holdem",), pgx_sweep=(), pgx_seconds=0.3,
              pgx_slices=1, first_use_cases=("evaluate",))


def _versions() -> dict[str, str | None]:
    out: dict[str, str | None] = {}
    for pkg in ("lama-dice", "numpy", "numba", "gymnasium", "pettingzoo", "rlcard", "stable-baselines3",
                "sb3-contrib", "torch"):
        try:
            out[pkg] = importlib.metadata.version(pkg)
        except importlib.metadata.PackageNotFoundError:
            out[pkg] = None
    return out


def _git_commit(repo: Path) -> str | None:
    try:
        run = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=repo, capture_output=True, text=True,
                             timeout=10)
        return run.stdout.strip() or None if run.returncode == 0 else None
    except (OSError, subprocess.SubprocessError):
        return None


def run_suite(quick: bool = False, repeats: int | None = None, seed: int = 0,
              sections: tuple[str, ...] = SECTIONS, log: Callable[[str], None] | None = None) -> dict[str, Any]:
    """Run the benchmarks; ``repeats`` overrides every section's number of alternating repeats."""
    sz = QUICK if quick else FULL
    rep = repeats if repeats is not None else sz.repeats
    heavy = repeats if repeats is not None else sz.heavy_repeats
    say = log or (lambda _msg: None)
    repo = Path(__file__).resolve().parent.parent
    meta: dict[str, Any] = {
        "date_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "quick": quick, "repeats": rep, "heavy_repeats": heavy, "seed": seed,
        "python": platform.python_version(), "platform": platform.platform(),
        "cpu_count": os.cpu_count(), "load_average_before": load_average(),
        "versions": _versions(), "git_commit": _git_commit(repo),
    }
    plan: dict[str, Callable[[], dict[str, Any]]] = {
        "aec": lambda: aec_speed.run(sz.aec_steps, rep, seed, warmup=max(500, sz.aec_steps // 10),
                                     slices=sz.aec_slices, log=say),
        "vector": lambda: vector_speed.run(sz.aec_steps, sz.vector_steps, rep, seed,
                                           warmup=max(500, sz.aec_steps // 10), slices=sz.aec_slices,
                                           scaling_envs=sz.vector_scaling_envs,
                                           scaling_players=sz.vector_scaling_players,
                                           scaling_agent_steps=sz.vector_scaling_agent_steps, scaling_repeats=heavy,
                                           log=say),
        "pgx": lambda: pgx_speed.run(4096, sz.pgx_sweep, sz.pgx_games, sz.pgx_seconds, rep, sz.pgx_slices, heavy,
                                     seed, log=say),
        "render": lambda: render_speed.run(sz.render_frames, sz.gif_frames, rep, seed, log=say),
        "evaluate": lambda: eval_speed.compare_naive(sz.eval_games, sz.naive_games, rep, seed, log=say),
        "kernel_load": lambda: eval_speed.kernel_load(cold=sz.cold_compile),
        "one_shot": lambda: eval_speed.one_shot(sz.one_shot_games, sz.one_shot_runs),
        "first_use": lambda: first_use.run(cold=sz.cold_compile, cases=sz.first_use_cases, log=say),
        "scaling": lambda: eval_speed.scaling(sz.scaling_games, sz.kernel_sizes, sz.chunk_sizes, heavy, seed,
                                              log=say),
        "memory": lambda: eval_speed.memory(sz.memory_games),
        "solver": lambda: eval_speed.solver(heavy),
        "ppo_inference": lambda: eval_speed.ppo_inference(sz.ppo_games, (1, 64, 256), heavy, seed, log=say),
        "training": lambda: train_speed.run(sz.training, heavy, seed, log=say),
    }
    out: dict[str, Any] = {"format": FORMAT, "meta": meta, "sections": {}, "errors": {}}
    t_all = time.perf_counter()
    for name in SECTIONS:
        if name not in sections:
            continue
        say(f"{name} ...")
        t0 = time.perf_counter()
        try:
            res = plan[name]()
        except Exception as e:  # one failing section must not lose the others
            out["errors"][name] = f"{type(e).__name__}: {str(e).strip().splitlines()[0] if str(e).strip() else ''}"
            say(f"{name}: failed: {out['errors'][name]}")
            continue
        res["seconds"] = round(time.perf_counter() - t0, 2)
        out["sections"][name] = res
    meta["seconds"] = round(time.perf_counter() - t_all, 2)
    meta["load_average_after"] = load_average()
    out["targets"] = targets(out["sections"])
    return out


def targets(sections: dict[str, Any]) -> list[dict[str, Any]]:
    """The project's speed targets, from the sections that ran."""
    rows = []
    spec = (
        (("aec",), "env_vs_leduc", "AEC env agent-steps/s vs leduc_holdem_v4", aec_speed.TARGET),
        (("evaluate",), "evaluate_vs_naive", "evaluate games/s vs the naive engine", eval_speed.TARGET),
        (("vector",), "vector_vs_aec", "VectorGame agent-steps/s vs the AEC env", vector_speed.TARGET),
        (("vector", "env"), "vector_env_vs_sync", "vector env learner-steps/s vs SyncVectorEnv",
         vector_speed.ENV_TARGET),
        (("pgx",), "vector_vs_leduc_holdem", "VectorGame + sample_actions agent-steps/s vs Pgx leduc_holdem",
         pgx_speed.TARGET),
    )
    for path, key, what, target in spec:
        sec = path[0]
        where = sections.get(sec, {})
        for part in path[1:]:
            where = where.get(part, {})
        r = where.get("ratios", {}).get(key)
        if r is None:
            rows.append({"target": what, "goal": target, "ratio": None, "ratio_cpu": None, "met": None,
                         "note": sections.get(sec, {}).get("skipped") or "not measured"})
        else:
            rows.append({"target": what, "goal": target, "ratio": r["ratio"], "ratio_cpu": r.get("ratio_cpu"),
                         "met": bool(r["ratio"] >= target)})
    return rows
