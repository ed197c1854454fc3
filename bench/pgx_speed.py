"""Random play on the vector game beside Pgx (JAX), agent-steps/s, each contender in its own process.

The loop of every contender is the same: a uniformly random legal action for every game,
one vector step, the games that end reset in place; every game's decision counts as one
agent-step (``batch`` per vector step).  The contenders:

* ``vector``: ``VectorGame(batch, num_players=2)`` (:mod:`lama_env.vector`), the loop
  ``a = vg.sample_actions(); vg.step(a)``: the random legal actions drawn inside the
  compiled kernel from the games' own streams.
* ``vector_numpy``: the same game with the NumPy sampler of
  :func:`lama_dice.bench.vector_speed.sample_actions` (``argmax`` of uniform noise plus the
  action mask) instead of ``sample_actions``.
* ``pgx:leduc_holdem`` and ``pgx:backgammon``: ``env = pgx.make(name)``; the first states by
  ``jax.jit(jax.vmap(env.init))``; then one ``jax.jit`` call per vector step of a function
  that draws the actions (``jax.random.categorical`` over logits 0 where legal, ``-inf``
  elsewhere) and applies ``jax.vmap(pgx.experimental.auto_reset(env.step, env.init))`` (the
  step with its observation, autoreset).  The states stay on JAX's CPU device; the loop
  blocks on the result at the end of every chunk of steps.

Each contender runs in a worker process of its own (``python -m lama_dice.bench.pgx_speed
--worker KIND``), started once and driven over a pipe: it builds its game and compiles it
(the compile time is reported apart, never in the rates), then plays on request for a given
number of seconds and reports the steps, the wall-clock seconds and the CPU seconds of its
process (every thread: JAX's CPU backend runs its own thread pool, the Numba kernel one
thread).  Only one worker plays at a time (the others wait on their pipes), in turn,
``repeats`` x ``slices`` times (:func:`lama_dice.bench.measure.alternate`), so that neither
steals the other's cores and the machine's load hits all of them alike; ratios are paired,
by wall clock.  A sweep of batch sizes compares ``vector``, ``vector_numpy`` and Pgx's
``leduc_holdem`` the same way.

What differs, honestly: these are different games.  Leduc hold'em is a two-player poker
of 3 actions and a few decisions per game; backgammon is a stochastic two-player game with
a large action space; a game of *Don't L.L.A.M.A. Dice* runs several rounds of dice,
hands and discards (129 actions, an observation of ``observation_size(2)`` floats).  A
``VectorGame`` step also checks that every action is legal (Pgx ends the game with a
penalty on an illegal one).  Both produce each game's observation, action mask, current
player and rewards at every step.

Needs ``jax`` and ``pgx`` (``pip install "lama-dice[bench-pgx]"``, or ``make bench-pgx``);
without them the section is skipped with a one-line note.  Run alone::

    python -m lama_dice.bench.pgx_speed --batch 4096 --repeats 5
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import json
import math
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from functools import partial
from typing import IO, Any

import numpy as np

from .measure import Sample, alternate, load_average, median, ratio_entry, summary

#: ``vector`` (VectorGame + sample_actions) should reach at least this many times Pgx leduc_holdem's steps/s.
TARGET = 1.0
#: Pgx's games of the comparison.
GAMES = ("leduc_holdem", "backgammon")
#: The batch sizes of the sweep (``vector``, ``vector_numpy`` and Pgx ``leduc_holdem``).
SWEEP = (256, 1024, 4096, 16384)
#: What a contender's name means, for the tables.
LABELS = {
    "vector": "VectorGame + sample_actions()",
    "vector_numpy": "VectorGame + NumPy sampler",
    "pgx:leduc_holdem": "Pgx leduc_holdem",
    "pgx:backgammon": "Pgx backgammon",
}


def missing_modules() -> list[str]:
    """The modules of the Pgx side that are not installed (``jax``, ``pgx``)."""
    return [m for m in ("jax", "pgx") if importlib.util.find_spec(m) is None]


# ----------------------------------------------------------------------------- the worker side
class UnavailableError(Exception):
    """A contender that cannot run here (reported as a note, not as an error)."""


def _vector_player(batch: int, seed: int, numpy_sampler: bool) -> Callable[[int], float]:
    """``play(n)``: ``n`` vector steps of random legal actions on ``VectorGame(batch, 2)``; the seconds sampling."""
    from lama_env.vector import VectorGame

    from .vector_speed import sample_actions

    vg = VectorGame(batch, 2, seed=seed)
    vg.reset()
    clock = time.perf_counter
    if numpy_sampler:
        rng = np.random.default_rng(seed)

        def play_numpy(n: int) -> float:
            inside = 0.0
            for _ in range(n):
                t0 = clock()
                a = sample_actions(rng, vg.action_mask)
                inside += clock() - t0
                vg.step(a)
            return inside

        return play_numpy
    if not hasattr(vg, "sample_actions"):
        raise UnavailableError("VectorGame.sample_actions() is not in this version of lama_env")

    def play(n: int) -> float:
        inside = 0.0
        for _ in range(n):
            t0 = clock()
            a = vg.sample_actions()
            inside += clock() - t0
            vg.step(a)
        return inside

    return play


def _pgx_player(name: str, batch: int, seed: int) -> Callable[[int], float]:
    """``play(n)``: ``n`` jitted vector steps of Pgx's ``name`` (sampler, step, autoreset), then block; NaN."""
    import jax
    import jax.numpy as jnp
    import pgx
    from pgx.experimental import auto_reset

    env = pgx.make(name)
    step = jax.vmap(auto_reset(env.step, env.init))

    @jax.jit
    def one_step(state: Any, key: Any) -> tuple[Any, Any]:
        key, k_act, k_step = jax.random.split(key, 3)
        logits = jnp.where(state.legal_action_mask, 0.0, -jnp.inf)
        action = jax.random.categorical(k_act, logits, axis=-1)
        return step(state, action, jax.random.split(k_step, batch)), key

    key, k0 = jax.random.split(jax.random.PRNGKey(seed))
    box = [jax.jit(jax.vmap(env.init))(jax.random.split(k0, batch)), key]

    def play(n: int) -> float:
        state, k = box
        for _ in range(n):
            state, k = one_step(state, k)
        jax.block_until_ready(state)
        box[0], box[1] = state, k
        return math.nan  # the sampler is fused into the jitted step

    return play


