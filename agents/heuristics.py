"""Rule-based agents: ``always-roll``, ``threshold:T`` and ``points:K``.

They differ only in the turn decision (roll or quit); after a roll all three
discard and take the same way.  The exact rules (each policy also describes
itself as tables for the compiled batched engine, :meth:`HeuristicPolicy.native`,
built from these same methods):

=================  ===========================================================
spec               turn decision (``d`` = the acting player's display)
=================  ===========================================================
``always-roll``    always roll (never quits)
``threshold:T``    quit iff ``p_no_match(d) >= T`` (default ``T = 0.2``), else
                   roll; ``p_no_match`` is the exact probability that the next
                   roll shows no face held in ``d``
                   (:func:`lama_env.odds.p_no_match`), whatever the row and the
                   other players; ``0 <= T <= 1``
``points:K``       roll iff ``score_display(d) > K`` (default ``K = 10``), else
                   quit; ``K`` is an integer ``>= 0``
=================  ===========================================================

* **Discard** (after a matching roll): discard all it can, i.e. the legal
  discard with the most cards, which is the one whose counts equal the
  per-face limits ``min(dice showing f, cards of f in d)``
  (:func:`maximal_discard`).
* **Take** (after a roll that forces a take): the cheapest row card, i.e.
  the take minimising ``(score_display(d + card) - score_display(d),
  face value)`` with the face value of ``L`` counted as 10: fewest added
  points, ties to the lower face value (:func:`cheapest_take`).

None of them uses randomness (``random``, uniform over the legal actions,
is :class:`lama_dice.agents.base.RandomPolicy`).  Each implements
:class:`lama_dice.agents.solver.SoloPolicy`, so
:meth:`lama_dice.agents.solver.SoloSolver.policy_value` computes its exact solo value.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from functools import cache
from typing import TYPE_CHECKING

from lama_env import actions as A
from lama_env.engine import LamaGame, Phase
from lama_env.errors import clip
from lama_env.odds import p_no_match
from lama_env.rules import LLAMA, RulesConfig, score_display
from lama_env.transitions import FULL_ROW, apply_take

from .base import Policy
from .registry import AgentSpecError, register

if TYPE_CHECKING:  # pragma: no cover
    from lama_env.batched import NativePolicy

#: Defaults of the spec arguments.
DEFAULT_THRESHOLD = 0.2
DEFAULT_POINTS = 10


def maximal_discard(legal: Sequence[int]) -> int:
    """The legal discard action with the most cards (unique: the one at the per-face limits)."""
    return max(legal, key=lambda a: (sum(A.DISCARDS[a - A.DISCARD_BASE]), a))


def take_cost(display: Sequence[int], face: int) -> tuple[int, int]:
    """``(points added to display by a card of face, face value with L = 10)``: the key ``cheapest_take`` minimises."""
    after = apply_take(display, FULL_ROW, A.take_action(face))[0]
    return score_display(after) - score_display(display), 10 if face == LLAMA else face


def cheapest_take(display: Sequence[int], legal: Sequence[int]) -> int:
    """The legal take action adding the fewest points to ``display``, ties to the lower face value (L = 10)."""
    return min(legal, key=lambda a: take_cost(display, a - A.TAKE_BASE))


class HeuristicPolicy(Policy):
    """Base of the rule-based agents: a turn rule, the maximal discard and the cheapest take.

    Subclasses define :meth:`wants_quit`.
    """

    def wants_quit(self, display: Sequence[int], rules: RulesConfig) -> bool:
        """At a turn with ``display``: quit (True) or roll (False)."""
        raise NotImplementedError

    def choose_discard(self, display: Sequence[int], legal: Sequence[int], rules: RulesConfig | None = None) -> int:
        """Discard all it can (:func:`maximal_discard`)."""
        return maximal_discard(legal)

    def choose_take(self, display: Sequence[int], legal: Sequence[int], rules: RulesConfig | None = None) -> int:
        """Take the cheapest row card (:func:`cheapest_take`)."""
        return cheapest_take(display, legal)

    def act(self, game: LamaGame, legal: Sequence[int]) -> int:
        """Quit or roll by :meth:`wants_quit`, else :meth:`choose_discard` or :meth:`choose_take`."""
        display = game.displays[game.current_player]
        phase = game.phase
        if phase == Phase.TURN:
            return A.QUIT if self.wants_quit(display, game.rules) else A.ROLL
        if phase == Phase.DISCARD:
            return self.choose_discard(display, legal)
        return self.choose_take(display, legal)

    def native_spec(self) -> str:
        """The spec of this policy with its own parameters (``threshold:0.2``), as the native description's label."""
        raise NotImplementedError

    def native(self, rules: RulesConfig) -> NativePolicy | None:
        """These decisions as tables for the batched engine (:data:`lama_env.batched.KIND_TABLE`).

        The quit table is :meth:`wants_quit` at every set of held faces and
        the take ranks order the faces by :func:`take_cost`; the kernel's table
        kind discards all it can, like :meth:`choose_discard`.  That is exact
        because the turn rules of the shipped heuristics read only which faces
        a display holds (so do ``p_no_match`` and ``score_display``), and so
        does :func:`take_cost`.  None for any other class (a subclass may
        decide differently).
        """
        if type(self) not in _NATIVE_CLASSES:
            return None
        from lama_env.batched import NUM_MASKS, NativePolicy, mask_display

        quit_table = [self.wants_quit(mask_display(m), rules) for m in range(NUM_MASKS)]
        return NativePolicy.table(self.native_spec(), quit_table, _take_ranks(), rules)


