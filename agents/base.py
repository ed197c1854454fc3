"""The one policy interface used by the evaluator, the environments' opponents and the terminal game.

A policy sees the engine state (every fact in the game is public, so the
state *is* the observation of the seat to act) and the legal actions, and
returns one of them::

    class MyAgent(Policy):
        def act(self, game, legal):
            return legal[0]

``game`` is a :class:`lama_env.engine.LamaGame`; the acting seat is
``game.current_player`` and ``legal == game.legal_actions()`` (never empty).
A policy must not mutate ``game`` (use ``game.copy()`` to search).

Batched use: :meth:`Policy.act_batch` takes many games at once; learned
policies override it with one forward pass for all of them.

Native play: :meth:`Policy.native` describes a policy as plain data for the
compiled batched engine (:mod:`lama_env.batched`), which then plays it without
calling Python; a policy that has no such description returns None.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from lama_env.engine import LamaGame
from lama_env.rules import RulesConfig

if TYPE_CHECKING:  # pragma: no cover
    from lama_env.batched import NativePolicy


class Policy:
    """Base class of all agents.

    Attributes:
        spec: the spec string that builds this agent (set by the registry).
    """

    spec: str = "policy"

    def __init__(self) -> None:
        """Start with an unseeded random generator (:meth:`seed` reseeds it)."""
        self.rng = np.random.default_rng()

    def seed(self, seed: int | None) -> None:
        """Reseed the policy's own randomness (tie-breaks, random choices)."""
        self.rng = np.random.default_rng(seed)

    def act(self, game: LamaGame, legal: Sequence[int]) -> int:
        """Return one action of ``legal`` for ``game.current_player``."""
        raise NotImplementedError

    def act_batch(self, games: Sequence[LamaGame], legals: Sequence[Sequence[int]]) -> list[int]:
        """Actions for many games at once (default: one :meth:`act` per game)."""
        return [self.act(g, legal) for g, legal in zip(games, legals, strict=True)]

    def native(self, rules: RulesConfig) -> NativePolicy | None:
        """This policy's decisions under ``rules`` as a :class:`lama_env.batched.NativePolicy`, or None.

        The batched engine plays a policy that describes itself this way with
        the same decisions (``tests/test_batched.py`` checks the shipped ones
        move by move); the default is None (not natively playable).
        """
        return None

    def __repr__(self) -> str:
        """Show the class and the spec, e.g. ``<ThresholdPolicy threshold:0.2>``."""
        return f"<{type(self).__name__} {self.spec}>"


class RandomPolicy(Policy):
    """Uniform over the legal actions."""

    spec = "random"

    def act(self, game: LamaGame, legal: Sequence[int]) -> int:
        """Pick a legal action uniformly at random.

        In a game on the compiled engine's streams (``LamaGame(..., game_id=...)``) the draw
        is the game's own (:meth:`lama_env.engine.LamaGame.sample_action`, one draw at every
        decision), as the compiled engine's ``random`` agent draws; otherwise it comes from
        this policy's generator (no draw when only one action is legal).
        """
        if game.on_compiled_streams and (legal is game.legal_actions() or tuple(legal) == game.legal_actions()):
            return game.sample_action()
        return legal[int(self.rng.integers(len(legal)))] if len(legal) > 1 else legal[0]

    def native(self, rules: RulesConfig) -> NativePolicy | None:
        """Uniform over the legal actions (the kernel's own random stream).

        Returns:
            The kernel's :data:`lama_env.batched.KIND_RANDOM` policy, or None for a
            subclass, which may decide differently.
        """
        if type(self) is not RandomPolicy:
            return None
        from lama_env.batched import NativePolicy

        return NativePolicy.random("random")
