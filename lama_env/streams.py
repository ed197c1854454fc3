"""The games' random streams: one seed hasher and one stream for every engine (same seed, same game).

A run's ``seed`` (an integer >= 0, or None for fresh entropy) is hashed once,
by :func:`base_seed` (``SeedSequence(seed)``, 64 bits), and game ``g`` of the run
starts two counter-based splitmix64 streams from ``(seed, g)`` only
(:func:`game_streams`): ``es``, the deals and dice, and ``ps``, the draws of the
native agents seated in it (``random``).  A draw of a uniform integer in
``0..k-1`` (:func:`below`) adds the golden-ratio constant to the stream's state,
mixes it, and keeps the top 32 bits, rejecting the few values above the largest
multiple of ``k``.  A deal is a partial Fisher-Yates shuffle of
:data:`lama_env.rules.DECK`, card ``i`` swapping with ``i + below(36 - i)``; a
roll is ``x = below(216)``, the dice showing faces ``x // 36``, ``x // 6 % 6`` and
``x % 6`` of the three dice.

The compiled engine (:mod:`lama_env._kernel`: :func:`~lama_env._kernel.mix`,
:func:`~lama_env._kernel.below`, :func:`~lama_env._kernel.start_streams`) is
the canonical form of these streams; this module is their Python form, for
:class:`lama_env.engine.LamaGame` and the drivers, and ``tests/test_streams.py``
checks that the two agree draw for draw.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .errors import clip

__all__ = ["advance", "base_seed", "below", "block", "game_streams", "mix", "seed_mix", "streams_of"]

MASK64 = (1 << 64) - 1
#: splitmix64's constants (as :mod:`lama_env._kernel` has them).
GOLDEN = 0x9E3779B97F4A7C15
_M1 = 0xBF58476D1CE4E5B9
_M2 = 0x94D049BB133111EB
#: What the agents' stream ``ps`` is salted with, from the game's stream ``es``.
POLICY_SALT = 0xD1B54A32D192ED03
#: ``LIMITS[k]``: the largest multiple of ``k`` below 2**32 (a draw of 32 bits at or above it is rejected).
LIMITS = (0, *((1 << 32) // k * k for k in range(1, 217)))

_U = np.uint64


def base_seed(seed: Any, error: type[Exception] = ValueError) -> int:
    """A run's 64-bit base seed: ``SeedSequence(seed)`` hashed (fresh entropy for None); else raise ``error``."""
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0):
        raise error(f"seed must be an integer >= 0 or None, got {clip(seed)}")
    return int(np.random.SeedSequence(None if seed is None else int(seed)).generate_state(1, dtype=np.uint64)[0])


def mix(z: int) -> int:
    """splitmix64's finaliser of a 64-bit ``z``."""
    z = ((z ^ (z >> 30)) * _M1) & MASK64
    z = ((z ^ (z >> 27)) * _M2) & MASK64
    return z ^ (z >> 31)


def seed_mix(base: int) -> int:
    """The mixed base of the streams of a :func:`base_seed` (what the compiled engine is handed)."""
    return mix((base + GOLDEN) & MASK64)


def game_streams(seed: Any, game_id: int = 0, error: type[Exception] = ValueError) -> tuple[int, int]:
    """``(es, ps)``: the streams of game ``game_id`` of ``seed`` (as :func:`lama_env._kernel.start_streams`)."""
    return streams_of(seed_mix(base_seed(seed, error)), game_id)


def streams_of(mixed: int, game_id: int) -> tuple[int, int]:
    """``(es, ps)`` of game ``game_id`` from a :func:`seed_mix`'d base."""
    e = mix(mixed ^ mix(((game_id & MASK64) * GOLDEN + GOLDEN) & MASK64))
    return e, mix(e ^ POLICY_SALT)


def below(state: int, k: int) -> tuple[int, int]:
    """(the stream's new state, a uniform integer in ``0..k-1``), ``1 <= k <= 216``."""
    lim = LIMITS[k]
    while True:
        state = (state + GOLDEN) & MASK64
        u = mix(state) >> 32
        if u < lim:
            return state, u % k


def block(state: int, size: int) -> list[int]:
    """The top 32 bits of the stream's next ``size`` mixed values (from ``state``), drawn at once."""
    z = _U(state) + np.arange(1, size + 1, dtype=np.uint64) * _U(GOLDEN)  # wraps modulo 2**64
    z = (z ^ (z >> _U(30))) * _U(_M1)
    z = (z ^ (z >> _U(27))) * _U(_M2)
    out: list[int] = ((z ^ (z >> _U(31))) >> _U(32)).tolist()
    return out


def advance(state: int, draws: int) -> int:
    """The stream's state after ``draws`` values (accepted or rejected)."""
    return (state + draws * GOLDEN) & MASK64
