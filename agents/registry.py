"""Agent specs: the strings the CLI, YAML configs and the Gymnasium env accept.

A spec is ``NAME`` or ``NAME:ARG`` (``threshold:0.2``, ``ppo:runs/x/best.zip``).
Modules register their agents with :func:`register`; :func:`make_agent`
builds one and raises :class:`AgentSpecError` (listing the valid specs) for
an unknown or malformed spec.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass

from lama_env.errors import LamaDiceError, clip

from .base import Policy, RandomPolicy


class AgentSpecError(LamaDiceError, ValueError):
    """An unknown or malformed agent spec."""


@dataclass(frozen=True)
class AgentEntry:
    """One registered agent.

    Attributes:
        name: the spec's name (the text before ``:``).
        factory: builds the agent; called with the text after ``:`` (or None).
        usage: the spec's form, e.g. ``"threshold:T"``.
        help: what the agent does, in one line.
        alias_of: for another name of a registered agent (kept so that published commands still run),
            the name it stands for.
    """

    name: str
    factory: Callable[[str | None], Policy]  #: called with the text after ':' (or None)
    usage: str  #: e.g. "threshold:T"
    help: str
    alias_of: str | None = None


_REGISTRY: dict[str, AgentEntry] = {}

#: Modules imported on first use so that their agents register themselves.
AGENT_MODULES = ("lama_dice.agents.heuristics", "lama_dice.agents.optimal", "lama_dice.agents.lookahead",
                 "lama_dice.agents.ppo", "lama_dice.agents.rllib_agent", "lama_dice.agents.python_agent",
                 "lama_dice.agents.mcts", "lama_dice.agents.rollout")  # rollout: the search: spec


def register(name: str, factory: Callable[[str | None], Policy], usage: str, help: str) -> None:
    """Register an agent ``name``; ``factory(arg)`` builds it from the text after ``:``."""
    _REGISTRY[name] = AgentEntry(name, factory, usage, help)


def register_alias(alias: str, name: str) -> None:
    """Register ``alias`` as another name of the registered agent ``name`` (same factory).

    An agent built from the alias keeps the alias as its :attr:`~Policy.spec`, so that
    tables and reports made with the earlier name print it unchanged.
    """
    entry = _REGISTRY[name]
    usage = entry.usage.replace(name, alias, 1)
    _REGISTRY[alias] = AgentEntry(alias, entry.factory, usage, f"= {entry.usage} (its earlier name)", alias_of=name)


def _load_all() -> None:
    for mod in AGENT_MODULES:
        try:
            importlib.import_module(mod)
        except ModuleNotFoundError as e:
            if e.name != mod:  # a real missing dependency inside the module
                raise


def registered() -> dict[str, AgentEntry]:
    """Every registered agent by name (after importing :data:`AGENT_MODULES`)."""
    _load_all()
    return dict(_REGISTRY)


def agent_specs_help() -> str:
    """A one-line-per-spec description of the valid specs."""
    return "\n".join(f"  {e.usage:<16} {e.help}" for e in registered().values())


def make_agent(spec: str | Policy, *, seed: int | None = None) -> Policy:
    """Build the agent of ``spec`` (a policy object is passed through, reseeded if ``seed`` is given)."""
    if isinstance(spec, Policy):
        if seed is not None:
            spec.seed(seed)
        return spec
    if not isinstance(spec, str) or not spec.strip():
        raise AgentSpecError(f"an agent spec must be a non-empty string, got {clip(spec)}")
    name, sep, arg = spec.strip().partition(":")
    entries = registered()
    if name not in entries:
        valid = ", ".join(e.usage for e in entries.values())
        raise AgentSpecError(f"unknown agent spec {clip(spec)}; valid specs: {valid}")
    try:
        agent = entries[name].factory(arg if sep else None)
    except AgentSpecError:
        raise
    except (ValueError, TypeError) as e:
        raise AgentSpecError(f"bad agent spec {clip(spec)} ({entries[name].usage}): {e}") from None
    agent.spec = spec.strip()
    agent.seed(seed)
    return agent


def _no_arg(name: str, arg: str | None) -> None:
    if arg is not None:
        raise AgentSpecError(f"agent spec {clip(name)} takes no argument, got {name}:{arg}")


def _make_random(arg: str | None) -> RandomPolicy:
    _no_arg("random", arg)
    return RandomPolicy()


register("random", _make_random, "random", "uniform over legal actions")