def _versions(kind: str) -> dict[str, Any]:
    pkgs = ("jax", "jaxlib", "pgx") if kind.startswith("pgx:") else ("numpy", "numba")
    out: dict[str, Any] = {p: importlib.metadata.version(p) for p in pkgs}
    if kind.startswith("pgx:"):
        import jax

        out["backend"] = jax.default_backend()
        out["devices"] = [str(d) for d in jax.devices()]
    return out


class _Worker:
    """The worker process's state: one contender at one batch size."""

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self.play: Callable[[int], float] | None = None
        self.chunk = 1

    def setup(self, batch: int, seed: int) -> dict[str, Any]:
        t0 = time.perf_counter()
        if self.kind.startswith("pgx:"):
            import jax  # noqa: F401  (the import apart from the compile time)
            import pgx  # noqa: F401
        elif self.kind in ("vector", "vector_numpy"):
            import lama_env.vector  # noqa: F401
        else:
            raise ValueError(f"unknown contender {self.kind!r}")
        t1 = time.perf_counter()
        self.play = (_pgx_player(self.kind[4:], batch, seed) if self.kind.startswith("pgx:")
                     else _vector_player(batch, seed, self.kind == "vector_numpy"))
        self.play(1)  # the first call compiles (JAX), or loads the cached kernel (Numba)
        t2 = time.perf_counter()
        n = 1
        while True:  # a chunk of about 20 ms between the checks of the clock
            t = time.perf_counter()
            self.play(n)
            if time.perf_counter() - t >= 0.02 or n >= 4096:
                break
            n *= 2
        self.chunk = n
        return {"import_s": t1 - t0, "compile_s": t2 - t1, "chunk": n, "versions": _versions(self.kind)}

    def run(self, seconds: float, batch: int) -> dict[str, Any]:
        if self.play is None:
            raise ValueError("run before setup")
        steps, sampling = 0, 0.0
        c0 = time.process_time()
        t0 = time.perf_counter()
        while True:
            sampling += self.play(self.chunk)
            steps += self.chunk
            wall = time.perf_counter() - t0
            if wall >= seconds:
                break
        return {"steps": steps, "work": steps * batch, "wall_s": wall, "cpu_s": time.process_time() - c0,
                "sample_s": None if math.isnan(sampling) else sampling}


