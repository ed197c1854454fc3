"""Atomic writes: every file the project writes appears whole or not at all.

:func:`atomic_path` gives a writer a temporary name beside the target (same folder and suffix), flushed
and renamed over the target (``os.replace``) when the writer is done; a failed writer leaves the old file
and a one-line :class:`WriteError` (docs/agents-and-evaluation.md, "Inputs and their limits").
"""

from __future__ import annotations

import contextlib
import os
import secrets
from collections.abc import Iterator
from pathlib import Path

from lama_env.errors import LamaDiceError

__all__ = ["WriteError", "atomic_path", "write_bytes", "write_text"]


class WriteError(LamaDiceError, OSError):
    """A file could not be written; the message says so in one line and whether the old file was kept."""


def _fsync(path: Path) -> None:
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return  # a writer that left no file: os.replace reports it
    try:
        os.fsync(fd)
    except OSError:
        pass  # a file system without fsync (some FUSE mounts): the rename is still atomic
    finally:
        os.close(fd)


@contextlib.contextmanager
def atomic_path(path: str | os.PathLike, what: str | None = None,
                error: type[Exception] = WriteError) -> Iterator[Path]:
    """A temporary path beside ``path`` to write to; renamed over ``path`` when the block ends without error.

    Args:
        path: the file to write.
        what: how the message names it (default ``path``).
        error: the exception raised for a failed write (a command's own :class:`~lama_env.errors.LamaDiceError`).

    Raises:
        error: the block raised an ``OSError`` (ENOSPC, EACCES, ...) or the rename failed; the temporary
            file is removed and ``path`` is as it was ("the old file was kept" / "nothing was written").
            Any other exception of the block is raised as it is, after the same clean-up.
    """
    path = Path(path)
    tmp = path.with_name(f".tmp{os.getpid()}-{secrets.token_hex(3)}-{path.name}")
    try:
        yield tmp
        _fsync(tmp)
        os.replace(tmp, path)
    except BaseException as e:
        with contextlib.suppress(OSError):
            tmp.unlink()
        if isinstance(e, OSError) and not isinstance(e, LamaDiceError):
            kept = "the old file was kept" if path.exists() else "nothing was written"
            raise error(f"cannot write {what or path}: {e.strerror or e} ({kept})") from None
        raise


def write_text(path: str | os.PathLike, text: str, what: str | None = None,
               error: type[Exception] = WriteError) -> Path:
    """Write ``text`` (UTF-8) to ``path`` atomically (:func:`atomic_path`); return ``path``."""
    with atomic_path(path, what, error) as tmp, open(tmp, "w", encoding="utf-8") as fh:
        fh.write(text)
    return Path(path)


def write_bytes(path: str | os.PathLike, data: bytes, what: str | None = None,
                error: type[Exception] = WriteError) -> Path:
    """Write ``data`` to ``path`` atomically (:func:`atomic_path`); return ``path``."""
    with atomic_path(path, what, error) as tmp, open(tmp, "wb") as fh:
        fh.write(data)
    return Path(path)
