"""Evaluation speed: the batched engine vs the naive one-game-at-a-time implementation, and more.

Sections (each a function returning a JSON-ready dict):

* :func:`compare_naive`: full two-player games/s of ``threshold:0.2`` against itself, alternating
  in one process: the naive baseline (``bench/naive_engine.py``), ``lama_dice.evaluation.evaluate.evaluate``
  (what ``lama-dice evaluate`` runs: the fast backend, kernel already loaded), the compiled
  kernel alone (:func:`lama_env.batched.play_batch`) and the scalar (``python``) backend.
* :func:`kernel_load`: the one-time cost of the compiled kernel in a fresh process (import,
  first call with the on-disk Numba cache; optionally with an empty cache: the compile).
* :func:`one_shot`: wall time of the command ``lama-dice evaluate --players 2 --agents
  threshold:0.2 threshold:0.2 --games G`` in a fresh process (start-up and kernel load included).
* :func:`ppo_inference`: games/s of a learned policy (a tiny untrained MaskablePPO checkpoint)
  under the scalar backend by ``chunk_size`` (games advanced in lockstep; one forward pass per
  policy per lockstep step), with the forward passes counted.
* :func:`scaling`: games/s by ``chunk_size`` (scalar backend), by games per kernel call
  (batched engine), and by ``workers`` (1 vs 2, scalar backend).
* :func:`memory`: peak memory of a 20,000-game evaluation, in a fresh process.
* :func:`solver`: the exact solo solver's solve time.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any, cast

from .measure import Sample, alternate, ratio_entry, summary, timed

SPEC = "threshold:0.2"
#: The target of the project: evaluation at least this many times the naive games/s.
TARGET = 50.0


def _naive() -> Any:
    from lama_dice.bench import naive_engine

    return naive_engine


def _subprocess_env(**extra: str) -> dict[str, str]:
    return dict(os.environ, **extra)


def _python(code: str, timeout: float = 600, **env: str) -> str:
    """Run ``code`` in a fresh interpreter (repo root as cwd) and return its stdout."""
    run = subprocess.run([sys.executable, "-c", code], env=_subprocess_env(**env),
                         capture_output=True, text=True, timeout=timeout)
    if run.returncode != 0:
        tail = (run.stderr or run.stdout).strip().splitlines()[-1:] or ["no output"]
        raise RuntimeError(f"benchmark subprocess failed: {tail[0]}")
    return run.stdout


# --------------------------------------------------------------------------- naive vs batched
def compare_naive(games: int = 20000, naive_games: int = 2000, repeats: int = 5, seed: int = 0,
                  log: Callable[[str], None] | None = None) -> dict[str, Any]:
    """Games/s of the naive engine, ``evaluate`` (fast backend), the kernel alone and the scalar backend."""
    from lama_dice.agents.native import play_batch
    from lama_dice.evaluation import evaluate
    from lama_dice.evaluation.compiled import warmup

    naive = _naive()
    warmup()  # its one-time cost is measured by kernel_load()
    evaluate([SPEC, SPEC], num_players=2, games=10, seed=seed)
    naive.play_games(20, 0.2, 2, seed)

    def run_eval(i: int) -> Sample:
        def go() -> dict:
            res = evaluate([SPEC, SPEC], num_players=2, games=games, seed=seed + i)
            return {"backend": res.backend}
        return timed(games, go)

    contenders = {
        "naive": lambda i: timed(naive_games, lambda: naive.play_games(naive_games, 0.2, 2, seed + i)),
        "evaluate": run_eval,
        "kernel": lambda i: timed(games, lambda: play_batch(2, [SPEC], games=games, seed=seed + i)),
        "python_backend": lambda i: timed(naive_games, lambda: evaluate(
            [SPEC, SPEC], num_players=2, games=naive_games, seed=seed + i, backend="python")),
    }
    samples = alternate(contenders, repeats, log=log)
    backend = samples["evaluate"][0].extra.get("backend")
    return {
        "what": f"full two-player games/s, {SPEC} vs {SPEC}, default rules, alternating runs in one process "
                "(the kernel loaded beforehand: see kernel_load)",
        "games": games, "naive_games": naive_games, "repeats": repeats,
        "evaluate_backend": backend,
        "results": {k: summary(v, "game") for k, v in samples.items()},
        "ratios": {
            "evaluate_vs_naive": ratio_entry(samples["evaluate"], samples["naive"], "evaluate", "naive", TARGET),
            "kernel_vs_naive": ratio_entry(samples["kernel"], samples["naive"], "kernel", "naive"),
            "python_backend_vs_naive": ratio_entry(samples["python_backend"], samples["naive"],
                                                   "python_backend", "naive"),
        },
    }


_LOAD = """
import time, json
t0 = time.perf_counter()
from lama_dice.evaluation.compiled import warmup
t1 = time.perf_counter()
first = warmup()
t2 = time.perf_counter()
again = warmup()
print(json.dumps({"import_s": t1 - t0, "first_call_s": first, "second_call_s": again}))
"""


def kernel_load(cold: bool = False) -> dict[str, Any]:
    """Seconds to import the batched engine and load its kernel in a fresh process.

    ``cold``: also measure the first call with an empty Numba cache (the compile a fresh
    install pays once).
    """
    out: dict[str, Any] = {"what": "fresh process: import lama_env.batched (via lama_dice.evaluation.compiled), "
                                   "first call (load the compiled kernel from the on-disk Numba cache), second call"}
    out["cached"] = json.loads(_python(_LOAD).strip().splitlines()[-1])
    if cold:
        with tempfile.TemporaryDirectory() as cache:
            out["empty_cache"] = json.loads(_python(_LOAD, NUMBA_CACHE_DIR=cache).strip().splitlines()[-1])
    return out


def _command() -> list[str]:
    """``lama-dice`` as this interpreter runs it: never a ``lama-dice`` found on ``PATH``."""
    return [sys.executable, "-m", "lama_dice"]


def one_shot(games: int = 20000, runs: int = 1) -> dict[str, Any]:
    """Wall seconds of the whole ``lama-dice evaluate`` command in a fresh process."""
    import time

    args = ["evaluate", "--players", "2", "--agents", SPEC, SPEC, "--games", str(games), "--no-progress"]
    walls = []
    for _ in range(runs):
        t0 = time.perf_counter()
        run = subprocess.run(_command() + args, env=_subprocess_env(), capture_output=True, text=True,
                             timeout=600)
        walls.append(time.perf_counter() - t0)
        if run.returncode != 0:
            raise RuntimeError(f"lama-dice evaluate failed: {(run.stderr or run.stdout).strip()[-200:]}")
    walls.sort()
    wall = walls[len(walls) // 2]
    return {"command": "lama-dice " + " ".join(args), "games": games, "runs": runs,
            "wall_s": wall, "all_wall_s": walls, "games_per_s": games / wall}


# --------------------------------------------------------------------------- learned policies
def make_tiny_checkpoint(directory: str | os.PathLike, seed: int = 0) -> Path:
    """Save an untrained two-player MaskablePPO policy ([64, 64]) with its sidecar; return the .zip path."""
    import gymnasium as gym
    from sb3_contrib import MaskablePPO

    import lama_env  # noqa: F401  (registers LamaDice-v1)
    from lama_dice.agents.ppo import write_sidecar
    from lama_env.gym_env import LamaDiceEnv

    env = gym.make("LamaDice-v1", num_players=2, disable_env_checker=True)
    model = MaskablePPO("MlpPolicy", env, policy_kwargs={"net_arch": [64, 64]}, seed=seed, device="cpu",
                        n_steps=64, batch_size=64)
    path = Path(directory) / "tiny.zip"
    model.save(path)
    rules = cast(LamaDiceEnv, env.unwrapped).rules
    write_sidecar(path, num_players=2, rules=rules.to_dict(), config="bench-tiny", timesteps=0, policy=model.policy)
    env.close()
    return path


class _ForwardCounter:
    """Counts the forward passes (and rows) of every learned network while installed.

    Those are :class:`lama_dice.agents.mlp.MLP` (loaded networks, on NumPy) and
    :class:`lama_dice.agents.agentfile.MLPActor` (in-memory torch networks).
    """

    def __init__(self) -> None:
        self.calls = 0
        self.rows = 0

    def __enter__(self) -> _ForwardCounter:
        from lama_dice.agents import agentfile, mlp

        # Any: their method is patched below, which mypy forbids on the classes
        self._classes = [cast(Any, mlp.MLP), cast(Any, agentfile.MLPActor)]
        self._orig = [c.logits for c in self._classes]
        counter = self

        def counting(orig: Any) -> Any:
            def logits(actor: Any, obs: Any) -> Any:
                counter.calls += 1
                counter.rows += len(obs)
                return orig(actor, obs)
            return logits

        for cls, orig in zip(self._classes, self._orig, strict=True):
            cls.logits = counting(orig)
        return self

    def __exit__(self, *exc: Any) -> None:
        for cls, orig in zip(self._classes, self._orig, strict=True):
            cls.logits = orig


def ppo_inference(games: int = 512, chunk_sizes: tuple[int, ...] = (1, 64, 256), repeats: int = 3,
                  seed: int = 0, log: Callable[[str], None] | None = None) -> dict[str, Any]:
    """Games/s of ``ppo:tiny`` vs ``threshold:0.2`` by ``chunk_size`` (scalar backend, batched inference)."""
    try:
        import sb3_contrib  # noqa: F401
        import torch  # noqa: F401

        import lama_dice.agents.ppo  # noqa: F401
    except ImportError as e:
        return {"skipped": f"learned-policy inference skipped: {e}"}
    from lama_dice.evaluation import evaluate

    with tempfile.TemporaryDirectory() as tmp:
        ckpt = make_tiny_checkpoint(tmp, seed)
        agents_ = [f"ppo:{ckpt}", SPEC]
        evaluate(agents_, num_players=2, games=8, seed=seed, chunk_size=8)  # load the checkpoint once
        counts: dict[int, tuple[int, int]] = {}

        def contender(c: int) -> Callable[[int], Sample]:
            def go() -> dict:
                with _ForwardCounter() as fc:
                    evaluate(agents_, num_players=2, games=games, seed=seed, chunk_size=c)
                counts[c] = (fc.calls, fc.rows)
                return {}
            return lambda i: timed(games, go)

        samples = alternate({f"chunk_{c}": contender(c) for c in chunk_sizes}, repeats, log=log)
    results = {}
    for c in chunk_sizes:
        res = summary(samples[f"chunk_{c}"], "game")
        calls, rows = counts[c]
        res.update(chunk_size=c, forward_passes=calls, decisions=rows,
                   mean_batch=rows / calls if calls else None)
        results[f"chunk_{c}"] = res
    lo, hi = f"chunk_{min(chunk_sizes)}", f"chunk_{max(chunk_sizes)}"
    return {
        "what": f"games/s of an untrained MaskablePPO policy ([64, 64]) vs {SPEC}, scalar backend: at each "
                "lockstep step of a chunk, one act_batch call (one forward pass) per policy for all its games",
        "games": games, "repeats": repeats, "results": results,
        "ratios": {f"{hi}_vs_{lo}": ratio_entry(samples[hi], samples[lo], hi, lo)},
    }


# --------------------------------------------------------------------------- scaling
def scaling(games: int = 2000, kernel_sizes: tuple[int, ...] = (10, 100, 1000, 10000, 100000),
            chunk_sizes: tuple[int, ...] = (1, 16, 128, 512), repeats: int = 3, seed: int = 0,
            log: Callable[[str], None] | None = None) -> dict[str, Any]:
    """Throughput by scalar ``chunk_size``, by games per kernel call, and by ``workers`` (1 vs 2)."""
    from lama_dice.agents.native import play_batch
    from lama_dice.evaluation import evaluate
    from lama_dice.evaluation.compiled import warmup

    warmup()
    chunk = alternate({f"chunk_{c}": (lambda size: lambda i: timed(games, lambda: evaluate(
        [SPEC, SPEC], num_players=2, games=games, seed=seed + i, backend="python", chunk_size=size)))(c)
        for c in chunk_sizes}, repeats, log=log)
    kernel = alternate({f"games_{k}": (lambda n: lambda i: timed(n, lambda: play_batch(
        2, [SPEC], games=n, seed=seed + i)))(k) for k in kernel_sizes}, repeats, log=log)
    workers = alternate({f"workers_{w}": (lambda nw: lambda i: timed(games, lambda: evaluate(
        [SPEC, SPEC], num_players=2, games=games, seed=seed + i, backend="python", workers=nw)))(w)
        for w in (1, 2)}, repeats, log=log)
    return {
        "what": f"{SPEC} vs {SPEC}, two players; scalar backend: games/s by chunk_size (games advanced in "
                "lockstep) and by worker processes; batched engine: games/s by games per play_batch call",
        "games": games, "repeats": repeats, "cpu_count": os.cpu_count(),
        "python_chunk_size": {k: summary(v, "game") for k, v in chunk.items()},
        "kernel_games_per_call": {k: summary(v, "game") for k, v in kernel.items()},
        "workers": {k: summary(v, "game") for k, v in workers.items()},
        "ratios": {"workers_2_vs_1": ratio_entry(workers["workers_2"], workers["workers_1"],
                                                 "workers_2", "workers_1")},
    }


# --------------------------------------------------------------------------- memory, solver
_MEMORY = """
import json, resource, sys, time, tracemalloc


