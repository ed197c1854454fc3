"""Agents in the compiled batched engine: agent specs and policies to native descriptions.

:mod:`lama_env.batched` plays plain-data policy descriptions
(:class:`~lama_env.batched.NativePolicy`) and knows no agent; each policy
describes itself (:meth:`lama_dice.agents.base.Policy.native`: ``random``,
``always-roll``, ``threshold:T``, ``points:K``).  This module adds what the
engine cannot do without the agents: building a policy from its spec::

    from lama_dice.agents.native import play_batch

    res = play_batch(2, ["threshold:0.2", "random"], games=10_000, seed=1)
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from lama_env import batched
from lama_env.batched import BatchResult, NativePolicy, NativePolicyError
from lama_env.errors import LamaDiceError
from lama_env.rules import RulesConfig

from .base import Policy
from .registry import make_agent

__all__ = ["NativePolicy", "NativePolicyError", "is_native", "native_policy", "play_batch"]


def _rules(rules: RulesConfig | Mapping | None) -> RulesConfig:
    return RulesConfig.from_dict(rules)


def native_policy(agent: str | Policy | NativePolicy, rules: RulesConfig | Mapping | None = None) -> NativePolicy:
    """The native description of ``agent`` (a spec, a policy or a description) under ``rules``.

    Raises:
        NativePolicyError: the agent has no native description (or the spec is malformed).
    """
    rules = _rules(rules)
    label = agent
    if not isinstance(agent, (NativePolicy, Policy)):
        try:
            agent = make_agent(agent)
        except (LamaDiceError, ValueError, TypeError, ImportError) as e:
            raise NativePolicyError(f"{label!r} is not a native policy: {e}") from None
    desc = batched.native_description(agent, rules, required=isinstance(agent, NativePolicy))
    if desc is None:
        raise NativePolicyError(f"{getattr(agent, 'spec', label)!r} is not a native policy "
                                "(the batched engine plays agents that describe themselves natively: "
                                "random, always-roll, threshold:T, points:K)")
    return desc


def is_native(agent: Any, rules: RulesConfig | Mapping | None = None) -> bool:
    """Whether ``agent`` (a spec or a policy) can be played by the batched engine."""
    try:
        native_policy(agent, rules)
    except NativePolicyError:
        return False
    return True


def play_batch(num_players: int, agents: Sequence[str | Policy | NativePolicy], *,
               rules: RulesConfig | Mapping | None = None, **kwargs: Any) -> BatchResult:
    """:func:`lama_env.batched.play_batch` with agent specs, policies or descriptions (same arguments)."""
    rules = _rules(rules)
    return batched.play_batch(num_players, [native_policy(a, rules) for a in agents], rules=rules, **kwargs)
