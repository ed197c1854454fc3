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
            "env = gymnasium.make('LamaDice-v1', opponents=['random']); env.reset(seed=0); print('ok')")
    proc = run(["-c", code], tmp_path)
    assert proc.returncode == 0 and proc.stdout.strip() == "ok", proc.stderr
    proc = run(["-m", "lama_dice", "train", "smoke", "--check"], tmp_path)
    assert proc.returncode == 0 and "name: smoke" in proc.stdout, proc.stderr


# ------------------------------------------------------------------ shared options (lama_dice.cli.options)
#: Commands that play games under rules the user chooses: each takes the same --rule.
RULE_COMMANDS = ("evaluate", "solve", "play")


def _options() -> dict[str, dict[str, object]]:
    """Subcommand -> option string -> its argparse action."""
    import argparse

    from lama_dice.cli.main import build_parser

    sub = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    return {name: {s: a for a in p._actions for s in a.option_strings} for name, p in sub.choices.items()}


def test_help_shows_no_rest_markup():
    """A command's --help is its module docstring as plain text: no ``x``, :func:`x` or a ``::`` line end."""
    import argparse
    import re

    from lama_dice.cli.main import build_parser, plain_text

    sub = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    assert len(sub.choices) >= 10
    for name, p in sub.choices.items():
        text = p.format_help()
        assert "``" not in text and not re.search(r":[a-z]+:`", text), (name, text)
        assert not [line for line in text.splitlines() if line.rstrip().endswith("::")], (name, text)
    assert plain_text("From ``x`` (:func:`a.b`) and steps::\n\n    cmd\n") == "From x (a.b) and steps:\n\n    cmd\n"


def test_shared_options_mean_the_same_in_every_command():
    """--seed, --workers, --json, --no-progress and --rule: one declaration, one meaning, wherever they appear."""
    opts = _options()
    for option, fields in (("--seed", ("type", "nargs", "metavar")),
                           ("--workers", ("type", "nargs", "default", "metavar", "help")),
                           ("--json", ("type", "nargs", "const", "default", "metavar")),
                           ("--no-progress", ("nargs", "const", "default", "help")),
                           ("--rule", ("type", "nargs", "default", "metavar", "help"))):
        actions = {cmd: o[option] for cmd, o in opts.items() if option in o}
        assert len(actions) >= (3 if option == "--rule" else 4), (option, sorted(actions))
        for field in fields:
            values = {cmd: getattr(a, field) for cmd, a in actions.items()}
            if field == "type":  # one helper, one checker: compare what the types accept
                values = {cmd: getattr(t, "__name__", t) for cmd, t in values.items()}
            if field == "help" and option == "--workers":  # the what differs; the meaning is the same
                values = {cmd: v.split("(default")[1] for cmd, v in values.items()}
            assert len(set(map(repr, values.values()))) == 1, (option, field, values)
    assert {cmd for cmd, o in opts.items() if "--rule" in o} == set(RULE_COMMANDS)
    for cmd in ("evaluate", "score", "exploit", "bench", "solve", "curves"):
        assert opts[cmd]["--json"].const == "-"  # --json alone: standard output, as solve's old flag


@pytest.mark.parametrize("argv", [
    ["evaluate", "--agents", "random", "random", "--chunk-size", "0"],
    ["evaluate", "--agents", "random", "random", "--chunk-size", "-3"],
    ["evaluate", "--agents", "random", "random", "--workers", "-1"],
    ["score", "random", "--workers", "x"],
    ["play", "--seed", "-1"],
    ["solve", "--frobnicate"],
])
def test_bad_option_values_are_one_line(argv, capsys):
    from lama_dice.cli.main import main

    with pytest.raises(SystemExit) as e:
        main(argv)
    assert e.value.code == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and ": error: " in err and "--help" in err, err
    assert "Traceback" not in err