def worker_main(kind: str, stdin: IO[str] | None = None, stdout: IO[str] | None = None) -> int:
    """Serve one contender: JSON requests, one a line (``setup``, ``run``, ``quit``), one JSON reply a line."""
    src, dst = stdin or sys.stdin, stdout or sys.stdout
    w = _Worker(kind)
    batch = 0
    for line in src:
        req = json.loads(line)
        try:
            if req["cmd"] == "quit":
                break
            if req["cmd"] == "setup":
                batch = int(req["batch"])
                reply = w.setup(batch, int(req["seed"]))
            else:
                reply = w.run(float(req["seconds"]), batch)
        except UnavailableError as e:
            reply = {"unavailable": str(e)}
        except Exception as e:  # the parent reports it; the worker stays up
            msg = str(e).strip().splitlines()
            reply = {"error": f"{type(e).__name__}: {msg[0] if msg else ''}"}
        dst.write(json.dumps(reply) + "\n")
        dst.flush()
    return 0


# ----------------------------------------------------------------------------- the parent side
class WorkerError(RuntimeError):
    """A worker process failed (its message, or the last line of its stderr)."""


class Worker:
    """A contender's worker process, driven one request at a time."""

    def __init__(self, kind: str, python: str | None = None) -> None:
        """Start ``python -m lama_dice.bench.pgx_speed --worker kind`` (``python``: this interpreter)."""
        self.kind = kind
        self._err = tempfile.TemporaryFile(mode="w+")
        self.proc = subprocess.Popen([python or sys.executable, "-m", "lama_dice.bench.pgx_speed", "--worker", kind],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self._err, text=True,
                                     bufsize=1)

    def request(self, **req: Any) -> dict[str, Any]:
        """Send one request and wait for its reply; a worker's error raises :class:`WorkerError`."""
        assert self.proc.stdin is not None and self.proc.stdout is not None
        try:
            self.proc.stdin.write(json.dumps(req) + "\n")
            self.proc.stdin.flush()
            line = self.proc.stdout.readline()
        except OSError:
            line = ""
        if not line:
            self._err.seek(0)
            tail = [x for x in self._err.read().splitlines() if x.strip()]
            raise WorkerError(f"{self.kind} worker stopped: {tail[-1] if tail else 'no message'}")
        reply: dict[str, Any] = json.loads(line)
        if "error" in reply:
            raise WorkerError(f"{self.kind}: {reply['error']}")
        return reply

    def close(self) -> None:
        """Ask the worker to stop, and wait for it (kill it after 10 s)."""
        try:
            if self.proc.stdin is not None:
                self.proc.stdin.write(json.dumps({"cmd": "quit"}) + "\n")
                self.proc.stdin.close()
            self.proc.wait(timeout=10)
        except (OSError, subprocess.TimeoutExpired):
            self.proc.kill()
            self.proc.wait()
        self._err.close()


def _slice(worker: Worker, seconds: float, _call: int) -> Sample:
    r = worker.request(cmd="run", seconds=seconds)
    return Sample(r["work"], r["wall_s"], r["cpu_s"], {"steps": r["steps"], "sample_s": r["sample_s"]})


