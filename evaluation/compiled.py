"""The fast evaluation backend: :mod:`lama_dice.evaluation.evaluate` plays native agents in the compiled batched engine.

:func:`lama_dice.evaluation.evaluate.run_games` (``backend="auto"`` or ``"fast"``) calls
:func:`supports` and, when it answers True, :func:`play_games` instead of its
scalar lockstep loop.  Natively supported agents are the heuristics of
:mod:`lama_env.batched` (``random``, ``always-roll``, ``threshold:T``,
``points:K``); they make exactly the decisions of the Python agents with the
same spec (``tests/test_batched.py`` checks this move by move), but draw
their random choices (``random``) and the dice from the batched engine's own
streams, so results agree with the scalar backend within sampling error, not
game by game.

A policy object counts as native only if its class is exactly
:class:`lama_dice.agents.base.RandomPolicy` or one of the heuristic classes of
:mod:`lama_dice.agents.heuristics` (not a subclass, which may decide differently); its
native spec is rebuilt from its own parameters, so a custom
:class:`~lama_dice.agents.base.Policy` that merely carries a native-looking ``spec`` is
played by the scalar backend.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Sequence

import numpy as np

from lama_env.rules import MAX_PLAYERS, MIN_PLAYERS, RulesConfig

if TYPE_CHECKING:  # pragma: no cover
    from lama_dice.agents.base import Policy
    from lama_dice.evaluation.evaluate import GameOutcomes

__all__ = ["supports", "play_games", "native_spec", "warmup"]


def _native_classes() -> dict[type, Callable[[Any], str]]:
    """Policy class -> the native spec of an instance (built from the instance's own parameters)."""
    from lama_dice.agents.base import RandomPolicy

    table: dict[type, Callable[[Any], str]] = {RandomPolicy: lambda p: "random"}
    try:
        from lama_dice.agents import heuristics as H
    except ImportError:  # pragma: no cover - heuristics are part of the package
        return table
    table[H.AlwaysRollPolicy] = lambda p: "always-roll"
    table[H.ThresholdPolicy] = lambda p: f"threshold:{float(p.threshold)!r}"
    table[H.PointsPolicy] = lambda p: f"points:{int(p.limit)}"
    return table


def native_spec(policy: Any) -> str | None:
    """The native spec of ``policy`` (a built policy or a spec string), or None if it is not native.

    A policy object is native only if its class is exactly one of the natively
    played classes (a subclass may override decisions); its spec is rebuilt
    from its parameters (``threshold:T`` with the policy's own ``T``), so
    default arguments and spelling variants of the spec do not matter.
    """
    from lama_env.batched import is_native

    if isinstance(policy, str):
        return policy.strip() if is_native(policy) else None
    to_spec = _native_classes().get(type(policy))
    if to_spec is None:
        return None
    spec = to_spec(policy)
    return spec if is_native(spec) else None


def supports(policies: Sequence["Policy"], num_players: int, rules: RulesConfig) -> bool:
    """Whether every one of ``policies`` can be played natively with ``num_players`` under ``rules``."""
    if isinstance(num_players, bool) or not isinstance(num_players, (int, np.integer)):
        return False
    if not MIN_PLAYERS <= num_players <= MAX_PLAYERS or not policies:
        return False
    if not isinstance(rules, RulesConfig):
        try:
            rules = RulesConfig.from_dict(rules)
        except (ValueError, TypeError):
            return False
    return all(native_spec(p) is not None for p in policies)


def play_games(policies: Sequence["Policy"], seating: np.ndarray, num_players: int,
               rules: RulesConfig, seed: int) -> "GameOutcomes":
    """Play ``len(seating)`` complete games in the batched engine.

    Args:
        policies: the agents (built policies or spec strings), all native (see :func:`supports`).
        seating: ``int64[G, N]``: ``policies[seating[g, s]]`` plays seat ``s`` of game ``g``.
        num_players: ``N``.
        rules: the rules.
        seed: an int >= 0; the result is a function of the arguments only.

    Returns:
        A :class:`lama_dice.evaluation.evaluate.GameOutcomes` with every optional array filled.

    Raises:
        lama_env.batched.NativePolicyError: a policy is not native, or bad arguments.
    """
    from lama_env.batched import NativePolicyError, play_batch
    from lama_dice.evaluation.evaluate import GameOutcomes

    specs = []
    for p in policies:
        s = native_spec(p)
        if s is None:
            raise NativePolicyError(f"agent {getattr(p, 'spec', p)!r} is not supported by the fast backend")
        specs.append(s)
    seating = np.asarray(seating, dtype=np.int64)
    res = play_batch(num_players, specs, seating=seating, rules=rules, seed=seed)
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
