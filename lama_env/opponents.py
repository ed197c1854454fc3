"""What the environments need of an opponent (:class:`PolicyLike`), and how a spec string becomes one.

A resolver given to :func:`register_resolver`, else a ``lama_env.agent_resolvers`` entry point (``lama-dice``'s
``make_agent``), turns spec strings (``"threshold:0.2"``) into objects, so the envs import no agents.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from importlib.metadata import entry_points
from typing import Protocol, runtime_checkable

from .engine import LamaGame
from .errors import LamaDiceError

#: The entry-point group that packages use to offer a resolver of agent specs.
ENTRY_POINT_GROUP = "lama_env.agent_resolvers"


@runtime_checkable
class PolicyLike(Protocol):
    """An agent the environments can seat: it picks a legal action for the player to act."""

    def act(self, game: LamaGame, legal: Sequence[int]) -> int:
        """One action of ``legal`` for ``game.current_player`` (``game`` must not be changed)."""

    def seed(self, seed: int | None) -> None:
        """Reseed the agent's own randomness."""


Resolver = Callable[[str], PolicyLike]  #: A resolver: an agent spec string -> a :class:`PolicyLike`.

_resolvers: list[Resolver] = []
_entry_points_loaded = False


class NoResolverError(LamaDiceError, LookupError):
    """An opponent was given as a spec string, but no resolver of agent specs is installed."""


def register_resolver(resolver: Resolver) -> None:
    """Make ``resolver`` the one that turns agent specs into policies (the last registered wins)."""
    if resolver in _resolvers:
        _resolvers.remove(resolver)
    _resolvers.append(resolver)


def _load_entry_points() -> None:
    global _entry_points_loaded
    if _entry_points_loaded:
        return
    _entry_points_loaded = True
    for ep in entry_points(group=ENTRY_POINT_GROUP):
        if not _resolvers:  # a resolver registered by hand is never replaced
            _resolvers.append(ep.load())


def resolve(spec: str) -> PolicyLike:
    """The policy that ``spec`` names, built by the registered resolver (none: :class:`NoResolverError`)."""
    _load_entry_points()
    if not _resolvers:
        raise NoResolverError(
            f"cannot build the opponent {spec!r}: no resolver of agent specs is installed "
            "(install lama-dice, or pass policy objects, or register one with "
            "lama_env.opponents.register_resolver)")
    return _resolvers[-1](spec)