def _compare(workers: dict[str, Worker], batch: int, seed: int, seconds: float, repeats: int, slices: int,
             log: Callable[[str], None] | None) -> tuple[dict[str, list[Sample]], dict[str, Any], dict[str, str]]:
    """Set every worker up at ``batch``, then alternate them; return the samples, the setups and the notes."""
    setups, notes = {}, {}
    for name, w in workers.items():
        s = w.request(cmd="setup", batch=batch, seed=seed)
        if "unavailable" in s:
            notes[name] = s["unavailable"]
        else:
            setups[name] = s
            if log is not None:
                log(f"pgx section: {name} at batch {batch:,}: compiled in {s['compile_s']:.1f} s")
    runs = {name: partial(_slice, workers[name], seconds / slices) for name in setups}
    return alternate(runs, repeats, slices, log), setups, notes


def _summary(samples: list[Sample]) -> dict[str, Any]:
    """:func:`summary` plus the vector contenders' share of wall time in the sampler (None for Pgx: fused)."""
    out = summary(samples, "agent-step")
    shares = [s.extra["sample_s"] / s.wall_s for s in samples if s.extra.get("sample_s") is not None]
    out["sample_share"] = median(shares) if shares else None
    return out


def _ratios(samples: dict[str, list[Sample]]) -> dict[str, Any]:
    pairs = [("vector", "pgx:leduc_holdem", TARGET), ("vector", "pgx:backgammon", None),
             ("vector_numpy", "pgx:leduc_holdem", None), ("vector", "vector_numpy", None)]
    return {f"{a}_vs_{b.removeprefix('pgx:')}": ratio_entry(samples[a], samples[b], a, b, target)
            for a, b, target in pairs if a in samples and b in samples}


def _sweep(workers: dict[str, Worker], samples: dict[str, list[Sample]], batch: int, sizes: Sequence[int],
           seed: int, seconds: float, repeats: int, log: Callable[[str], None] | None) -> dict[str, Any]:
    """The contenders of ``workers`` at each batch size of ``sizes`` (at ``batch``: the main comparison's samples)."""
    out = {}
    for b in sizes:
        ss: dict[str, list[Sample]]
        if b == batch:
            ss = {n: samples[n] for n in workers if n in samples}
        else:
            ss, _setups, _notes = _compare(workers, b, seed, seconds, repeats, 1, log)
        out[str(b)] = {"results": {n: _summary(x) for n, x in ss.items()}, "ratios": _ratios(ss)}
    return out


def run(batch: int = 4096, sweep: Sequence[int] = SWEEP, games: Sequence[str] = GAMES, seconds: float = 1.0,
        repeats: int = 5, slices: int = 4, sweep_repeats: int = 3, seed: int = 0,
        log: Callable[[str], None] | None = None) -> dict[str, Any]:
    """Measure every contender at ``batch``, then the sweep; return the JSON-ready section.

    Each repeat gives every contender ``seconds`` of play in ``slices`` turns; the sweep
    gives each of its contenders ``seconds`` per repeat, ``sweep_repeats`` times.
    """
    missing = missing_modules()
    if missing:
        from lama_env.extras import install_command

        return {"skipped": f"pgx: skipped, {' and '.join(missing)} not installed ({install_command('bench-pgx')})"}
    names = ["vector", "vector_numpy", *(f"pgx:{g}" for g in games)]
    workers = {n: Worker(n) for n in names}
    try:
        samples, setups, notes = _compare(workers, batch, seed, seconds, repeats, slices, log)
        results = {n: {**_summary(ss), **setups[n]} for n, ss in samples.items()}
        small: dict[str, Worker] = {n: workers[n] for n in ("vector", "vector_numpy", "pgx:leduc_holdem")
                                    if n in workers and n not in notes}
        swept = _sweep(small, samples, batch, sweep, seed, seconds, sweep_repeats, log)
    finally:
        for w in workers.values():
            w.close()
    versions: dict[str, Any] = {}
    for s in setups.values():
        versions.update(s.pop("versions"))
    for r in results.values():
        r.pop("versions", None)
    return {
        "what": "agent-steps/s of random play with autoreset, 2 players, every game's decision counts: "
                "VectorGame (sample_actions, or a NumPy sampler) vs Pgx (jit(vmap(auto_reset(step))) with a "
                "jitted masked categorical sampler), each in its own process, in turn",
        "batch": batch, "seconds_per_repeat": seconds, "slices": slices, "repeats": repeats,
        "sweep_repeats": sweep_repeats, "versions": versions, "notes": notes,
        "results": results, "ratios": _ratios(samples), "sweep": swept,
    }


