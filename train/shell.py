"""Commands that a training run prints for the user to run next, in forms that work as printed.

``make train`` runs ``.venv/bin/python -m lama_dice train ...`` in a plain shell: the
virtual environment is not activated, so neither ``lama-dice`` nor ``tensorboard`` need be on
``PATH``.  :func:`command` says how to call a console script of *this* interpreter's
environment from the current folder: its bare name where ``PATH`` finds that very script
(an activated environment, a ``pip install`` on ``PATH``), else its path (relative to the
current folder when it lies below it, e.g. ``.venv/bin/tensorboard``), else
``PYTHON -m MODULE`` with this interpreter's path (e.g. ``.venv/bin/python -m lama_dice``).
"""

from __future__ import annotations

import os
import shlex
import shutil
import sys
from pathlib import Path

__all__ = ["command", "near_path", "shell_path"]


def near_path(path: str | os.PathLike) -> str:
    """``path`` relative to the current folder when it lies below it, else absolute."""
    p = os.path.abspath(path)  # not resolved: a venv's python is a link that must stay in the venv
    try:
        rel = os.path.relpath(p)
    except ValueError:  # another drive (Windows)
        return p
    return p if rel.startswith("..") else rel


def shell_path(path: str | os.PathLike) -> str:
    """:func:`near_path` quoted for a POSIX shell."""
    return shlex.quote(near_path(path))


def command(script: str, module: str) -> str:
    """How to run console script ``script`` (or ``python -m module``) of this interpreter from this shell."""
    here = Path(os.path.abspath(sys.executable)).parent
    for name in (script, script + ".exe"):
        exe = here / name
        if exe.is_file():
            found = shutil.which(script)
            if found is not None and os.path.samefile(found, exe):
                return script
            return shell_path(exe)
    return f"{shell_path(sys.executable)} -m {module}"
