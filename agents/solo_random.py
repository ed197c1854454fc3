"""The exact solo value of the uniform-random policy (the ``random`` agent), next to the solver's optimum.

``random`` is uniform over the legal actions: at a turn it rolls or quits with
probability 1/2 each, and after a matching roll it picks each legal discard
with the same probability.  In the solo round (docs/RULES.md, "Solo
variant") its expected round points from a turn with display ``d`` solve

    v(d) = 1/2 score(d) + 1/2 (C(d) + loop(d) v(d))

where ``C(d)`` sums, over the rolls, the bust points and the values of the
displays the discards leave (each weighted by its probability and by
``1/len(legal)``), and ``loop(d)`` is the probability of coming back to the
same turn: a ``chip_only`` triple llama, or the empty discard when
``must_discard`` is false.  Displays only shrink otherwise, so
``v(d) = (score(d) + C(d)) / (2 - loop(d))`` is computed children first,
exactly (up to float rounding), for any :class:`~lama_env.rules.RulesConfig`,
with the same transitions and roll probabilities as
:class:`lama_dice.agents.solver.SoloSolver`.

Example::

    from lama_dice.agents.solo_random import random_policy_value
    random_policy_value(RulesConfig())   # 18.5... round points (the optimum is 10.1779)
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache

from lama_env import actions as A
from lama_env.rules import RulesConfig, score_display
from lama_env.transitions import (
    FULL_ROW,
    ROLL_BUST,
    ROLL_DISCARD,
    ROLL_TRIPLE_LLAMA,
    apply_bust,
    apply_discard,
    grouped_chance_outcomes,
    resolve_roll,
)

from .solver import Display, SolverError, _check_display, deal_distribution

__all__ = ["RandomSoloValue", "random_policy_value"]

_EMPTY_DISCARD = A.DISCARD_BASE  # the empty discard (legal only with must_discard=False)


class RandomSoloValue:
    """Expected solo round points of the uniform-random policy under one :class:`RulesConfig`.

    Args:
        rules: the rules (default: docs/RULES.md's defaults).
    """

    def __init__(self, rules: RulesConfig | None = None) -> None:
        """Start the memo table (the empty display, gone out, is worth 0 round points)."""
        self.rules = rules if rules is not None else RulesConfig()
        self._rolls = grouped_chance_outcomes(self.rules)
        self._value: dict[Display, float] = {(0,) * len(FULL_ROW): 0.0}

    def value(self, display: Sequence[int]) -> float:
        """Expected final round points of ``random`` at a turn with ``display`` (0 if empty)."""
        d = _check_display(display)
        v = self._value.get(d)
        return v if v is not None else self._solve(d)

    def _solve(self, d: Display) -> float:
        const = loop = 0.0
        for dice, p in self._rolls:
            kind, legal = resolve_roll(d, FULL_ROW, dice, last_player=True, rules=self.rules)
            if kind is ROLL_DISCARD:
                share = p / len(legal)
                for a in legal:
                    if a == _EMPTY_DISCARD:
                        loop += share
                    else:
                        child = apply_discard(d, a)[0]
                        cv = self._value.get(child)
                        const += share * (cv if cv is not None else self._solve(child))
            elif kind is ROLL_TRIPLE_LLAMA:
                loop += p
            elif kind is ROLL_BUST:
                const += p * score_display(apply_bust(d, FULL_ROW)[0])
            else:  # pragma: no cover - no takes with last_player=True
                raise SolverError(f"unexpected solo roll outcome {kind}")
        v = self._value[d] = (score_display(d) + const) / (2.0 - loop)
        return v

    def expected_round_points(self) -> float:
        """Expected round points of ``random`` from a fresh deal, averaged exactly over all deals."""
        return sum(p * self.value(h) for h, p in deal_distribution())


@lru_cache(maxsize=32)
def random_policy_value(rules: RulesConfig | None = None) -> float:
    """The uniform-random policy's expected solo round points from a fresh deal under ``rules`` (exact)."""
    return RandomSoloValue(rules).expected_round_points()