def peak_kib():
    # VmHWM: this process's own peak RSS. ru_maxrss would also count the parent's peak at fork
    # (Linux keeps it across exec), so a bench that trained a network before would inflate it.
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


from lama_dice.evaluation import evaluate
from lama_dice.evaluation.compiled import warmup
warmup()
evaluate(["threshold:0.2", "threshold:0.2"], num_players=2, games=10, backend=sys.argv[2])
base = peak_kib()
tracemalloc.start()
t0 = time.perf_counter()
res = evaluate(["threshold:0.2", "threshold:0.2"], num_players=2, games=int(sys.argv[1]), backend=sys.argv[2])
dt = time.perf_counter() - t0
cur, peak = tracemalloc.get_traced_memory()
tracemalloc.stop()
after = peak_kib()
print(json.dumps({"backend": res.backend, "maxrss_before_kib": base, "maxrss_after_kib": after,
                  "tracemalloc_peak_bytes": peak, "seconds_under_tracemalloc": dt}))
"""


def memory(games: int = 20000, backends: tuple[str, ...] = ("auto",)) -> dict[str, Any]:
    """Peak memory of a ``games``-game evaluation in a fresh process, per backend.

    ``maxrss`` (the process's peak resident set, KiB on Linux) before and after the
    evaluation, and tracemalloc's peak of the Python-level allocations it made.
    """
    out: dict[str, Any] = {"what": f"fresh process, {SPEC} vs {SPEC}, {games} games: peak RSS (VmHWM, else "
                                   "ru_maxrss) after imports and a warm-up, then after the evaluation; "
                                   "tracemalloc peak of the evaluation's allocations",
                           "games": games}
    for b in backends:
        code = f"import sys; sys.argv = ['x', {str(games)!r}, {b!r}]\n" + _MEMORY
        out[b] = json.loads(_python(code).strip().splitlines()[-1])
    return out


def solver(repeats: int = 3) -> dict[str, Any]:
    """Seconds to solve the solo round exactly (every display, then the deal average), fresh solver each time."""
    try:
        from lama_dice.agents.solver import SoloSolver
    except ImportError as e:
        return {"skipped": f"agents/solver.py is not available: {e}"}
    from lama_env.rules import RulesConfig

    samples = []
    value = states = None
    for _ in range(repeats):
        def go() -> dict:
            nonlocal value, states
            s = SoloSolver(RulesConfig())
            states = s.solve_all()
            value = s.expected_round_points()
            return {}
        samples.append(timed(1, go))
    walls = sorted(s.wall_s for s in samples)
    return {"what": "SoloSolver(RulesConfig()).solve_all() + expected_round_points(), default rules",
            "seconds": walls[len(walls) // 2], "all_seconds": walls, "first_run_s": samples[0].wall_s,
            "states": states, "expected_round_points": value}
