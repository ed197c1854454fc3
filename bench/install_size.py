"""Installed sizes, import times and the first ``evaluate`` in fresh venvs (``python -m lama_dice.bench.install_size``).

Builds the wheel of the repository this module is in, then, each in a new venv:

* the **core** (the wheel alone, with its dependencies): the size of what it adds to an empty
  venv's ``site-packages``; that no torch, Stable-Baselines3, sb3-contrib or TensorBoard came
  with it; the import time of ``lama_env`` and of ``lama_dice.agents`` (fresh interpreters, the
  median of several); the first ``lama-dice evaluate --agents ppo:2p random`` in the new venv
  (Numba compiles the engine's kernels and caches them) and the warm ones after it;
* **core + each extra** (``wheel[EXTRA]``): what the extra adds on top of the core.

The train extra installs torch from the pin ``--torch`` first (the CPU build: what ``make train``
does), never a CUDA build.  Packages come from pip's configured index and cache; sizes are of the
files installed (``--no-compile``: no bytecode), and the core's once more with the bytecode that a
plain ``pip install`` writes (``core_bytes_compiled``).  Prints one JSON document (``--json OUT``
also writes it); ``tools/regen_docs.py``'s ``install-size`` block renders it.  ``--wheel-only``
builds the wheel and prints its size alone (the ``wheel-size`` block: seconds, not an hour).
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
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
#: The extras measured by default (rllib and interop pin their own stacks and take minutes more).
EXTRAS = ("train", "web", "render", "openspiel", "bench", "docs", "test")
#: What the core must not bring.
HEAVY = ("torch", "stable_baselines3", "sb3_contrib", "tensorboard")
TORCH = "torch==2.13.0"


def _run(cmd: list[str], timeout: float = 1800, **kw: Any) -> subprocess.CompletedProcess:
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, check=False, **kw)
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} exited with {proc.returncode}: {(proc.stderr or proc.stdout)[-1500:]}")
    return proc


def tree_bytes(path: Path) -> int:
    """Bytes of the regular files under ``path`` (links not followed)."""
    total = 0
    for dirpath, _dirs, files in os.walk(path):
        for f in files:
            p = os.path.join(dirpath, f)
            if not os.path.islink(p):
                total += os.path.getsize(p)
    return total


def site_packages(venv: Path) -> Path:
    """The ``site-packages`` folder of ``venv``."""
    (sp,) = (venv / "lib").glob("python3*/site-packages")
    return sp


def new_venv(where: Path) -> Path:
    """A fresh venv at ``where``; returns its python."""
    _run([sys.executable, "-m", "venv", str(where)])
    return where / "bin" / "python"


def install(py: Path, *reqs: str) -> float:
    """``pip install --no-compile REQS`` into ``py``'s venv; returns the seconds it took."""
    t = time.perf_counter()
    _run([str(py), "-m", "pip", "install", "-q", "--no-compile", *reqs])
    return time.perf_counter() - t


def import_seconds(py: Path, module: str, repeats: int = 5, cwd: Path | None = None) -> float:
    """The median wall time of ``import module`` in a fresh interpreter (bytecode written by the first)."""
    code = f"import time; t = time.perf_counter(); import {module}; print(time.perf_counter() - t)"
    _run([str(py), "-c", code], cwd=cwd)  # writes the bytecode: a user's imports after the first
    return statistics.median(float(_run([str(py), "-c", code], cwd=cwd).stdout) for _ in range(repeats))


def has_modules(py: Path, names: tuple[str, ...]) -> list[str]:
    """Which of ``names`` are importable in ``py``'s venv."""
    code = ("import importlib.util, sys; print(' '.join(n for n in sys.argv[1:] "
            "if importlib.util.find_spec(n) is not None))")
    return _run([str(py), "-c", code, *names]).stdout.split()


def build_wheel(dist: Path) -> Path:
    """Build this repository's wheel into ``dist``; return its path."""
    _run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation", "-w", str(dist), str(ROOT)])
    (wheel,) = dist.glob("lama_dice-*.whl")
    return wheel


def wheel_size() -> dict[str, Any]:
    """The wheel's size in bytes and its number of files."""
    import zipfile

    with tempfile.TemporaryDirectory(prefix="lama-wheel-") as tmp:
        wheel = build_wheel(Path(tmp))
        return {"wheel": wheel.name, "wheel_bytes": wheel.stat().st_size,
                "wheel_files": len(zipfile.ZipFile(wheel).namelist())}


