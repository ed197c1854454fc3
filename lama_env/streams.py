"""The one seed hasher of the games' random streams, and the compiled engine's streams in Python.

:func:`base_seed` hashes a run's ``seed`` once; the compiled engine starts game ``g``'s two
counter-based splitmix64 streams from that base and ``g`` only: ``es`` (deals and dice) and ``ps``
(the native agents' draws).  The batched engine and the vector game both hash their seeds here, so
a seed means the same streams to both (docs/environments.md, The batched engine).
"""

from __future__ import annotations

import operator
from collections.abc import Sequence
from typing import Any

import numpy as np

from .constants import GOLDEN, M1, M2, MASK64, POLICY_SALT
from .errors import clip
from .reader import check_seed

__all__ = ["Streams", "base_seed", "below", "decision_key", "mix", "seed_mix", "start_streams", "uniform"]


def base_seed(seed: Any, error: type[Exception] = ValueError) -> int:
    """A run's 64-bit base seed: ``SeedSequence(seed)`` hashed (fresh entropy for None); else raise ``error``."""
    if seed is not None:
        check_seed(seed, error)  # 0..MAX_SEED, the one bound of a seed (lama_env.reader)
    return int(np.random.SeedSequence(None if seed is None else int(seed)).generate_state(1, dtype=np.uint64)[0])

# splitmix64: the draws the compiled engine's ``mix``/``below``/``start_streams`` make (tests/test_streams.py)

def mix(z: int) -> int:
    """splitmix64's finaliser of a 64-bit ``z``."""
    z = ((z ^ (z >> 30)) * M1) & MASK64
    z = ((z ^ (z >> 27)) * M2) & MASK64
    return z ^ (z >> 31)


def seed_mix(seed64: int) -> int:
    """The mixed base seed of the streams, from a 64-bit seed (:func:`base_seed`)."""
    return mix((seed64 + GOLDEN) & MASK64)


def start_streams(seed_mixed: int, game_id: int) -> tuple[int, int]:
    """``(es, ps)``: game ``game_id``'s deal-and-dice stream and its policies' stream."""
    e = mix(seed_mixed ^ mix(((game_id & MASK64) * GOLDEN + GOLDEN) & MASK64))
    return e, mix(e ^ POLICY_SALT)


def decision_key(es: int, ps: int, version: int, salt: int) -> int:
    """A 64-bit key of one decision (``LamaGame.decision_seed``): a hash of the two stream states, version, ``salt``.

    The same at the same point of every copy and replay of the game; no two decisions of a game share one.
    """
    z = mix(((version & MASK64) * GOLDEN + (salt & MASK64)) & MASK64)
    return mix(es ^ mix(ps ^ z))


def uniform(key: int) -> float:
    """A uniform float in ``[0, 1)`` (53 bits) from a 64-bit ``key`` (its splitmix64 hash)."""
    return (mix((key + GOLDEN) & MASK64) >> 11) * 2.0**-53


