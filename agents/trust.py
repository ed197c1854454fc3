"""The one opt-in for loading files that can run code (pickles).

Agent specs, env keywords, configs and records read their files as data: nothing in
them runs.  A few loaders cannot work that way because the file format itself is a
pickle: Ray's ``RLModule.from_checkpoint`` (``rllib:PATH``), and Stable-Baselines3's
``load_from_zip_file`` for a checkpoint whose sidecar does not describe its network
(one written before lama-dice wrote network descriptions, or by another program).
Those run only after the user opts in, for the whole process and the processes it
starts:

* the command line's ``--allow-pickle`` (``lama-dice evaluate --allow-pickle ...``);
* the environment variable ``LAMA_DICE_ALLOW_PICKLE=1``;
* in Python, :func:`allow_pickle` (which sets that variable).

Only opt in for a file you trust as you would trust a program; to share or score an
agent safely, convert it once with ``lama-dice export`` and pass the ``.safetensors``
file around instead.
"""

from __future__ import annotations

import os

from lama_env.errors import LamaDiceError

#: The environment variable that allows unpickling (``1``, ``true`` or ``yes``).
ENV_VAR = "LAMA_DICE_ALLOW_PICKLE"
#: The command-line flag that sets it.
FLAG = "--allow-pickle"


class UntrustedFileError(LamaDiceError):
    """A file that can only be loaded by unpickling it, without the user's opt-in."""


def allow_pickle(allowed: bool = True) -> None:
    """Allow (or forbid again) loaders that unpickle, in this process and the processes it starts."""
    if allowed:
        os.environ[ENV_VAR] = "1"
    else:
        os.environ.pop(ENV_VAR, None)


def pickle_allowed() -> bool:
    """Whether the user opted in to loading files that can run code."""
    return os.environ.get(ENV_VAR, "").strip().lower() in ("1", "true", "yes")


def require_pickle_opt_in(what: str, instead: str | None = None) -> None:
    """Raise :class:`UntrustedFileError` (one line) unless unpickling is allowed.

    Args:
        what: what would be loaded and why it can run code.
        instead: the safe alternative to suggest (e.g. the export command), if there is one.
    """
    if not pickle_allowed():
        safe = f"{instead}; or, " if instead else ""
        raise UntrustedFileError(f"{what}, and unpickling can run code: {safe}only if you trust the file, "
                                 f"pass {FLAG} (or set {ENV_VAR}=1)")
