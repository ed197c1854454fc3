"""The backends that play an evaluation's games, and the choice between them.

A backend is any object that meets the :class:`Backend` protocol.  There are two:

* ``"python"``: :class:`lama_dice.evaluation.scalar.ScalarBackend` plays any
  :class:`~lama_dice.agents.base.Policy` in the rules engine
  (:class:`~lama_env.engine.LamaGame`), in lockstep chunks, optionally in worker
  processes, and can record the games;
* ``"fast"``: :class:`lama_dice.evaluation.compiled.CompiledBackend` plays the
  native heuristics in the compiled batched engine (:mod:`lama_env.batched`,
  Numba), imported only when it is asked for (:func:`load_compiled`).

:func:`choose_backend` picks one for ``backend="auto" | "python" | "fast"``.
The statistics are computed from the :class:`~lama_dice.evaluation.outcomes.GameOutcomes`
a backend returns, in one place (:func:`lama_dice.evaluation.outcomes.agent_stats`),
so the backends' random streams need not match: their statistics agree within
sampling error.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

import numpy as np

from lama_dice.agents.base import Policy
from lama_env.rules import RulesConfig

from .outcomes import EvaluationError, GameOutcomes

__all__ = ["BACKENDS", "Backend", "choose_backend", "load_compiled"]

#: Accepted values of ``backend``.
BACKENDS = ("auto", "python", "fast")


@runtime_checkable
class Backend(Protocol):
    """What plays an evaluation's games.

    Attributes:
        name: what the result reports as its ``backend`` (``"python"``, ``"fast"``).
    """

    name: str

    def supports(self, policies: Sequence[Policy], num_players: int, rules: RulesConfig) -> bool:
        """Whether this backend can play every one of ``policies`` under ``rules`` with ``num_players``.

        Args:
            policies: the built policies, in agent order.
            num_players: seats per game.
            rules: the rules to play.
        """
        ...

    def play_games(self, policies: Sequence[Policy], seating: np.ndarray, num_players: int,
                   rules: RulesConfig, seed: int) -> GameOutcomes:
        """Play ``G = len(seating)`` complete games and return their outcomes.

        In game ``g`` seat ``s`` is played by ``policies[seating[g, s]]``.  The
        games follow RULES.md exactly as :class:`~lama_env.engine.LamaGame`
        does (player 0 starts round 1; deals and dice at random from ``seed``).
        ``busts``/``quits``/``went_out`` of the result may be None if not
        tracked.

        Args:
            policies: the built policies, in agent order (all supported, see :meth:`supports`).
            seating: ``int64[G, N]`` indices into ``policies``; the result's ``seating`` is this array.
            num_players: ``N``.
            rules: the rules to play.
            seed: an int >= 0; the result is a function of the arguments only
                (not of threads, cores or worker processes).
        """
        ...


def load_compiled() -> Backend:
    """The compiled backend (``"fast"``); raises ``ImportError`` where it cannot be loaded.

    Imported here, on first use, so that the scalar backend never pays for Numba.
    """
    from .compiled import CompiledBackend

    return CompiledBackend()


def choose_backend(backend: str, policies: Sequence[Policy], num_players: int, rules: RulesConfig,
                   scalar: Backend, *, need_records: bool = False) -> Backend:
    """The backend to play with: the compiled one or ``scalar``.

    ``"auto"`` takes the compiled backend when it loads, supports the agents
    and no game is to be recorded, else ``scalar``; ``"fast"`` insists on the
    compiled backend (an :class:`~lama_dice.evaluation.outcomes.EvaluationError`
    says why it cannot be used); ``"python"`` is ``scalar``.

    Args:
        backend: ``"auto"``, ``"python"`` or ``"fast"``.
        policies: the built policies, in agent order.
        num_players: seats per game.
        rules: the rules to play.
        scalar: the scalar backend, set up for this run.
        need_records: whether game records are wanted (only the scalar backend makes them).
    """
    if backend not in BACKENDS:
        raise EvaluationError(f"backend must be one of {', '.join(BACKENDS)}, got {backend!r}")
    if backend == "python":
        return scalar
    try:
        fast = load_compiled()
    except ImportError as e:
        if backend == "fast":
            raise EvaluationError(f"the fast backend is not available: {e}") from None
        return scalar
    if need_records:
        if backend == "fast":
            raise EvaluationError("the fast backend cannot save games; use backend 'python' or 'auto'")
        return scalar
    if not fast.supports(list(policies), num_players, rules):
        if backend == "fast":
            specs = ", ".join(getattr(p, "spec", "?") for p in policies)
            raise EvaluationError(f"the fast backend does not support these agents/rules ({specs})")
        return scalar
    return fast
