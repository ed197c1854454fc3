"""The compiled engine's functions for compiled code outside ``lama_env`` (Numba inlines them into its kernels).

A kernel of another package (:mod:`lama_dice.agents`' compiled rollouts of
``search:NET,rollouts=R``) plays games held as records of :data:`STATE_DTYPE` (one game's record:
:func:`lama_env.snapshot.to_state`) with the very functions every engine of ``lama_env``
plays through, imported from here: the step (:func:`transition_roll`: one legal action, a roll's
dice given or drawn from the record's stream), the next deal (:func:`next_round`), the legal
actions (:func:`legal`), the win rule (:func:`win_result`, :func:`lama_env.rules.win_result`
compiled) and the observation encoder (:func:`encode`, bit-equal to
:func:`lama_env.observation.encode`).  The rules travel as one record
(:func:`lama_env.vector.encoder_rules`); the codes the step returns and the record's phases are
:mod:`lama_env.constants`' (``CONTINUES``, ``ROUND_OVER``, ``GAME_OVER``; ``TURN``, ``DISCARD``,
``TAKE``).
"""

from __future__ import annotations

from ._kernel import STATE_DTYPE, legal, next_round, transition_roll, win_result
from ._vector_kernel import encode

__all__ = ["STATE_DTYPE", "encode", "legal", "next_round", "transition_roll", "win_result"]
