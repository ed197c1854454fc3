"""The compiled backend (``"fast"``): native agents play in the compiled batched engine.

:class:`CompiledBackend` meets :class:`lama_dice.evaluation.backends.Backend`:
:func:`lama_dice.evaluation.backends.choose_backend` (``backend="auto"`` or
``"fast"``) loads it on first use, asks :func:`supports` and, when it answers
True, plays with :func:`play_games` instead of the scalar backend
(:mod:`lama_dice.evaluation.scalar`).  Natively supported agents are those whose policy
describes itself for the batched engine (:meth:`lama_dice.agents.base.Policy.native`:
``random``, ``always-roll``, ``threshold:T``, ``points:K``, and not their
subclasses); they make exactly the decisions of the Python agents
(``tests/test_batched.py`` checks this move by move), but draw their random
choices (``random``) and the dice from the batched engine's own streams, so
results agree with the scalar backend within sampling error, not game by game.
The games are played by the package's one compiled transition
(:mod:`lama_env._kernel`, which :class:`lama_env.vector.VectorGame` and the vector
envs step too): a ``random`` seat here decides as
:meth:`lama_env.vector.VectorGame.sample_actions` does, from the same streams.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from lama_env.rules import RulesConfig, is_num_players

from .outcomes import GameOutcomes

if TYPE_CHECKING:  # pragma: no cover
    from lama_dice.agents.base import Policy

__all__ = ["CompiledBackend", "native_spec", "play_games", "supports", "warmup"]


class CompiledBackend:
    """The ``"fast"`` backend (a :class:`lama_dice.evaluation.backends.Backend`): the functions of this module."""

    name = "fast"

    def supports(self, policies: Sequence[Policy], num_players: int, rules: RulesConfig) -> bool:
        """See :func:`supports`."""
        return supports(policies, num_players, rules)

    def play_games(self, policies: Sequence[Policy], seating: np.ndarray, num_players: int,
                   rules: RulesConfig, seed: int) -> GameOutcomes:
        """See :func:`play_games`."""
        return play_games(policies, seating, num_players, rules, seed)


def native_spec(policy: Any, rules: RulesConfig | None = None) -> str | None:
    """The native spec of ``policy`` (a built policy or a spec string), or None if it is not native.

    The spec is the label of the policy's native description, built from its
    own parameters (``threshold:T`` with the policy's own ``T``), so default
    arguments and spelling variants of the spec do not matter.
    """
    from lama_dice.agents.native import NativePolicyError, native_policy

    try:
        return native_policy(policy, rules).spec
    except NativePolicyError:
        return None


def supports(policies: Sequence[Policy], num_players: int, rules: RulesConfig) -> bool:
    """Whether every one of ``policies`` can be played natively with ``num_players`` under ``rules``."""
    if not is_num_players(num_players) or not policies:
        return False
    try:
        rules = RulesConfig.from_dict(rules)
    except (ValueError, TypeError):
        return False
    return all(native_spec(p, rules) is not None for p in policies)


def play_games(policies: Sequence[Policy], seating: np.ndarray, num_players: int,
               rules: RulesConfig, seed: int) -> GameOutcomes:
    """Play ``len(seating)`` complete games in the batched engine.

    Args:
        policies: the agents (built policies or spec strings), all native (see :func:`supports`).
        seating: ``int64[G, N]``: ``policies[seating[g, s]]`` plays seat ``s`` of game ``g``.
        num_players: ``N``.
        rules: the rules.
        seed: an int >= 0; the result is a function of the arguments only.

    Returns:
        A :class:`lama_dice.evaluation.outcomes.GameOutcomes` with every optional array filled.

    Raises:
        lama_env.batched.NativePolicyError: a policy is not native, or bad arguments.
    """
    from lama_dice.agents.native import NativePolicyError, native_policy
    from lama_env.batched import play_batch

    natives = []
    for p in policies:
        try:
            natives.append(native_policy(p, rules))
        except NativePolicyError:
            raise NativePolicyError(f"agent {getattr(p, 'spec', p)!r} is not supported by the fast backend") from None
    seating = np.asarray(seating, dtype=np.int64)
    res = play_batch(num_players, natives, seating=seating, rules=rules, seed=seed)
    return GameOutcomes(seating=seating, totals=res.totals, round_points=res.round_points,
                        rounds=res.rounds, busts=res.busts, quits=res.quits, went_out=res.went_out)


def warmup() -> float:
    """Load (or compile, on the very first use) the batched engine's kernel now; return the seconds it took.

    The first call in a process costs about half a second with the on-disk
    Numba cache warm (a few seconds to compile without it); callers that time
    an evaluation can call this first to leave that one-time cost out.
    """
    from lama_env.batched import compile_kernel

    return compile_kernel()
