"""The one seed hasher of the games' random streams.

A run's ``seed`` (an integer >= 0, or None for fresh entropy) is hashed once, by
:func:`base_seed` (``SeedSequence(seed)``, 64 bits); the compiled engine
(:mod:`lama_env._kernel`: ``seed_mix``, ``start_streams``) starts game ``g``'s
two counter-based splitmix64 streams from that base and ``g`` only: ``es``, the
deals and dice, and ``ps``, the draws of the native agents seated in it.  The
batched engine (:func:`lama_env.batched.play_batch`) and the vector game
(:class:`lama_env.vector.VectorGame`) both hash their seeds here, so a seed
means the same streams to both, with one message for a bad seed.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .errors import clip

__all__ = ["base_seed"]


def base_seed(seed: Any, error: type[Exception] = ValueError) -> int:
    """A run's 64-bit base seed: ``SeedSequence(seed)`` hashed (fresh entropy for None); else raise ``error``."""
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0):
        raise error(f"seed must be an integer >= 0 or None, got {clip(seed)}")
    return int(np.random.SeedSequence(None if seed is None else int(seed)).generate_state(1, dtype=np.uint64)[0])