# ----------------------------------------------------------------------------- the tables
def _n(x: Any) -> str:
    return "-" if x is None or (isinstance(x, float) and x != x) else f"{x:,.0f}"


def _x(r: dict[str, Any] | None) -> str:
    return "-" if not r or r["ratio"] != r["ratio"] else f"{r['ratio']:.2f}x"


def table_rows(sec: dict[str, Any]) -> tuple[str, list[list[str]], list[str]]:
    """The section as a table: its title, rows of (measure, per s wall, per CPU s, note), and notes below it."""
    v = sec["versions"]
    title = (f"Random play vs Pgx: agent-steps/s, 2 players, batch {sec['batch']:,}, autoreset, each contender in "
             f"its own process, in turn ({sec['repeats']} x {sec['seconds_per_repeat']:g} s; JAX "
             f"{v.get('jax', '?')}, Pgx {v.get('pgx', '?')}, {v.get('backend', '?')})")
    rows = []
    for name, r in sec["results"].items():
        rows.append([LABELS.get(name, name), _n(r["per_s"]), _n(r["per_cpu_s"]),
                     f"{1e6 / r['per_s'] * sec['batch']:,.0f} µs/vector step"
                     + (f" ({100 * r['sample_share']:.0f}% sampling)" if r.get("sample_share") is not None else "")
                     + f"; {r['per_s'] / r['per_cpu_s']:.2f} cores busy; compile {r['compile_s']:.1f} s (apart)"])
    for r in sec["ratios"].values():
        target = f"target ≥ {r['target']:g}x: {'met' if r['meets_target'] else 'not met'}" if "target" in r else ""
        rows.append([f"ratio {r['of']} / {r['over']}", _x(r), f"{r['ratio_cpu']:.2f}x", target])
    for b, s in sec.get("sweep", {}).items():
        res = s["results"]
        cells = ", ".join(f"{n} {_n(x['per_s'])}/s" for n, x in res.items())
        r = s["ratios"].get("vector_vs_leduc_holdem")
        rows.append([f"  batch {int(b):,}: ratio vector / leduc_holdem", _x(r), f"{r['ratio_cpu']:.2f}x" if r else "-",
                     cells])
    notes = [f"{k}: not measured: {why}" for k, why in sec.get("notes", {}).items()]
    return title, rows, notes


def main(argv: list[str] | None = None) -> int:
    """Command line: run the comparison and print its JSON (or serve as a worker with ``--worker KIND``)."""
    import argparse

    p = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    p.add_argument("--worker", default=None, help=argparse.SUPPRESS)
    p.add_argument("--batch", type=int, default=4096)
    p.add_argument("--sweep", type=int, nargs="*", default=list(SWEEP))
    p.add_argument("--games", nargs="+", default=list(GAMES))
    p.add_argument("--seconds", type=float, default=1.0, help="seconds of play per contender and repeat")
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args(argv)
    if args.worker:
        return worker_main(args.worker)
    res = {"load_average_before": load_average(),
           **run(args.batch, args.sweep, args.games, args.seconds, args.repeats, seed=args.seed,
                 log=lambda m: print(m, file=sys.stderr)),
           "load_average_after": load_average()}
    print(json.dumps(res, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
