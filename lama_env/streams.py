"""The one seed hasher of the games' random streams, and the compiled engine's streams in Python.

Game ``g`` of a seed draws from two splitmix64 counters started from the hashed seed and ``g`` only: ``es``
(deals and dice) and ``ps`` (native agents) (docs/environments.md, The batched engine: Same seed, same game).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .constants import GOLDEN, M1, M2, MASK64, POLICY_SALT
from .errors import clip
from .reader import check_seed

__all__ = ["Streams", "base_seed", "below", "decision_key", "kernel_seed", "mix", "seed_mix", "start_streams",
           "uniform"]


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


def kernel_seed(seed: Any, error: type[Exception] = ValueError) -> np.uint64:
    """The kernels' mixed base seed of a run's ``seed``: :func:`seed_mix` of :func:`base_seed` (else ``error``)."""
    return np.uint64(seed_mix(base_seed(seed, error)))


def start_streams(seed_mixed: int, game_id: int) -> tuple[int, int]:
    """``(es, ps)``: game ``game_id``'s deal-and-dice stream and its policies' stream."""
    e = mix(seed_mixed ^ mix(((game_id & MASK64) * GOLDEN + GOLDEN) & MASK64))
    return e, mix(e ^ POLICY_SALT)


def decision_key(es: int, ps: int, version: int, salt: int) -> int:
    """A 64-bit key of one decision (``LamaGame.decision_seed``): a hash of the stream states, version, ``salt``."""
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


class Streams:
    """A game's two streams on the compiled engine's scheme: ``es`` (deals and dice) and ``ps`` (its policies)."""

    __slots__ = ("es", "ps")

    def __init__(self, es: int, ps: int) -> None:
        """Streams at states ``es`` and ``ps`` (64-bit integers)."""
        self.es = es
        self.ps = ps

    @classmethod
    def of_game(cls, seed: Any, game_id: Any, error: type[Exception] = ValueError) -> Streams:
        """Game ``game_id``'s streams of seed ``seed`` (see :func:`base_seed`; ``game_id``: an integer >= 0)."""
        if isinstance(game_id, bool) or not isinstance(game_id, (int, np.integer)) or game_id < 0:
            raise error(f"game_id must be an integer >= 0, got {clip(game_id)}")
        return cls(*start_streams(seed_mix(base_seed(seed, error)), int(game_id)))

    def draw(self, k: int) -> int:
        """A uniform integer in ``[0, k)`` from the deal-and-dice stream (what :func:`below` draws)."""
        self.es, x = below(self.es, k)
        return x

    def copy(self) -> Streams:
        """An independent copy at the same states."""
        return Streams(self.es, self.ps)

    def __reduce__(self) -> tuple[type[Streams], tuple[int, int]]:
        """Pickle (and ``copy.deepcopy``) the two states."""
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
