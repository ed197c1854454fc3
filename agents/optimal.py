"""The ``solo-optimal`` agent (also ``optimal``): the exact optimal policy of the *solo* round, in any player count.

Its name says what it optimizes: the expected points of one round of the
solo game.  At a table it ignores the other players, the llama row and the
chips, so it is a strong heuristic there but not an optimal player of the
multiplayer game.  ``optimal`` is its earlier name, kept as an alias so
that every published command (the suite's included) still runs;
an agent built from ``optimal`` prints as ``optimal``.

Decisions (``d`` = the acting player's display, values from
:class:`lama_dice.agents.solver.SoloSolver` for the game's rules, round points only):

* **turn**: quit iff ``score_display(d) <= roll_value(d)`` (ties quit);
* **discard**: the legal discard leaving the display of least solo value
  (going out is worth 0); ties to the larger discard, then the lower action;
* **take** (multiplayer only): the legal take leaving the display of least
  solo value; ties to fewer added points, then the lower face value (L = 10).

It is optimal for the solo variant (it minimises expected round points there)
and a strong, deterministic baseline in multiplayer, where it ignores the
other players, the llama row and the chips.
"""

from __future__ import annotations

from collections.abc import Sequence

from lama_env import actions as A
from lama_env.engine import LamaGame, Phase
from lama_env.rules import RulesConfig

from .base import Policy
from .registry import AgentSpecError, register, register_alias
from .solver import SoloSolver, solver_for


class OptimalPolicy(Policy):
    """Plays the solo round's exact optimal policy (see the module docstring)."""

    spec = "solo-optimal"

    def solver(self, rules: RulesConfig) -> SoloSolver:
        """The (shared, cached) solo solver of ``rules``."""
        return solver_for(rules)

    def wants_quit(self, display: Sequence[int], rules: RulesConfig) -> bool:
        """Quit iff the solo solver says so (:meth:`SoloSolver.quits`)."""
        return self.solver(rules).quits(display)

    def choose_discard(self, display: Sequence[int], legal: Sequence[int], rules: RulesConfig) -> int:
        """The legal discard leaving the display of least value (:meth:`SoloSolver.best_discard_action`)."""
        return self.solver(rules).best_discard_action(display, legal)

    def choose_take(self, display: Sequence[int], legal: Sequence[int], rules: RulesConfig) -> int:
        """The legal take leaving the display of least solo value (:meth:`SoloSolver.best_take`)."""
        return self.solver(rules).best_take(display, legal)

    def act(self, game: LamaGame, legal: Sequence[int]) -> int:
        """The solo-optimal decision for the current player's display (the other players are ignored)."""
        solver = self.solver(game.rules)
        display = game.displays[game.current_player]
        phase = game.phase
        if phase == Phase.TURN:
            return A.QUIT if solver.quits(display) else A.ROLL
        if phase == Phase.DISCARD:
            return solver.best_discard_action(display, legal)
        return solver.best_take(display, legal)


def _make(arg: str | None) -> OptimalPolicy:
    if arg is not None:
        raise AgentSpecError(f"agent spec 'solo-optimal' takes no argument, got {arg!r}")
    return OptimalPolicy()


register("solo-optimal", _make, "solo-optimal",
         "the exact optimum of the SOLO round (min expected round points), played in any player count "
         "(ignores the other players and the chips)")
register_alias("optimal", "solo-optimal")