def measure(extras: tuple[str, ...] = EXTRAS, torch: str = TORCH, games: int = 200,
            log: Any = None) -> dict[str, Any]:
    """Build the wheel, install it fresh (and with each extra), measure; return the JSON-ready results."""
    say = log or (lambda _m: None)
    out: dict[str, Any] = {"games": games, "load_average_start": list(os.getloadavg())}
    with tempfile.TemporaryDirectory(prefix="lama-install-") as tmp_s:
        tmp = Path(tmp_s)
        say("building the wheel")
        wheel = build_wheel(tmp / "dist")
        out["wheel_bytes"] = wheel.stat().st_size
        empty = site_packages(Path(new_venv(tmp / "empty")).parents[1])
        base = tree_bytes(empty)
        say("core")
        py = new_venv(tmp / "core")
        out["core_install_s"] = install(py, str(wheel))
        core = tree_bytes(site_packages(py.parents[1])) - base
        out["core_bytes"] = core
        out["core_heavy_modules"] = has_modules(py, HEAVY)
        # the bytecode a plain pip install writes (its default: compile every module installed; as pip does,
        # a file that does not compile is skipped, so the exit status is not checked)
        subprocess.run([str(py), "-m", "compileall", "-q", "-j", "0", str(site_packages(py.parents[1]))],
                       capture_output=True, timeout=3600, check=False)
        out["core_bytes_compiled"] = tree_bytes(site_packages(py.parents[1])) - base
        elsewhere = tmp / "elsewhere"
        elsewhere.mkdir()
        out["import_s"] = {m: import_seconds(py, m, cwd=elsewhere) for m in ("lama_env", "lama_dice.agents")}
        cmd = [str(py.parent / "lama-dice"), "evaluate", "--agents", "ppo:2p", "random", "--games", str(games),
               "--seed", "0", "--workers", "1", "--no-progress"]
        walls = []
        for _ in range(3):
            t = time.perf_counter()
            _run(cmd, cwd=elsewhere)
            walls.append(time.perf_counter() - t)
        out["evaluate_command"] = f"lama-dice evaluate --agents ppo:2p random --games {games} --seed 0 --workers 1"
        out["evaluate_first_s"], out["evaluate_warm_s"] = walls[0], min(walls[1:])
        out["extras"] = {}
        for extra in extras:
            say(f"core + {extra}")
            py = new_venv(tmp / f"x-{extra}")
            if extra == "train":
                install(py, torch)
            secs = install(py, f"{wheel}[{extra}]")
            size = tree_bytes(site_packages(py.parents[1])) - base
            out["extras"][extra] = {"bytes": size - core, "total_bytes": size, "install_s": secs}
            _run([sys.executable, "-c", "import shutil, sys; shutil.rmtree(sys.argv[1])", str(py.parents[1])])
    out["load_average_end"] = list(os.getloadavg())
    return out


def main(argv: list[str] | None = None) -> int:
    """Run :func:`measure` and print its JSON (one document on stdout)."""
    ap = argparse.ArgumentParser(prog="python -m lama_dice.bench.install_size", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--extras", nargs="*", default=list(EXTRAS), help="extras to measure (default: %(default)s)")
    ap.add_argument("--torch", default=TORCH, help="the torch requirement installed before the train extra")
    ap.add_argument("--games", type=int, default=200, help="games of the evaluate runs")
    ap.add_argument("--json", default=None, metavar="OUT", help="also write the JSON to OUT")
    ap.add_argument("--wheel-only", action="store_true", help="build the wheel and print its size alone")
    args = ap.parse_args(argv)
    if args.wheel_only:
        emit_json(wheel_size(), args.json)
        return 0
    emit_json(measure(tuple(args.extras), args.torch, args.games, log=progress), args.json)
    return 0


def progress(message: str) -> None:
    """A measurement's progress line, on stderr (stdout is the JSON)."""
    print(message, file=sys.stderr, flush=True)


def emit_json(data: dict[str, Any], out: str | None) -> None:
    """Print ``data`` as one JSON document (``out``: also write it there)."""
    text = json.dumps(data, indent=2)
    if out:
        Path(out).write_text(text + "\n", encoding="utf-8")
    print(text)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