def below(state: int, k: int) -> tuple[int, int]:
    """``(new state, uniform integer in [0, k))`` by rejection on 32 bits (exact), ``1 <= k < 2**32``."""
    lim = ((1 << 32) // k) * k
    while True:
        state = (state + GOLDEN) & MASK64
        u = mix(state) >> 32
        if u < lim:
            return state, u % k


#: Draws of a stream's block: the first holds this many counters, each next one twice as many, up to _BLOCK_MAX.
_BLOCK_FIRST, _BLOCK_MAX = 32, 512
_TWO32 = 1 << 32
_MOD = operator.mod
_U64 = np.uint64
_STEPS: dict[int, np.ndarray] = {}  # block size -> GOLDEN * (1 .. size), wrapped to 64 bits


def _block(base: int, size: int) -> tuple[list[int], int]:
    """``mix(base + i * GOLDEN) >> 32`` for ``i = 1 .. size`` (what :func:`below` tests), and their largest."""
    steps = _STEPS.get(size)
    if steps is None:
        steps = _STEPS[size] = np.arange(1, size + 1, dtype=np.uint64) * _U64(GOLDEN)
    z = steps + _U64(base)
    z ^= z >> _U64(30)
    z *= _U64(M1)
    z ^= z >> _U64(27)
    z *= _U64(M2)
    z ^= z >> _U64(31)
    z >>= _U64(32)
    return z.tolist(), int(z.max())


class Streams:
    """A game's two streams on the compiled engine's scheme: ``es`` (deals and dice) and ``ps`` (its policies).

    Game ``g`` of seed ``s`` plays what the compiled engine plays as game ``g`` of ``s``.  The deal-and-dice
    stream is counter-based, so :meth:`draw` takes its draws from a block computed ahead (:func:`_block`);
    ``es`` is the state after the counters spent so far.
    """

    __slots__ = ("_base", "_buf", "_pos", "_top", "ps")

    def __init__(self, es: int, ps: int) -> None:
        """Streams at states ``es`` and ``ps`` (64-bit integers)."""
        self._base = es  # es = base + pos * GOLDEN: the block holds the draws of the counters after base
        self._buf: list[int] = []  # never changed in place (copies share it): replaced by the next block
        self._pos = 0
        self._top = _TWO32  # the block's largest number (while it is below 2**32 - k, no draw of k rejects one)
        self.ps = ps

    @property
    def es(self) -> int:
        """The deal-and-dice stream's state (as :func:`below` would have left it)."""
        return (self._base + self._pos * GOLDEN) & MASK64

    @es.setter
    def es(self, value: int) -> None:
        self._base, self._buf, self._pos, self._top = value, [], 0, _TWO32

    def _refill(self, spent: int) -> list[int]:
        """The next block, after the ``spent`` counters of the current one (see :data:`_BLOCK_FIRST`)."""
        old = self._buf
        base = self._base = (self._base + spent * GOLDEN) & MASK64
        buf, self._top = _block(base, min(2 * len(old), _BLOCK_MAX) if old else _BLOCK_FIRST)
        self._buf = buf
        return buf

    @classmethod
    def of_game(cls, seed: Any, game_id: Any, error: type[Exception] = ValueError) -> Streams:
        """Game ``game_id``'s streams of seed ``seed`` (see :func:`base_seed`; ``game_id``: an integer >= 0)."""
        if isinstance(game_id, bool) or not isinstance(game_id, (int, np.integer)) or game_id < 0:
            raise error(f"game_id must be an integer >= 0, got {clip(game_id)}")
        return cls(*start_streams(seed_mix(base_seed(seed, error)), int(game_id)))

    def draw(self, k: int) -> int:
        """A uniform integer in ``[0, k)`` from the deal-and-dice stream (what :func:`below` draws)."""
        buf = self._buf
        pos = self._pos
        if pos < len(buf) and self._top + k <= _TWO32:  # below()'s limit (at least 2**32 - k + 1) rejects nothing
            self._pos = pos + 1
            return buf[pos] % k
        lim = _TWO32 - _TWO32 % k
        while True:
            if pos == len(buf):
                buf = self._refill(pos)
                pos = 0
            u = buf[pos]
            pos += 1
            if u < lim:
                self._pos = pos
                return u % k

    def draw_each(self, ks: Sequence[int]) -> list[int]:
        """``[draw(k) for k in ks]``, in one call (a deal's draws)."""
        buf = self._buf
        pos = self._pos
        end = pos + len(ks)
        if end <= len(buf) and self._top + max(ks) <= _TWO32:  # as in draw(): no number is rejected
            self._pos = end
            return list(map(_MOD, buf[pos:end], ks))
        out = []
        end = len(buf)
        for k in ks:
            lim = _TWO32 - _TWO32 % k
            while True:
                if pos == end:
                    buf = self._refill(pos)
                    pos = 0
                    end = len(buf)
                u = buf[pos]
                pos += 1
                if u < lim:
                    out.append(u % k)
                    break
        self._pos = pos
        return out

    def draw_policy(self, k: int) -> int:
        """A uniform integer in ``[0, k)`` from the policies' stream."""
        self.ps, x = below(self.ps, k)
        return x

    def copy(self) -> Streams:
        """An independent copy at the same states."""
        s = Streams.__new__(Streams)
        s._base, s._buf, s._pos, s._top, s.ps = self._base, self._buf, self._pos, self._top, self.ps
        return s

    def __reduce__(self) -> tuple[type[Streams], tuple[int, int]]:
        """Pickle (and ``copy.deepcopy``) the two states only: the block is computed again."""
        return Streams, (self.es, self.ps)

    def to_json(self) -> dict[str, str]:
        """The two states as hexadecimal strings."""
        return {"es": f"{self.es:016x}", "ps": f"{self.ps:016x}"}

    def __eq__(self, other: object) -> bool:
        """Equal states."""
        return isinstance(other, Streams) and (self.es, self.ps) == (other.es, other.ps)

    __hash__ = None  # type: ignore[assignment]  # mutable

    def __repr__(self) -> str:
        """Show the two states."""
        return f"Streams(es=0x{self.es:016x}, ps=0x{self.ps:016x})"
