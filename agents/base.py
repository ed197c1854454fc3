"""The one policy interface used by the evaluator, the environments' opponents and the terminal game.

A policy sees the engine state (every fact in the game is public, so the
state *is* the observation of the seat to act) and the legal actions, and
returns one of them::

    class MyAgent(Policy):
        def act(self, game, legal):
            return legal[0]

``game`` is a :class:`lama_env.engine.LamaGame`; the acting seat is
``game.current_player`` and ``legal == game.legal_actions()`` (never empty).
A policy must not mutate ``game`` (use ``game.clone()`` to search).

Batched use: :meth:`Policy.act_batch` takes many games at once; learned
policies override it with one forward pass for all of them.

Randomness: a policy that draws (a sampling network, ``mcts:N``, ``search:``) takes its
draws at a decision from :meth:`Policy.decision_rng`, keyed by the game and the decision
(on a game given a ``game_id``), so that a seeded evaluation plays the same games whatever
the chunk size, the number of worker processes and the order of the games in a batch.

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

_MASK64 = (1 << 64) - 1


class Policy:
    """Base class of all agents.

    Attributes:
        spec: the spec string that builds this agent (set by the registry).
    """

    spec: str = "policy"
    #: the salt of :meth:`decision_rng` (set by :meth:`seed` and :meth:`seed_decisions`; None: unseeded)
    decision_salt: int | None = None

    def __init__(self) -> None:
        """Start with an unseeded random generator (:meth:`seed` reseeds it)."""
        self.rng = np.random.default_rng()

    def seed(self, seed: int | None) -> None:
        """Reseed the policy's own randomness (:attr:`rng`, and the salt of :meth:`decision_rng`: ``seed``)."""
        self.rng = np.random.default_rng(seed)
        self.decision_salt = None if seed is None else int(seed) & _MASK64

    def seed_decisions(self, salt: int | None) -> None:
        """Set the salt of :meth:`decision_rng` alone (:attr:`rng` is unchanged; None: draw from :attr:`rng`).

        The evaluator reseeds :attr:`rng` per chunk of games and gives every policy one salt
        for the whole run, so that the draws keyed by the decision do not depend on the chunks.
        """
        self.decision_salt = None if salt is None else int(salt) & _MASK64

    def decision_seed(self, game: LamaGame) -> int | None:
        """This policy's 64-bit seed at ``game``'s current decision, or None (draw from :attr:`rng`).

        None unless the policy is seeded: then
        :meth:`lama_env.engine.LamaGame.decision_seed` of the policy's salt, the same at the same
        point of the same game in any batch, chunk or process.
        """
        salt = self.decision_salt
        return None if salt is None else game.decision_seed(salt)

    def decision_rng(self, game: LamaGame) -> np.random.Generator:
        """The generator of this policy's draws at ``game``'s current decision.

        A fresh generator of :meth:`decision_seed` where there is one, else :attr:`rng`
        itself (an unseeded policy: draws then depend on the order in which the policy is asked).
        """
        s = self.decision_seed(game)
        return self.rng if s is None else np.random.default_rng(s)

    def decision_integers(self, games: Sequence[LamaGame], high: int, size: int) -> np.ndarray:
        """``[len(games), size]`` integers in ``[0, high)``: each row from :meth:`decision_rng` of its game.

        With no decision seed for any of the games, the rows are one draw of :attr:`rng`
        (``rng.integers(high, size=(len(games), size))``).
        """
        seeds = [self.decision_seed(g) for g in games]
        if all(s is None for s in seeds):
            return self.rng.integers(high, size=(len(games), size))
        return np.stack([(self.rng if s is None else np.random.default_rng(s)).integers(high, size=size)
                         for s in seeds]).reshape(len(games), size)

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

        The draw is the game's own (:meth:`lama_env.engine.LamaGame.sample_action`, one draw
        at every decision), as the compiled engine's ``random`` agent draws; over another
        list of actions than the game's legal ones it comes from this policy's generator (no
        draw when only one action is legal).
        """
        if legal is game.legal_actions() or tuple(legal) == game.legal_actions():
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
