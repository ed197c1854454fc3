"""Side-by-side speed of the compiled kernels of two checkouts (e.g. main and a branch), alternating.

Each measurement runs in a fresh process with ``PYTHONPATH`` set to one checkout, the
two checkouts alternating, ``--repeats`` times; the table shows the median of each and
the ratio new / old.  Rates are per second of the process's CPU time
(:func:`time.process_time`: steadier than wall time on a loaded machine; every contender is
single-threaded), load times in wall seconds.  Measurements:

* ``evaluate``: games/s of ``evaluate(["threshold:0.2"] * 2, games=20000)`` (the fast
  backend, kernel loaded beforehand), best of three calls;
* ``vector``: ``VectorGame(4096, 2)`` agent-steps/s, random legal actions sampled with
  NumPy (the bench's ``vector`` loop), and of ``step()`` alone;
* ``env``: learner-steps/s of the Gymnasium vector env at 256 sub-envs against
  ``threshold:0.2`` (random legal learner actions);
* ``load``: seconds to import and first call the batched engine (``warmup()``) and the
  vector game (first ``reset`` + ``step``) in a fresh process, the Numba cache warm;
  ``load-cold``: the same with an empty Numba cache (the compile a fresh install pays once).

Usage (from the new checkout, with a copy of the old one, e.g. ``git archive main``)::

    python -m tools.kernel_speed --old /tmp/main-copy --new . --repeats 3
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

_CODE = {
    "evaluate": """
import time, json
from lama_dice.evaluation import evaluate
from lama_dice.evaluation.compiled import warmup
warmup(); evaluate(["threshold:0.2"] * 2, num_players=2, games=100, seed=0)
best = 0.0
for i in range(3):
    t = time.process_time(); evaluate(["threshold:0.2"] * 2, num_players=2, games=20000, seed=i)
    best = max(best, 20000 / (time.process_time() - t))
print(json.dumps({"evaluate games/s": best}))
""",
    "vector": """
import time, json
import numpy as np
from lama_env.vector import VectorGame
vg = VectorGame(4096, 2, seed=0); vg.reset()
rng = np.random.default_rng(0)
def sample(mask):
    u = rng.random(mask.shape, dtype=np.float32); u += mask; return np.argmax(u, axis=1)
for _ in range(20): vg.step(sample(vg.action_mask))
steps = 300; t_step = 0.0
t0 = time.process_time()
for _ in range(steps):
    a = sample(vg.action_mask)
    t = time.process_time(); vg.step(a); t_step += time.process_time() - t
dt = time.process_time() - t0
print(json.dumps({"vector agent-steps/s (numpy sampler)": 4096 * steps / dt,
                  "vector step() alone /s": 4096 * steps / t_step}))
""",
    "env": """
import time, json
import numpy as np
from lama_env.vector_env import LamaDiceVectorEnv
env = LamaDiceVectorEnv(num_envs=256, num_players=2, opponents=["threshold:0.2"])
obs, info = env.reset(seed=0)
rng = np.random.default_rng(0)
def go(k):
    for _ in range(k):
        u = rng.random((256, 129)) + env.action_masks(); env.step(np.argmax(u, axis=1))
go(20)
t = time.process_time(); go(1000); dt = time.process_time() - t
print(json.dumps({"env learner-steps/s (256)": 256 * 1000 / dt}))
""",
    "load": """
import time, json
t0 = time.perf_counter()
from lama_dice.evaluation.compiled import warmup
first = warmup()
t1 = time.perf_counter()
import numpy as np
from lama_env.vector import VectorGame
vg = VectorGame(8, 2, seed=0); vg.reset(); vg.step(np.zeros(8, dtype=np.int64))
t2 = time.perf_counter()
print(json.dumps({"load: import + warmup() s": t1 - t0, "load: vector game first step s": t2 - t1}))
""",
}


def _run(root: str, code: str, cold: bool = False) -> dict[str, float]:
    env = {**os.environ, "PYTHONPATH": os.path.abspath(root)}
    if cold:
        with tempfile.TemporaryDirectory() as cache:
            out = _run_in({**env, "NUMBA_CACHE_DIR": cache}, root, code)
        return {k.replace("load:", "compile (empty Numba cache):"): v for k, v in out.items()}
    return _run_in(env, root, code)


def _run_in(env: dict[str, str], root: str, code: str) -> dict[str, float]:
    out = subprocess.run([sys.executable, "-c", code], env=env, cwd=os.path.abspath(root), capture_output=True,
                         text=True, timeout=900)
    if out.returncode:
        raise RuntimeError(f"{root}: {out.stderr.strip().splitlines()[-1:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> int:
    """Command line: measure, alternating, and print the table (and JSON with ``--json``)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--old", required=True, help="the old checkout (its root)")
    parser.add_argument("--new", default=".", help="the new checkout (its root)")
    parser.add_argument("--repeats", type=int, default=3)
    names = [*sorted(_CODE), "load-cold"]
    parser.add_argument("--only", nargs="*", choices=names, default=names)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    results: dict[str, dict[str, list[float]]] = {"old": {}, "new": {}}
    for name in args.only:
        for _ in range(max(1, args.repeats)):
            for which in ("old", "new"):
                code = _CODE[name.replace("-cold", "")]
                for k, v in _run(getattr(args, which), code, name.endswith("-cold")).items():
                    results[which].setdefault(k, []).append(v)
    print(f"{'measure':<42}{'old (median)':>16}{'new (median)':>16}{'new/old':>9}")
    for k in results["old"]:
        o, n = statistics.median(results["old"][k]), statistics.median(results["new"][k])
        print(f"{k:<42}{o:>16,.3f}{n:>16,.3f}{n / o:>9.3f}")
    if args.json:
        print(json.dumps(results))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
