"""``lama-dice bench --baseline CHECKOUT``: the current code against a baseline checkout, side by side, in one run.

Every measurement (a *probe*, :mod:`bench/probes.py <lama_dice.bench>`) runs in a fresh
process, once with the current code and once with the baseline's (``--root``: the same
probe file, the library imported from the baseline checkout), alternately: repeat ``r``
runs current then baseline for even ``r``, baseline then current for odd ``r``, every probe
in turn, so that both sides see the same load.  Each probe warms up in its process before
its timed part; a first untimed pass per side compiles (or loads) every kernel, so no timed
run pays a compile.  Reported per probe: the median rate of each side (per wall-clock and
per CPU second) and the median over repeats of the paired ratio current / baseline (above
1: the current code is faster), with every repeat's ratio.

The baseline is a folder holding a checkout (``git worktree add /tmp/base 6ae8397``) or a
git revision of the current repository (``--baseline 6ae8397``: exported with ``git archive``
into a temporary folder, whose kernels are compiled once at the start: a minute or so).

Probes: ``aec`` (the AEC env's agent-steps/s in PettingZoo's ``performance_benchmark`` loop,
with its ratio to ``leduc_holdem_v4`` in the same process), ``evaluate`` (games/s of
``evaluate`` with ``threshold:0.2`` twice), ``vector`` (``VectorGame`` at 4,096 games),
``vector_env`` (the Gymnasium vector env at 256), ``engine`` (``LamaGame`` steps/s),
``lookahead`` and ``solver`` (decisions/s of ``lookahead`` and of the solo solver's agent),
``kernel_load`` (import and first call of the compiled kernel in a fresh process).
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from .measure import load_average, median

FORMAT = "lama-dice-bench-baseline/1"
PROBES = ("aec", "evaluate", "vector", "vector_env", "engine", "lookahead", "solver", "kernel_load")
#: What each probe measures, for the report.
WHAT = {
    "aec": "AEC env agent-steps/s (PettingZoo's loop)",
    "evaluate": "evaluate games/s (threshold:0.2 x2)",
    "vector": "VectorGame(4096) agent-steps/s",
    "vector_env": "vector env (256) learner-steps/s",
    "engine": "LamaGame steps/s",
    "lookahead": "lookahead decisions/s",
    "solver": "solo solver decisions/s",
    "kernel_load": "kernel load (fresh process), loads/s",
}
#: The probes that run compiled kernels (a warm-up pass compiles or loads them first).
KERNEL_PROBES = frozenset({"evaluate", "vector", "vector_env", "lookahead", "kernel_load"})
PROBE_FILE = Path(__file__).with_name("probes.py")


class BaselineError(RuntimeError):
    """A baseline that cannot be used (no such folder or revision)."""


def _repo_root() -> Path:
    return Path(__file__).resolve().parent.parent


def export_revision(rev: str, dest: Path) -> Path:
    """Write git revision ``rev`` of the current repository into ``dest`` (``git archive``); return ``dest``."""
    root = _repo_root()
    try:
        arch = subprocess.run(["git", "-C", str(root), "archive", "--format=tar", rev], capture_output=True,
                              timeout=120)
    except (OSError, subprocess.SubprocessError) as e:
        raise BaselineError(f"--baseline {rev}: git is not available ({e})") from None
    if arch.returncode != 0:
        msg = arch.stderr.decode(errors="replace").strip().splitlines()
        raise BaselineError(f"--baseline {rev}: not a folder, nor a revision of {root} "
                            f"({msg[0] if msg else 'git archive failed'})")
    dest.mkdir(parents=True, exist_ok=True)
    subprocess.run(["tar", "-x", "-C", str(dest)], input=arch.stdout, check=True, timeout=120)
    return dest


def run_probe(name: str, root: str | None, quick: bool, seed: int, timeout: float = 900) -> dict[str, Any]:
    """Run one probe in a fresh interpreter (``root``: the baseline checkout; None: the current code)."""
    cmd = [sys.executable, str(PROBE_FILE), name, "--seed", str(seed)]
    if quick:
        cmd.append("--quick")
    if root is not None:
        cmd += ["--root", root]
    try:
        run = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"error": f"timed out after {timeout:.0f} s"}
    lines = run.stdout.strip().splitlines()
    try:
        out: dict[str, Any] = json.loads(lines[-1])
    except (IndexError, json.JSONDecodeError):
        tail = (run.stderr or run.stdout).strip().splitlines()[-1:] or ["no output"]
        return {"error": f"the probe failed (exit {run.returncode}): {tail[0]}"}
    return out


def _rate(r: dict[str, Any], cpu: bool = False) -> float:
    s = r.get("cpu_s" if cpu else "wall_s")
    return r["work"] / s if s else float("nan")


def _side(runs: list[dict[str, Any]]) -> dict[str, Any]:
    ok = [r for r in runs if "error" not in r]
    out: dict[str, Any] = {
        "unit": ok[0]["unit"] if ok else None,
        "per_s": median([_rate(r) for r in ok]),
        "per_cpu_s": median([_rate(r, True) for r in ok]),
        "all_per_s": [round(_rate(r), 3) for r in ok],
        "runs": len(ok),
    }
    for key in ("vs_leduc", "vs_leduc_cpu", "leduc_per_s", "import_s", "first_call_s"):
        vals = [r[key] for r in ok if key in r]
        if vals:
            out[key] = median(vals)
    for key in ("env", "env_id", "backend", "note", "imported_from"):
        if ok and key in ok[0]:
            out[key] = ok[0][key]
    errors = sorted({r["error"] for r in runs if "error" in r})
    if errors:
        out["errors"] = errors
    return out


def compare(baseline: str, probes: Sequence[str] = PROBES, repeats: int = 3, quick: bool = False, seed: int = 0,
            log: Callable[[str], None] | None = None) -> dict[str, Any]:
    """Run ``probes`` on the current code and on ``baseline`` (a checkout folder or a git revision), alternately."""
    say = log or (lambda _msg: None)
    unknown = [p for p in probes if p not in PROBES]
    if unknown:
        raise BaselineError(f"unknown probe {unknown[0]!r} (valid: {', '.join(PROBES)})")
    with tempfile.TemporaryDirectory(prefix="lama-dice-baseline-") as tmp:
        if Path(baseline).is_dir():
            root = str(Path(baseline).resolve())
            source = f"folder {root}"
        else:
            say(f"exporting revision {baseline} ...")
            root = str(export_revision(baseline, Path(tmp) / "baseline"))
            source = f"revision {baseline}"
        meta: dict[str, Any] = {
            "date_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "baseline": source,
            "quick": quick, "repeats": repeats, "seed": seed, "load_average_before": load_average(),
        }
        sides = {"current": None, "baseline": root}
        for side, where in sides.items():
            if not KERNEL_PROBES.intersection(probes):
                break
            say(f"warm-up ({side}): compiling or loading the kernels ...")
            w = run_probe("warm", where, True, seed)
            if "error" in w:
                raise BaselineError(f"the {side} code cannot run the probes: {w['error']}")
        runs: dict[str, dict[str, list[dict[str, Any]]]] = {p: {"current": [], "baseline": []} for p in probes}
        t0 = time.perf_counter()
        for r in range(repeats):
            order = ("current", "baseline") if r % 2 == 0 else ("baseline", "current")
            for p in probes:
                for side in order:
                    res = run_probe(p, sides[side], quick, seed + r)
                    runs[p][side].append(res)
                    say(f"repeat {r}: {p} ({side}): "
                        + (res["error"] if "error" in res else f"{_rate(res):,.1f} {res['unit']}/s"))
        for side in sides:
            meta[f"{side}_imported_from"] = next(
                (r["imported_from"] for p in probes for r in runs[p][side] if r.get("imported_from")), None)
        meta["seconds"] = round(time.perf_counter() - t0, 2)
        meta["load_average_after"] = load_average()
    results: dict[str, Any] = {}
    for p in probes:
        cur, base = runs[p]["current"], runs[p]["baseline"]
        pairs = [(c, b) for c, b in zip(cur, base, strict=True) if "error" not in c and "error" not in b]
        entry: dict[str, Any] = {"what": WHAT[p], "current": _side(cur), "baseline": _side(base),
                                 "ratio": median([_rate(c) / _rate(b) for c, b in pairs]),
                                 "ratio_cpu": median([_rate(c, True) / _rate(b, True) for c, b in pairs]),
                                 "all_ratios": [round(_rate(c) / _rate(b), 3) for c, b in pairs]}
        results[p] = entry
    return {"format": FORMAT, "meta": meta, "probes": results}


def main(argv: list[str] | None = None) -> int:
    """Command line: ``python -m lama_dice.bench.baseline CHECKOUT [--only ...]``; prints the JSON."""
    import argparse

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("baseline")
    ap.add_argument("--only", nargs="+", default=list(PROBES), choices=PROBES)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    res = compare(args.baseline, args.only, args.repeats, args.quick, args.seed,
                  log=lambda m: print(m, file=sys.stderr))
    print(json.dumps(res, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
