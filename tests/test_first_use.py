"""The first use of the compiled engine: a cache that works wherever lama-dice is installed, and one note.

* :mod:`lama_env.jit_cache`: with neither the package folder nor the user's cache writable (a
  read-only install and home), ``import lama_env.batched`` still works (Numba itself would
  refuse to decorate a ``cache=True`` function);
* :mod:`lama_dice.cli.jit_note`: the CLI prints one line before a compile, never before a cache
  load, once per process;
* two processes compiling into one empty cache at once both succeed, and agree.
"""

from __future__ import annotations

import io
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import lama_env
from lama_dice.bench.first_use import NOTE_START
from lama_dice.cli import jit_note


def _event(module: str) -> SimpleNamespace:
    dispatcher = SimpleNamespace(py_func=SimpleNamespace(__module__=module),
                                 _cache=SimpleNamespace(cache_path="/some/cache"))
    return SimpleNamespace(data={"dispatcher": dispatcher})


def test_the_note_is_one_line_once_and_only_for_the_engine():
    out = io.StringIO()
    note = jit_note._CompileNote(out)
    note.on_start(_event("somebody_else"))  # another library's compile: nothing
    assert out.getvalue() == ""
    note.on_start(_event("lama_env.batched"))
    note.on_start(_event("lama_env._vector_kernel"))  # the nested or later compiles: nothing more
    lines = out.getvalue().splitlines()
    assert len(lines) == 1 and lines[0].startswith(NOTE_START)
    assert "evaluation kernel" in lines[0] and "/some/cache" in lines[0]


def test_the_note_is_silent_in_forked_workers_and_survives_odd_events():
    out = io.StringIO()
    note = jit_note._CompileNote(out)
    note.pid = -1  # as in a forked worker, which inherits the listener
    note.on_start(_event("lama_env.batched"))
    note.pid = os.getpid()
    note.on_start(SimpleNamespace(data=None))  # no dispatcher: nothing, and no exception
    assert out.getvalue() == ""
    assert "vector-game" in jit_note.estimate("lama_env._vector_kernel")
    assert jit_note.estimate("lama_env.other") == jit_note.DEFAULT_ESTIMATE


def test_a_read_only_install_and_home_still_import_and_cache(tmp_path):
    """No writable package folder, no writable home: the kernels cache in the temporary directory."""
    site = tmp_path / "site"
    shutil.copytree(Path(lama_env.__file__).parent, site / "lama_env",
                    ignore=shutil.ignore_patterns("__pycache__"))
    (site / "lama_env" / "__pycache__").write_text("a file where Numba wants a folder")
    blocker = tmp_path / "blocker"
    blocker.write_text("not a folder")
    temp = tmp_path / "tmp"
    temp.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith("NUMBA_")}
    env.update(PYTHONPATH=str(site), HOME=str(blocker / "home"), XDG_CACHE_HOME=str(blocker / "cache"),
               TMPDIR=str(temp))
    code = ("import lama_env, lama_env.batched, lama_env._vector_kernel\n"
            "from numba.core import config\n"
            "print(lama_env.__file__); print(config.CACHE_DIR)")
    run = subprocess.run([sys.executable, "-c", code], env=env, cwd=tmp_path, capture_output=True, text=True,
                         timeout=300)
    assert run.returncode == 0, run.stderr[-2000:]
    where, cache = run.stdout.split()
    assert where.startswith(str(site))  # the copy, not the checkout
    assert Path(cache).parent == temp and Path(cache).name.startswith("lama-dice-numba-cache")


def test_two_processes_compile_into_one_empty_cache_at_once(tmp_path):
    """Both cold runs succeed and agree, the note once per compiling process; a warm third prints nothing."""
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / "cache"))
    cmd = [sys.executable, "-m", "lama_dice", "evaluate", "--agents", "threshold:0.2", "random", "--games", "200",
           "--seed", "3", "--no-progress", "--json"]

    def start() -> subprocess.Popen:
        return subprocess.Popen(cmd, env=env, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                text=True)

    procs = [start(), start()]
    outs = [p.communicate(timeout=900) for p in procs]
    warm = subprocess.run(cmd, env=env, cwd=tmp_path, capture_output=True, text=True, timeout=900)
    results = []
    for p, (stdout, stderr) in [*zip(procs, outs, strict=True), (warm, (warm.stdout, warm.stderr))]:
        assert p.returncode == 0, stderr[-2000:]
        results.append((json.loads(stdout)["agents"], stderr.count(NOTE_START)))
    assert results[0][0] == results[1][0] == results[2][0]
    notes = [n for _, n in results]
    # each cold run compiles (one note) unless the other saved the cache before it looked (no note)
    assert notes[0] + notes[1] >= 1 and max(notes[:2]) == 1 and notes[2] == 0
    assert any(f.suffix == ".nbi" for f in (tmp_path / "cache").rglob("*"))


def test_the_note_waits_for_numba_and_leaves_lama_envs_hook_alone(tmp_path):
    """The CLI does not import Numba for the note; it listens once Numba is imported, by its own hook."""
    code = ("import sys\n"
            "from lama_dice.cli import jit_note\n"
            "jit_note.install(); jit_note.install()\n"
            "ours = [f for f in sys.meta_path if getattr(f, 'lama_env_hook', False)]\n"
            "print('numba' in sys.modules, len(ours))\n"
            "import numba\n"
            "from numba.core import event\n"
            "print(len(event._registered['numba:compile']))\n")
    run = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr[-2000:]
    assert run.stdout.split() == ["False", "1", "1"]  # lama_env's one PettingZoo hook; one listener
