"""The one bounded reader of every JSON input, and the bounds a number must keep (one-line :class:`InputError`).

The bounds: docs/agents-and-evaluation.md, Inputs and their limits.
"""

from __future__ import annotations

import json
import math
import numbers
import os
import stat
from typing import Any

from .errors import LamaDiceError, bounded, clip
from .moved import check_moved

__all__ = ["MAX_DEPTH", "MAX_INT", "MAX_SEED", "MAX_START_POINTS", "MAX_TOTAL", "InputError", "NotJsonError",
           "check_seed", "check_tree", "read_file", "read_json"]

#: The deepest nesting of lists and objects an input may have (a record needs 5, a config 4).
MAX_DEPTH = 64
#: The largest integer (in size, either sign) an input may hold: every integer fits a signed 64-bit number.
MAX_INT = 2**63 - 1
#: The one bound of a seed, wherever it enters (``--seed``, configs, the envs' ``reset``, records): 0..MAX_SEED.
MAX_SEED = 2**63 - 1
#: The largest chip total a game may start from (``start_points``): no total then passes the engine's 2**31 - 1.
MAX_START_POINTS = 1_000_000_000
#: The largest chip total, and count of rounds or of a statistic, a game's state may hold (``deserialize``,
#: ``from_state``): far above what play reaches from :data:`MAX_START_POINTS`, and no 32-bit number overflows.
MAX_TOTAL = 2_000_000_000
_MAX_DIGITS = len(str(MAX_INT))


class InputError(LamaDiceError, ValueError):
    """An input refused by the bounded reader: one line, naming what was read and why."""

    def __init__(self, message: str) -> None:
        """Keep ``message`` on one bounded line."""
        super().__init__(bounded(message, 500))


class NotJsonError(InputError):
    """Text that is not JSON at all (as opposed to JSON that breaks a bound)."""


def __getattr__(name: str) -> Any:
    """``read_yaml``, ``yaml_loader``, ``MAX_NODES`` moved to :mod:`lama_dice.yaml_reader` (:mod:`.moved`): one line."""
    check_moved(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def check_seed(seed: Any, error: type[Exception] = InputError, name: str = "seed") -> int:
    """``seed`` as an int in ``0..MAX_SEED`` (NumPy integers too); else raise ``error`` naming ``name``."""
    if isinstance(seed, bool) or not isinstance(seed, numbers.Integral) or not 0 <= int(seed) <= MAX_SEED:
        raise error(f"{name} must be an integer 0..2**63 - 1, got {clip(seed)}")
    return int(seed)


def _at(what: str) -> str:
    """The prefix of a message about ``what`` (none when ``what`` is empty: the caller names it)."""
    return f"{what}: " if what else ""


def _int_of(text: str, what: str) -> int:
    digits = text.lstrip("+-")
    if len(digits) > _MAX_DIGITS:
        raise InputError(f"{_at(what)}an integer of {len(digits):,} digits (integers are at most 2**63 - 1)")
    value = int(text)
    if abs(value) > MAX_INT:
        raise InputError(f"{_at(what)}the integer {clip(value)} is too large (integers are at most 2**63 - 1)")
    return value


def check_tree(data: Any, what: str, max_nodes: int | None = None) -> Any:
    """``data`` (parsed JSON or YAML; aliases count as used): at most :data:`MAX_DEPTH` deep, ``max_nodes`` items."""
    memo: dict[int, tuple[int, int]] = {}
    active: set[int] = set()
    stack: list[tuple[Any, bool]] = [(data, False)]
    while stack:
        x, done = stack.pop()
        kids = [c for c in (x.values() if isinstance(x, dict) else x) if isinstance(c, dict | list | tuple)] \
            if isinstance(x, dict | list | tuple) else None
        if kids is None:
            continue
        key = id(x)
        if done:
            depth = 1 + max((memo[id(c)][0] for c in kids), default=0)
            size = 1 + len(x) + sum(memo[id(c)][1] for c in kids)
            if depth > MAX_DEPTH:
                raise InputError(f"{_at(what)}nested more than {MAX_DEPTH} levels deep")
            if max_nodes is not None and size > max_nodes:
                raise InputError(f"{_at(what)}expands to more than {max_nodes:,} items (through its aliases)")
            memo[key] = (depth, size)
            active.discard(key)
        elif key in active:
            raise InputError(f"{_at(what)}a part of it contains itself")
        elif key not in memo:
            active.add(key)
            stack.append((x, True))
            stack.extend((c, False) for c in kids)
    return data


def read_json(text: str | bytes, what: str = "the input", max_chars: int | None = None, allow_nan: bool = False) -> Any:
    """The JSON value of ``text`` (bytes: UTF-8) within the bounds, else InputError (NotJsonError: not JSON at all).

    ``what`` names it in messages; ``max_chars`` refuses a longer text unparsed; ``allow_nan``: the project's files.
    """
    if max_chars is not None and len(text) > max_chars:
        size = f"{max_chars / 2**20:g} MiB" if max_chars >= 2**20 else f"{max_chars:,} characters"
        raise InputError(f"{what or 'the input'} is larger than {size} (its size limit)")
    if isinstance(text, bytes | bytearray):
        try:
            text = bytes(text).decode("utf-8")
        except UnicodeDecodeError:
            raise InputError(f"{what or 'the input'} is not UTF-8 text") from None

    def pairs(items: list[tuple[str, Any]]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for key, value in items:
            if key in out:
                raise InputError(f"{_at(what)}the key {clip(key)} is given twice in one object")
            out[key] = value
        return out

    def constant(name: str) -> Any:
        if allow_nan:
            return float(name)
        raise InputError(f"{_at(what)}{name} is not a JSON number")

    def number(s: str) -> float:
        value = float(s)
        if not (allow_nan or math.isfinite(value)):
            raise InputError(f"{_at(what)}the number {clip(s)} is out of range")
        return value

    try:
        data = json.loads(text, object_pairs_hook=pairs, parse_int=lambda s: _int_of(s, what), parse_float=number,
                          parse_constant=constant)
    except json.JSONDecodeError as e:
        raise NotJsonError(f"{_at(what)}invalid JSON at line {e.lineno} column {e.colno}: {e.msg}") from None
    except RecursionError:
        raise InputError(f"{_at(what)}nested more than {MAX_DEPTH} levels deep") from None
    return check_tree(data, what)


def read_file(path: str | os.PathLike, limit: int, what: str | None = None) -> bytes:
    """The bytes of the regular file ``path``, at most ``limit`` (InputError otherwise; a FIFO is refused unread)."""
    shown = str(path) if what is None else what
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except OSError as e:
        raise InputError(f"cannot read {shown}: {e.strerror or type(e).__name__}") from None
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            kind = "a folder" if stat.S_ISDIR(mode) else "a FIFO" if stat.S_ISFIFO(mode) else \
                "a device" if stat.S_ISCHR(mode) or stat.S_ISBLK(mode) else "a socket" if stat.S_ISSOCK(mode) \
                else "not a regular file"
            raise InputError(f"cannot read {shown}: it is {kind}, not a regular file (pipe its content to "
                             "standard input instead)")
        with os.fdopen(fd, "rb", closefd=False) as fh:
            data = fh.read(limit + 1)
    except OSError as e:
        raise InputError(f"cannot read {shown}: {e.strerror or type(e).__name__}") from None
    finally:
        os.close(fd)
    if len(data) > limit:
        size = f"{limit / 2**20:g} MiB" if limit >= 2**20 else f"{limit:,} bytes"
        raise InputError(f"{shown} is larger than {size} (its size limit)")
    return data
