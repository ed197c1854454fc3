"""Agents: heuristics, exact solvers and trained-policy wrappers.

Every agent implements :class:`lama_dice.agents.base.Policy`; agents are built from
spec strings (``"random"``, ``"threshold:0.2"``, ``"ppo:PATH"``...) by
:func:`lama_dice.agents.registry.make_agent`.
"""

from .base import Policy
from .registry import AgentSpecError, agent_specs_help, make_agent, register

__all__ = ["AgentSpecError", "Policy", "agent_specs_help", "make_agent", "register"]
