"""The JSON form of a game's state (:meth:`lama_env.engine.LamaGame.serialize`): checks and the random stream.

A serialized state is data a user may load from anywhere, so every field is
checked on the way in and a bad one is named in a one-line
:class:`StateFormatError`; nothing in it is executed or looked up by name
beyond the allow-listed NumPy bit generators.

The random stream is kept exactly: the generator's state now, and the block of
uniforms the game is spending (``LamaGame`` draws them in blocks, see
``engine._RANDOM_BLOCK``) as the generator state it was drawn from, its size
and the position reached, so a restored game draws the same future deals and
dice as the original.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from .errors import LamaDiceError, clip
from .streams import Streams

#: The bit generators a state may name (NumPy's own; each restores from its ``state`` dict).
BIT_GENERATORS: dict[str, Callable[[], np.random.BitGenerator]] = {
    "PCG64": np.random.PCG64, "PCG64DXSM": np.random.PCG64DXSM, "MT19937": np.random.MT19937,
    "Philox": np.random.Philox, "SFC64": np.random.SFC64,
}


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
def _to_json(value: Any) -> Any:
    """A bit generator's state as JSON data (arrays become ``{"array": [...], "dtype": ...}``)."""
    if isinstance(value, np.ndarray):
        return {"array": value.tolist(), "dtype": str(value.dtype)}
    if isinstance(value, dict):
        return {k: _to_json(v) for k, v in value.items()}
    if isinstance(value, np.integer):
        return int(value)
    return value


def _from_json(value: Any) -> Any:
    if isinstance(value, dict):
        if set(value) == {"array", "dtype"}:
            if value["dtype"] not in ("uint32", "uint64"):
                raise StateFormatError(f"serialized game state: bad random state array type {clip(value['dtype'])}")
            return np.array(value["array"], dtype=value["dtype"])
        return {k: _from_json(v) for k, v in value.items()}
    return value


def make_generator(state: Any) -> np.random.Generator:
    """A generator in the bit-generator ``state`` of :func:`random_state` (one of :data:`BIT_GENERATORS`)."""
    if not isinstance(state, dict) or state.get("bit_generator") not in BIT_GENERATORS:
        raise StateFormatError(f"serialized game state: the random state must name one of "
                               f"{', '.join(BIT_GENERATORS)}")
    bits = BIT_GENERATORS[state["bit_generator"]]()
    try:
        bits.state = _from_json(state)
    except (ValueError, TypeError, KeyError, OverflowError) as e:
        raise StateFormatError(f"serialized game state: bad random state ({e})") from None
    return np.random.Generator(bits)


def random_state(rng: np.random.Generator | Streams, block_state: Mapping[str, Any] | None, block_size: int,
                 pos: int) -> dict[str, Any]:
    """The random stream as JSON data: the generator's state and the block being spent (or None), or two stream states.

    A game on the compiled engine's streams (:class:`lama_env.streams.Streams`) writes
    ``{"streams": {"es": HEX, "ps": HEX}}``.
    """
    if isinstance(rng, Streams):
        return {"streams": rng.to_json()}
    block = None if block_state is None else {"state": _to_json(block_state), "size": block_size, "pos": pos}
    return {"generator": _to_json(rng.bit_generator.state), "block": block}


def restore_random(data: Any) -> tuple[np.random.Generator | Streams, Mapping[str, Any] | None, list[float], int]:
    """``(rng, block_state, block, pos)`` from :func:`random_state`'s data: the block is drawn again."""
    if not isinstance(data, dict):
        raise StateFormatError("serialized game state: random must be an object")
    if "streams" in data:
        st = data["streams"]
        if not isinstance(st, dict):
            raise StateFormatError("serialized game state: random.streams must be an object")
        return Streams(_hex64(field(st, "es"), "random.streams.es"), _hex64(field(st, "ps"), "random.streams.ps")), \
            None, [], 0
    rng = make_generator(field(data, "generator"))
    block = field(data, "block")
    if block is None:
        return rng, None, [], 0
    if not isinstance(block, dict):
        raise StateFormatError("serialized game state: random.block must be an object or null")
    size = check_int(field(block, "size"), "random.block.size", 1, 1 << 20)
    pos = check_int(field(block, "pos"), "random.block.pos", 0, size)
    drawn = make_generator(field(block, "state"))
    state = drawn.bit_generator.state
    return rng, state, drawn.random(size).tolist(), pos


def _hex64(value: Any, name: str) -> int:
    """A 64-bit stream state written as 16 hexadecimal digits."""
    if not isinstance(value, str) or len(value) != 16:
        raise StateFormatError(f"serialized game state: {name} must be 16 hexadecimal digits, got {clip(value)}")
    try:
        return int(value, 16)
    except ValueError:
        raise StateFormatError(f"serialized game state: {name} must be 16 hexadecimal digits, "
                               f"got {clip(value)}") from None