@cache
def _take_ranks() -> tuple[tuple[int, ...], ...]:
    """``rank[mask][f]``: face ``f``'s place in :func:`cheapest_take`'s order.

    For a display holding the faces of ``mask``.
    """
    from lama_env.batched import NUM_MASKS, mask_display

    out = []
    for m in range(NUM_MASKS):
        d = mask_display(m)
        order = sorted(range(len(d)), key=lambda f: (take_cost(d, f), f))
        out.append(tuple(order.index(f) for f in range(len(d))))
    return tuple(out)


class AlwaysRollPolicy(HeuristicPolicy):
    """Never quits: always rolls at a turn."""

    spec = "always-roll"

    def wants_quit(self, display: Sequence[int], rules: RulesConfig) -> bool:
        """Never quit."""
        return False

    def native_spec(self) -> str:
        """The spec ``always-roll`` (no parameters)."""
        return "always-roll"


class ThresholdPolicy(HeuristicPolicy):
    """Quits when the chance that the next roll matches nothing is at least ``threshold``.

    Args:
        threshold: ``T`` in ``[0, 1]``: quit iff ``p_no_match(display) >= T``.
    """

    def __init__(self, threshold: float = DEFAULT_THRESHOLD) -> None:
        """Check and keep ``threshold``.

        Raises:
            AgentSpecError: ``threshold`` is not a probability in ``[0, 1]``.
        """
        super().__init__()
        if isinstance(threshold, bool) or not isinstance(threshold, (int, float)) \
                or not math.isfinite(threshold) or not 0.0 <= threshold <= 1.0:
            raise AgentSpecError(f"threshold:T needs a probability T in [0, 1], got {clip(threshold)}")
        self.threshold = float(threshold)
        self.spec = f"threshold:{threshold:g}"

    def wants_quit(self, display: Sequence[int], rules: RulesConfig) -> bool:
        """Quit iff ``p_no_match(display, rules) >= threshold``."""
        return p_no_match(display, rules) >= self.threshold

    def native_spec(self) -> str:
        """The spec ``threshold:T`` with the exact threshold (its ``repr``)."""
        return f"threshold:{self.threshold!r}"


class PointsPolicy(HeuristicPolicy):
    """Rolls while its round points exceed ``limit``, then quits.

    Args:
        limit: ``K``, an integer ``>= 0``: quit iff ``score_display(display) <= K``.
    """

    def __init__(self, limit: int = DEFAULT_POINTS) -> None:
        """Check and keep ``limit``.

        Raises:
            AgentSpecError: ``limit`` is not an integer ``>= 0``.
        """
        super().__init__()
        if isinstance(limit, bool) or not isinstance(limit, int) or limit < 0:
            raise AgentSpecError(f"points:K needs an integer K >= 0, got {clip(limit)}")
        self.limit = limit
        self.spec = f"points:{limit}"

    def wants_quit(self, display: Sequence[int], rules: RulesConfig) -> bool:
        """Quit iff ``score_display(display) <= limit``."""
        return score_display(display) <= self.limit

    def native_spec(self) -> str:
        """The spec ``points:K``."""
        return f"points:{self.limit}"


#: The classes whose :meth:`HeuristicPolicy.native` describes them (exactly these, not subclasses).
_NATIVE_CLASSES = (AlwaysRollPolicy, ThresholdPolicy, PointsPolicy)


def _parse_threshold(arg: str | None) -> ThresholdPolicy:
    if arg is None:
        return ThresholdPolicy()
    try:
        t = float(arg)
    except ValueError:
        raise AgentSpecError(f"threshold:T needs a probability T in [0, 1], got {clip(arg)}") from None
    return ThresholdPolicy(t)


def _parse_points(arg: str | None) -> PointsPolicy:
    if arg is None:
        return PointsPolicy()
    try:
        k = int(arg.strip())
    except ValueError:
        raise AgentSpecError(f"points:K needs an integer K >= 0, got {clip(arg)}") from None
    return PointsPolicy(k)


def _always_roll(arg: str | None) -> AlwaysRollPolicy:
    if arg is not None:
        raise AgentSpecError(f"agent spec 'always-roll' takes no argument, got always-roll:{arg}")
    return AlwaysRollPolicy()


register("always-roll", _always_roll, "always-roll",
         "never quits; discards all it can, takes the cheapest row card")
register("threshold", _parse_threshold, "threshold:T",
         f"quits iff P(next roll matches nothing) >= T (default {DEFAULT_THRESHOLD}); discards/takes like always-roll")
register("points", _parse_points, "points:K",
         f"rolls while its round points exceed K (default {DEFAULT_POINTS}), else quits; "
         "discards/takes like always-roll")
