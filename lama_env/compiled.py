"""The compiled engine's functions for compiled code outside ``lama_env`` (Numba inlines them into its kernels).

The step, the next deal, the legal actions, the win rule and the observation encoder every engine of ``lama_env``
plays through, for kernels of other packages (the search's rollouts) over :data:`STATE_DTYPE` records
(docs/environments.md, The compiled engine's record); the rules record: :func:`lama_env.vector.encoder_rules`.
"""

from __future__ import annotations

from ._kernel import STATE_DTYPE, legal, next_round, transition_roll, win_result
from ._vector_kernel import encode

__all__ = ["STATE_DTYPE", "encode", "legal", "next_round", "transition_roll", "win_result"]
