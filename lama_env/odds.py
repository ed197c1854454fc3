"""Exact dice odds (enumerated over the 6^3 die sides, cached per dice) for the agents, observations and engine.

:func:`chance_outcomes` is also :mod:`lama_env.transitions`'s (here, the compiled engine does not import that).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from functools import cache
from itertools import product

from .constants import NUM_FACES
from .rules import RulesConfig, is_triple_llama


@cache
def _chance_outcomes(dice_index: tuple[tuple[int, ...], ...]) -> tuple[tuple[tuple[int, int, int], float], ...]:
    counts: Counter = Counter(product(dice_index[0], dice_index[1], dice_index[2]))
    total = sum(counts.values())
    return tuple(sorted((k, v / total) for k, v in counts.items()))


def chance_outcomes(rules: RulesConfig) -> tuple[tuple[tuple[int, int, int], float], ...]:
    """Every distinct roll (face indices in die order; sorted) with its exact probability: the chance node's."""
    return _chance_outcomes(rules.dice_index)


@cache
def _p_no_match(dice_index: tuple[tuple[int, ...], ...], present: int) -> float:
    hits = sum(1 for a in dice_index[0] for b in dice_index[1] for c in dice_index[2]
               if not (present >> a & 1 or present >> b & 1 or present >> c & 1))
    return hits / (len(dice_index[0]) * len(dice_index[1]) * len(dice_index[2]))


def p_no_match(display: Sequence[int], rules: RulesConfig) -> float:
    """Probability that the next roll shows no face held in ``display`` (counts per face)."""
    return _p_no_match(rules.dice_index, sum(1 << f for f in range(NUM_FACES) if display[f]))


def p_triple_llama(rules: RulesConfig) -> float:
    """Probability of a triple llama (1/27 with the default dice)."""
    return sum(p for roll, p in chance_outcomes(rules) if is_triple_llama(roll))
