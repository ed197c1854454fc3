"""The JSON form of a game's state (:meth:`lama_env.engine.LamaGame.serialize`): checks and the random streams.

A serialized state is data a user may load from anywhere, so every field is
checked on the way in and a bad one is named in a one-line
:class:`StateFormatError`; nothing in it is executed or looked up by name.

The random streams are kept exactly (the compiled engine's two 64-bit stream states), so a
restored game draws the same future deals and dice as the original.
"""

from __future__ import annotations

import json
from typing import Any

from .errors import LamaDiceError, clip
from .streams import Streams


class StateFormatError(LamaDiceError, ValueError):
    """A serialized game state that cannot be read (not JSON, another format, a bad field)."""


def parse(text: Any, fmt: str) -> dict[str, Any]:
    """The JSON object of a serialized state, checked to be of format ``fmt``."""
    if not isinstance(text, (str, bytes)):
        raise StateFormatError(f"a serialized game state must be a string, got {type(text).__name__}")
    try:
        data = json.loads(text)
    except (ValueError, RecursionError) as e:
        raise StateFormatError(f"not a serialized game state (bad JSON: {e})") from None
    if not isinstance(data, dict):
        raise StateFormatError("not a serialized game state (not a JSON object)")
    if data.get("format") != fmt:
        raise StateFormatError(f"not a {fmt} string (format {clip(data.get('format'))})")
    return data


def dumps(data: dict[str, Any]) -> str:
    """The stable text of a state: compact JSON with sorted keys (floats never appear)."""
    return json.dumps(data, sort_keys=True, separators=(",", ":"))


def field(data: dict[str, Any], key: str) -> Any:
    """``data[key]``, or a :class:`StateFormatError` naming the missing field."""
    if key not in data:
        raise StateFormatError(f"serialized game state: missing field {clip(key)}")
    return data[key]


def check_int(value: Any, key: str, lo: int, hi: int | None = None) -> int:
    """``value`` as an int in ``lo..hi`` (no upper bound if None), else a :class:`StateFormatError`."""
    if type(value) is not int or value < lo or (hi is not None and value > hi):
        span = f"{lo}.." + ("" if hi is None else str(hi))
        raise StateFormatError(f"serialized game state: {key} must be an integer {span}, got {clip(value)}")
    return value


def check_ints(value: Any, key: str, length: int | None, lo: int, hi: int | None = None) -> list[int]:
    """``value`` as a list of ``length`` ints in ``lo..hi`` (any length if None)."""
    if not isinstance(value, list) or (length is not None and len(value) != length):
        raise StateFormatError(f"serialized game state: {key} must be a list of {length or 'some'} integers, "
                               f"got {clip(value)}")
    return [check_int(v, key, lo, hi) for v in value]


def check_list(value: Any, key: str, length: int | None) -> list:
    """``value`` if it is a list (of ``length`` items, any length if None)."""
    if not isinstance(value, list) or (length is not None and len(value) != length):
        raise StateFormatError(f"serialized game state: {key} must be a list"
                               + ("" if length is None else f" of {length} items"))
    return value


def check_optional_int(value: Any, key: str, lo: int, hi: int) -> int | None:
    """None, or ``value`` as an int in ``lo..hi``."""
    return None if value is None else check_int(value, key, lo, hi)


def check_bool(value: Any, key: str) -> bool:
    """``value`` if it is a JSON boolean."""
    if not isinstance(value, bool):
        raise StateFormatError(f"serialized game state: {key} must be true or false, got {clip(value)}")
    return value


def check_choice(value: Any, key: str, options: tuple[Any, ...]) -> Any:
    """``value`` if it is one of ``options``."""
    if value not in options:
        raise StateFormatError(f"serialized game state: {key} must be one of {', '.join(map(repr, options))}, "
                               f"got {clip(value)}")
    return value


# ------------------------------------------------------------------------- the random stream
def restore_streams(data: Any) -> Streams:
    """The game's streams from a state's ``random`` field, ``{"streams": {"es": HEX, "ps": HEX}}``.

    A NumPy generator's state (``{"generator": ...}``, written by lama-dice 0.1.0 and earlier) is retired.
    """
    if not isinstance(data, dict):
        raise StateFormatError("serialized game state: random must be an object")
    if "streams" not in data:
        if "generator" in data:
            raise StateFormatError("serialized game state: a NumPy generator's random state was retired in lama-dice "
                                   "0.2.0 (0.1.0 was the last version with it): serialize the game again with "
                                   "this version, or keep games as records (to_record)")
        raise StateFormatError("serialized game state: random must hold streams")
    st = data["streams"]
    if not isinstance(st, dict):
        raise StateFormatError("serialized game state: random.streams must be an object")
    return Streams(_hex64(field(st, "es"), "random.streams.es"), _hex64(field(st, "ps"), "random.streams.ps"))


def _hex64(value: Any, name: str) -> int:
    """A 64-bit stream state written as 16 hexadecimal digits."""
    if not isinstance(value, str) or len(value) != 16:
        raise StateFormatError(f"serialized game state: {name} must be 16 hexadecimal digits, got {clip(value)}")
    try:
        return int(value, 16)
    except ValueError:
        raise StateFormatError(f"serialized game state: {name} must be 16 hexadecimal digits, "
                               f"got {clip(value)}") from None
