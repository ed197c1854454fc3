"""Exact dice odds, shared by heuristics, solvers, observations and the terminal game.

All probabilities are exact (enumerated over the 6^3 equally likely die
sides) and cached per rules' dice.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache

from .rules import NUM_FACES, RulesConfig
from .transitions import chance_outcomes, is_triple_llama


def roll_distribution(rules: RulesConfig) -> tuple[tuple[tuple[int, int, int], float], ...]:
    """Every distinct roll (face indices in die order) with its probability.

    The same as :func:`~lama_env.transitions.chance_outcomes`.
    """
    return chance_outcomes(rules)


@cache
def _p_no_match(dice_index: tuple[tuple[int, ...], ...], present: int) -> float:
    hits = sum(1 for a in dice_index[0] for b in dice_index[1] for c in dice_index[2]
               if not (present >> a & 1 or present >> b & 1 or present >> c & 1))
    return hits / (len(dice_index[0]) * len(dice_index[1]) * len(dice_index[2]))


def p_no_match(display: Sequence[int], rules: RulesConfig) -> float:
    """Probability that the next roll shows no face held in ``display`` (counts per face)."""
    present = 0
    for f in range(NUM_FACES):
        if display[f]:
            present |= 1 << f
    return _p_no_match(rules.dice_index, present)


def p_triple_llama(rules: RulesConfig) -> float:
    """Probability of a triple llama (1/27 with the default dice)."""
    return sum(p for roll, p in chance_outcomes(rules) if is_triple_llama(roll))
