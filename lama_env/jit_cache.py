"""Where Numba keeps the compiled kernels (``cache=True``), wherever the package is installed.

Numba caches a compiled function next to its module (``lama_env/__pycache__``) when that
folder is writable, else in the user's cache folder (``~/.cache/numba/...`` on Linux,
Numba's ``UserWideCacheLocator``), or where ``NUMBA_CACHE_DIR`` says.  When none of
these can be written (a read-only install with a read-only or missing home), Numba
refuses to decorate a ``cache=True`` function at all, so ``import lama_env.batched``
would fail; :func:`ensure_cache_dir` (run when :mod:`lama_env._kernel` is imported,
before the first decorator) then points Numba at a folder in the temporary
directory instead.  Compiled code of another package (``lama_dice.agents``' kernels) imports this
module before its own ``cache=True`` decorators, as :mod:`lama_env._kernel` does.  A cache load takes
well under a second; a compile takes seconds (see ``lama-dice bench --only first_use``).
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


def _user_cache() -> str | None:
    try:
        from numba.misc.appdirs import AppDirs

        return str(AppDirs(appname="numba", appauthor=False).user_cache_dir)
    except Exception:  # a Numba without this helper: only the package folder and the fallback are tried
        return None


def ensure_cache_dir() -> str | None:
    """Give Numba a writable cache folder if it would find none; return the folder set, or None if none was needed.

    Nothing changes when ``NUMBA_CACHE_DIR`` is set or when the package folder or the
    user's Numba cache folder is writable (Numba uses them by itself).
    """
    if config.CACHE_DIR:
        return None
    user = _user_cache()
    if writable(_PACKAGE_CACHE) or (user is not None and writable(user)):
        return None
    uid = os.getuid() if hasattr(os, "getuid") else 0
    fallback = os.path.join(tempfile.gettempdir(), f"lama-dice-numba-cache-{uid}")
    if not writable(fallback):
        fallback = tempfile.mkdtemp(prefix="lama-dice-numba-cache-")
    config.CACHE_DIR = fallback
    return fallback


ensure_cache_dir()
