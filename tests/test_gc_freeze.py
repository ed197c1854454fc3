"""The garbage collector's freeze after the engine loads: the command line's choice, never the library's."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

LIBRARY = ("import gc\nfrom lama_env import LamaGame\nbefore = gc.get_freeze_count()\nLamaGame(2, seed=0)\n"
           "print(before, gc.get_freeze_count())\n")
# what lama-dice's main() sets up before a command runs, then the command's first game
COMMAND = ("import gc\nfrom lama_dice.cli.main import freeze_after_load\nfrom lama_env import LamaGame\n"
           "freeze_after_load()\nbefore = gc.get_freeze_count()\nLamaGame(2, seed=0)\n"
           "print(before, gc.get_freeze_count())\n")


def _counts(code: str, setting: str | None) -> tuple[int, int]:
    env = {k: v for k, v in os.environ.items() if k != "LAMA_DICE_GC_FREEZE"}
    if setting is not None:
        env["LAMA_DICE_GC_FREEZE"] = setting
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert run.returncode == 0, run.stderr[-2000:]
    before, after = map(int, run.stdout.split())
    return before, after


def test_the_library_never_freezes_its_host_process():
    assert _counts(LIBRARY, None) == (0, 0)


@pytest.mark.parametrize("setting,frozen", [(None, True), ("0", False)])
def test_the_command_line_freezes_what_numbas_import_left(setting, frozen):
    """lama-dice moves the objects alive once the engine loads to the GC's permanent generation (opt-out: 0)."""
    before, after = _counts(COMMAND, setting)
    assert before == 0 and (after > 10_000 if frozen else after == 0)
