"""A writable folder for Numba's kernel cache wherever the package is installed (docs/performance.md, The first minute).

Imported before the first ``cache=True`` decorator: :func:`ensure_cache_dir` runs on import.
"""

from __future__ import annotations

import os
import tempfile
from typing import Any

from numba.core import config as _numba_config

config: Any = _numba_config  # Numba's settings (CACHE_DIR: NUMBA_CACHE_DIR, or "")

__all__ = ["ensure_cache_dir", "writable"]

_PACKAGE_CACHE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "__pycache__")


def writable(path: str) -> bool:
    """Whether the folder ``path`` exists or can be made, and a file can be written in it (Numba's own test)."""
    try:
        os.makedirs(path, exist_ok=True)
        tempfile.TemporaryFile(dir=path).close()
    except OSError:
        return False
    return True


def ensure_cache_dir() -> str | None:
    """Point Numba at a temporary folder if neither ``NUMBA_CACHE_DIR``, the package's nor the user's is writable.

    Returns the folder set, or None where Numba finds one by itself.
    """
    if config.CACHE_DIR:
        return None
    try:
        from numba.misc.appdirs import AppDirs

        user: str | None = str(AppDirs(appname="numba", appauthor=False).user_cache_dir)
    except Exception:  # a Numba without this helper: only the package folder and the fallback are tried
        user = None
    if writable(_PACKAGE_CACHE) or (user is not None and writable(user)):
        return None
    uid = os.getuid() if hasattr(os, "getuid") else 0
    fallback = os.path.join(tempfile.gettempdir(), f"lama-dice-numba-cache-{uid}")
    if not writable(fallback):
        fallback = tempfile.mkdtemp(prefix="lama-dice-numba-cache-")
    config.CACHE_DIR = fallback
    return fallback


ensure_cache_dir()
