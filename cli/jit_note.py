"""The one line ``lama-dice`` prints on stderr when it is about to compile the engine (not load it from the cache).

The compiled kernels (:mod:`lama_env.batched`, :mod:`lama_env._vector_kernel`) are
compiled by Numba on their first use and cached on disk (:mod:`lama_env.jit_cache`);
later processes load them in well under a second.  A compile takes seconds, so the CLI
says so once, before the first compile of a process: it listens to Numba's
``numba:compile`` event, which Numba raises only after a cache miss.  Library users
see nothing (the listener is installed by :func:`lama_dice.cli.main.main` only).
"""

from __future__ import annotations

import os
import sys
from typing import Any, TextIO

__all__ = ["estimate", "install"]

#: Module of the first kernel compiled -> what is compiled and roughly how long it takes (one idle core: the
#: CPU seconds of a cold run).
#: The figures are those of ``lama-dice bench --only first_use`` (docs/performance.md).
ESTIMATES: dict[str, str] = {
    "lama_env.batched": "the evaluation kernel (about 10 s)",
    "lama_env._vector_kernel": "the vector-game kernels (about 20 s)",
}
DEFAULT_ESTIMATE = "the game kernels (10-20 s)"


def estimate(module: str) -> str:
    """What is compiled, and roughly how long it takes, when the first kernel compiled is in ``module``."""
    return ESTIMATES.get(module, DEFAULT_ESTIMATE)


class _CompileNote:
    """A Numba event listener that prints the note at the start of the first compile of a ``lama_env`` kernel."""

    def __init__(self, stream: TextIO | None) -> None:
        self.stream = stream
        self.pid = os.getpid()  # forked workers inherit the listener; only this process speaks
        self.done = False

    def on_start(self, event: Any) -> None:
        try:
            self._note(event)
        except Exception:  # a note must never break a compile
            pass

    def _note(self, event: Any) -> None:
        if self.done or os.getpid() != self.pid:
            return
        dispatcher: Any = (event.data or {}).get("dispatcher")
        module = getattr(getattr(dispatcher, "py_func", None), "__module__", "") or ""
        if not module.startswith("lama_env"):
            return
        self.done = True
        where = ""
        try:
            where = f"; then cached in {dispatcher._cache.cache_path}"  # Numba's cache of this kernel
        except Exception:  # private to Numba: the note just says less
            pass
        stream = self.stream or sys.stderr
        print(f"lama-dice: first use: compiling {estimate(module)} with Numba (once{where})", file=stream, flush=True)


_NOTE: _CompileNote | None = None


def _register(note: _CompileNote) -> None:
    from numba.core import event

    class Listener(event.Listener):
        def on_start(self, ev: Any) -> None:
            note.on_start(ev)

        def on_end(self, ev: Any) -> None:
            pass

    event.register("numba:compile", Listener())


def install(stream: TextIO | None = None) -> None:
    """Print the note (to ``stream``, default stderr) before this process's first compile of a kernel.

    Numba is not imported here: when it is not imported yet, the listener is registered right
    after ``import numba`` (so commands that never compile do not pay for importing it).
    """
    global _NOTE
    if _NOTE is not None:  # installed already (main() called again in this process): one listener
        _NOTE.stream, _NOTE.pid = stream, os.getpid()
        return
    listener = _NOTE = _CompileNote(stream)
    if "numba" in sys.modules:
        _register(listener)
        return
    from lama_env.extras import AfterImport

    class AfterNumba(AfterImport):
        lama_env_hook = False  # not lama_env's own (PettingZoo) hook, which lama_env installs once by that mark

    sys.meta_path.insert(0, AfterNumba("numba", lambda: _register(listener)))
