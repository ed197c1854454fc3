"""Run folders: where each training run writes its files (both trainers use these).

A run folder is never overwritten. It is either a new folder
``ROOT/NAME-YYYYmmdd-HHMMSS`` (``-2``, ``-3``... appended when that name is
taken, e.g. two runs started in the same second), made by :func:`new_run_dir`;
or a folder the user names (``--run-dir``) that does not exist yet or is
empty, claimed by :func:`claim_run_dir`. :func:`make_run_dir` picks one of the
two. Any problem raises :class:`RunDirError` with a one-line message.

:func:`stop_on_sigterm` makes a SIGTERM (``kill PID``, a container or job scheduler stopping the
run) stop training the way Ctrl-C does, so that both trainers save ``interrupted`` and say how to resume.
"""

from __future__ import annotations

import contextlib
import os
import signal
import threading
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path

from lama_env.errors import LamaDiceError

__all__ = ["RunDirError", "claim_run_dir", "make_run_dir", "new_run_dir", "stop_on_sigterm"]

#: The default advice when a named run folder cannot be used.
CHOOSE_ANOTHER = "choose another --run-dir"


class RunDirError(LamaDiceError):
    """A run folder that cannot be used (it already holds a run, or cannot be created)."""


def new_run_dir(root: str | os.PathLike, name: str) -> Path:
    """Create and return a fresh ``root/NAME-YYYYmmdd-HHMMSS`` folder (``-2``, ``-3``... appended if taken).

    The folder is created atomically (``mkdir`` without ``exist_ok``), so two runs
    started at once never share it.

    Raises:
        RunDirError: the folder cannot be created.
    """
    base = Path(root) / f"{name}-{datetime.now().strftime('%Y%m%d-%H%M%S')}"
    for k in range(1, 1000):
        cand = base if k == 1 else base.with_name(f"{base.name}-{k}")
        try:
            cand.mkdir(parents=True, exist_ok=False)
            return cand
        except FileExistsError:
            continue
        except OSError as e:
            raise RunDirError(f"cannot create run folder {cand}: {e.strerror or e}") from None
    raise RunDirError(f"cannot find a free run folder name for {base}")


def claim_run_dir(path: str | os.PathLike, hint: str = CHOOSE_ANOTHER) -> Path:
    """Use ``path`` as a new run folder: it must not exist yet, or be an empty folder.

    Args:
        path: the folder.
        hint: what the error message advises when the folder is not empty.

    Raises:
        RunDirError: ``path`` is a file, is not empty, or cannot be created.
    """
    path = Path(path)
    if path.exists():
        if not path.is_dir():
            raise RunDirError(f"run folder {path} is a file")
        if any(path.iterdir()):
            raise RunDirError(f"run folder {path} is not empty (it may hold a run); {hint}")
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise RunDirError(f"cannot create run folder {path}: {e.strerror or e}") from None
    return path


def make_run_dir(run_dir: str | os.PathLike | None, root: str | os.PathLike, name: str,
                 hint: str = CHOOSE_ANOTHER) -> Path:
    """``claim_run_dir(run_dir)`` when a folder is named, else ``new_run_dir(root, name)``."""
    if run_dir is not None:
        return claim_run_dir(run_dir, hint)
    return new_run_dir(root, name)


@contextlib.contextmanager
def stop_on_sigterm() -> Iterator[list[int]]:
    """Within the block, a SIGTERM raises :class:`KeyboardInterrupt` in the main thread, as Ctrl-C does.

    Yields the list of the signals received (empty until one comes), so that a trainer can tell a stop
    asked for from a failure it causes (subprocess workers killed by the same signal: a broken pipe).
    The former handler is back after the block: a second SIGTERM while the checkpoint is saved ends the
    process as usual (the save is atomic: the old file is kept). Off the main thread, it does nothing.
    """
    received: list[int] = []
    if threading.current_thread() is not threading.main_thread():
        yield received
        return

    def handler(signum: int, frame: object) -> None:
        received.append(signum)
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGTERM, handler)
    try:
        yield received
    finally:
        signal.signal(signal.SIGTERM, previous)
