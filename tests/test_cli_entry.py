"""The command line without anything on PATH, and one installed namespace.

Every subcommand runs as ``python -m lama_dice COMMAND`` (the same as ``lama-dice COMMAND``);
nothing generic (``agents``, ``train``...) is importable from an installed lama-dice, so a
user's own ``agents/`` package or ``train.py`` never collides with ours.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from lama_dice.cli.main import COMMANDS

GENERIC = ("agents", "train", "evaluation", "cli", "bench", "configs", "tools")


def run(args: list[str], cwd: Path, **kw) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, *args], cwd=cwd, capture_output=True, text=True, timeout=120, **kw)


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_every_subcommand_runs_as_python_m(command, tmp_path):
    proc = run(["-m", "lama_dice", command, "--help"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith(f"usage: lama-dice {command}")


def test_python_m_forms_of_the_trainers(tmp_path):
    proc = run(["-m", "lama_dice.train", "default", "--check"], tmp_path)
    assert proc.returncode == 0 and "total_timesteps:" in proc.stdout, proc.stderr
    proc = run(["-m", "lama_dice.train.rllib", "--help"], tmp_path)
    assert proc.returncode == 0 and "usage:" in proc.stdout, proc.stderr


def test_no_generic_top_level_names_are_installed(tmp_path):
    code = ("import importlib.util as u; "
            f"print(','.join(n for n in {GENERIC!r} if u.find_spec(n) is not None))")
    proc = run(["-c", code], tmp_path)
    assert proc.returncode == 0 and proc.stdout.strip() == "", proc.stdout + proc.stderr


def test_a_users_own_agents_package_and_train_py_do_not_collide(tmp_path):
    (tmp_path / "agents").mkdir()
    (tmp_path / "agents" / "__init__.py").write_text("MINE = True\n")
    (tmp_path / "train.py").write_text("raise SystemExit('the user file ran')\n")
    code = ("import gymnasium, lama_env, agents; assert agents.MINE; "
            "env = gymnasium.make('LamaDice-v0', opponents=['random']); env.reset(seed=0); print('ok')")
    proc = run(["-c", code], tmp_path)
    assert proc.returncode == 0 and proc.stdout.strip() == "ok", proc.stderr
    proc = run(["-m", "lama_dice", "train", "smoke", "--check"], tmp_path)
    assert proc.returncode == 0 and "name: smoke" in proc.stdout, proc.stderr
