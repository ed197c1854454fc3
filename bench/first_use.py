"""The first minute: how long the first evaluation and the first vector env take, cold and warm.

Each case runs in a fresh process (``python -m lama_dice ...`` or ``python -c ...``):

* ``evaluate``: ``lama-dice evaluate --agents threshold:0.2 random --games 1000`` (the fast
  backend: the compiled evaluation kernel);
* ``evaluate_shipped``: ``lama-dice evaluate --agents ppo:2p threshold:0.2 --games 100`` (a
  shipped network: the python backend, whose ``LamaGame`` steps through the compiled step of
  ``lama_env._game``);
* ``vector_game``: import :mod:`lama_env.vector`, ``VectorGame(256)``, ``reset`` and 20
  steps of random legal actions;
* ``make_vec``: ``gymnasium.make_vec("LamaDice-v1", num_envs=16,
  vectorization_mode="vector_entry_point")``, ``reset`` and 20 steps of random legal actions.

*Cold* runs with an empty Numba cache (``NUMBA_CACHE_DIR`` a new empty folder: the compile a
fresh install pays once); *warm* runs next, in a new process with that cache filled.  Wall
seconds and the CPU seconds of the child process (``resource.getrusage``) are reported, the
number of compiled functions in the cache after the cold run, and (for the commands) whether the
CLI printed its one-line compile note (:mod:`lama_dice.cli.jit_note`).  Without
``cold`` (``--quick``) each case runs twice with the usual cache and the second run is the
warm figure.
"""

from __future__ import annotations

import os
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from typing import Any

#: The note's first words (lama_dice.cli.jit_note).
NOTE_START = "lama-dice: first use: compiling"

_VECTOR_GAME = """
import time
t0 = time.perf_counter()
import numpy as np
from lama_env.vector import VectorGame
g = VectorGame(256, num_players=2, seed=0)
g.reset()
rng = np.random.default_rng(0)
for _ in range(20):
    m = g.action_mask
    g.step((rng.random(m.shape) + m).argmax(axis=1))
print(time.perf_counter() - t0)
"""

_MAKE_VEC = """
import time
t0 = time.perf_counter()
import numpy as np
import gymnasium as gym
import lama_env
env = gym.make_vec("LamaDice-v1", num_envs=16, vectorization_mode="vector_entry_point")
obs, info = env.reset(seed=0)
rng = np.random.default_rng(0)
for _ in range(20):
    m = info["action_mask"]
    obs, r, term, trunc, info = env.step((rng.random(m.shape) + m).argmax(axis=1))
env.close()
print(time.perf_counter() - t0)
"""

#: name -> (what, the argv after the interpreter)
CASES: dict[str, tuple[str, list[str]]] = {
    "evaluate": ("lama-dice evaluate --agents threshold:0.2 random --games 1000 (compiled kernel)",
                 ["-m", "lama_dice", "evaluate", "--agents", "threshold:0.2", "random", "--games", "1000",
                  "--no-progress"]),
    "evaluate_shipped": ("lama-dice evaluate --agents ppo:2p threshold:0.2 --games 100 (python backend: LamaGame)",
                         ["-m", "lama_dice", "evaluate", "--agents", "ppo:2p", "threshold:0.2", "--games", "100",
                          "--no-progress"]),
    "vector_game": ("import lama_env.vector; VectorGame(256): reset + 20 steps", ["-c", _VECTOR_GAME]),
    "make_vec": ("gym.make_vec('LamaDice-v1', num_envs=16, vectorization_mode='vector_entry_point'): "
                 "reset + 20 steps", ["-c", _MAKE_VEC]),
}


def _child_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def run_once(argv: Sequence[str], cache: str | None) -> dict[str, Any]:
    """Run ``python ARGV`` in a fresh process (Numba cache ``cache``; None: the usual one); time it."""
    env = dict(os.environ)
    if cache is not None:
        env["NUMBA_CACHE_DIR"] = cache
    cpu0, t0 = _child_cpu(), time.perf_counter()
    run = subprocess.run([sys.executable, *argv], env=env, capture_output=True, text=True, timeout=900)
    wall, cpu = time.perf_counter() - t0, _child_cpu() - cpu0
    if run.returncode != 0:
        tail = (run.stderr or run.stdout).strip().splitlines()[-1:] or ["no output"]
        raise RuntimeError(f"first-use case failed: {tail[0]}")
    out: dict[str, Any] = {"wall_s": round(wall, 3), "cpu_s": round(cpu, 3), "note": NOTE_START in run.stderr}
    if cache is not None:  # the compiled functions in the cache after the run (one index file each)
        out["cached_functions"] = sum(name.endswith(".nbi") for _, _, names in os.walk(cache) for name in names)
    return out


def run(cold: bool = True, cases: Sequence[str] = tuple(CASES),
        log: Callable[[str], None] | None = None) -> dict[str, Any]:
    """Cold (empty Numba cache) and warm (cache filled) seconds of each case, each in fresh processes."""
    say = log or (lambda _msg: None)
    out: dict[str, Any] = {
        "what": "fresh processes, wall and CPU seconds of the whole process; cold: an empty Numba cache "
                "(NUMBA_CACHE_DIR a new folder, in this environment); warm: the same cache, filled",
        "cold_measured": cold, "results": {}}
    for name in cases:
        what, argv = CASES[name]
        say(f"first_use: {name}")
        entry: dict[str, Any] = {"what": what}
        if cold:
            with tempfile.TemporaryDirectory(prefix="lama-dice-bench-cache-") as cache:
                entry["cold"] = run_once(argv, cache)
                entry["warm"] = run_once(argv, cache)
        else:
            run_once(argv, None)  # fills the usual cache if it is empty
            entry["warm"] = run_once(argv, None)
        out["results"][name] = entry
    return out
