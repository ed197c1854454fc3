"""The rules as transitions: what a roll, a discard, a take or a quit does, as pure functions over plain tuples.

No engine steps through them: they are the tests' reference and the solvers' enumeration (docs/environments.md,
The rules engine in Python). A display is 7 card counts, the row 7 zeros or ones, the dice 3 face indices; a
function whose action can end the round also returns how (one of :data:`ROUND_ENDINGS`) or None.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from functools import cache
from operator import add, sub
from typing import TypeVar

from . import actions as A
from .constants import (  # the round endings, roll outcomes and rows, kept importable here
    ALL_QUIT,
    BUST,
    DECK_COUNTS,
    EMPTY_ROW,
    FULL_ROW,
    HAND_SIZE,
    NUM_FACES,
    ROLL_BUST,
    ROLL_DISCARD,
    ROLL_TAKE,
    ROLL_TRIPLE_LLAMA,
    ROUND_ENDINGS,
    ROW_EMPTY,
    TURN_CAP,
    WENT_OUT,
)
from .odds import chance_outcomes
from .rules import RulesConfig, game_over, is_triple_llama, return_chip, score_display

Display = tuple[int, ...]
Row = tuple[int, ...]
_D = TypeVar("_D", bound=Sequence[int])
_R = TypeVar("_R", bound=Sequence[int])

_DISCARDS, _DISCARD_BASE, _TAKE_BASE = A.DISCARDS, A.DISCARD_BASE, A.TAKE_BASE


# ------------------------------------------------------------------ chance
@cache
def grouped_chance_outcomes(rules: RulesConfig) -> tuple[tuple[tuple[int, ...], float], ...]:
    """The rolls grouped by multiset of faces (sorted face indices), with probabilities (fewer outcomes to search)."""
    acc: dict[tuple[int, ...], float] = defaultdict(float)
    for dice, p in chance_outcomes(rules):
        acc[tuple(sorted(dice))] += p
    return tuple(sorted(acc.items()))


@cache
def _deal_outcomes(dealt: tuple[int, ...]) -> tuple[tuple[int, float], ...]:
    left = [DECK_COUNTS[f] - dealt[f] for f in range(NUM_FACES)]
    if min(left) < 0:
        raise ValueError(f"more cards dealt than the deck holds: {dealt}")
    total = sum(left)
    return tuple((f, k / total) for f, k in enumerate(left) if k)


def deal_outcomes(dealt: Sequence[int]) -> tuple[tuple[int, float], ...]:
    """The next card of a deal after ``dealt`` (counts per face): ``(face, cards of it left / cards left)`` pairs."""
    return _deal_outcomes(tuple(dealt))


def deal_seat(card: int) -> int:
    """The seat that the ``card``-th card of a deal (0-based) goes to: six to seat 0, then six to seat 1, ..."""
    return card // HAND_SIZE


# ------------------------------------------------------------------- rolls
def match_limits(display: Sequence[int], dice: Sequence[int]) -> tuple[int, ...] | None:
    """Per face, ``min(dice showing it, cards of it in display)``; None if no die matches (docs/RULES.md, Match)."""
    limits = [0] * NUM_FACES
    matched = False
    for f in dice:
        if display[f] > limits[f]:
            limits[f] += 1
            matched = True
    return tuple(limits) if matched else None


def apply_roll(
    display: _D, row: _R, dice: Sequence[int], last_player: bool, rules: RulesConfig
) -> tuple[str, tuple[int, ...], bool, _D | Display, _R | Row]:
    """What a roll does for the roller (docs/RULES.md, A turn); ``last_player``: every other seat has quit.

    Returns:
        ``(kind, legal, chip, display, row)``: ``kind`` one of the ``ROLL_*`` outcomes, ``legal`` the sorted
        legal actions that follow (none after a triple llama or a bust), ``chip`` whether the roller returns
        a chip, ``display`` and ``row`` after the roll (changed only by a bust; otherwise the objects given).
    """
    chip = is_triple_llama(dice)
    if chip and rules.triple_llama != "also_match":
        return ROLL_TRIPLE_LLAMA, (), True, display, row
    limits = match_limits(display, dice)
    if limits is not None:
        return ROLL_DISCARD, A.legal_discards(limits, rules.must_discard), chip, display, row
    if not last_player:
        takes = tuple(sorted({_TAKE_BASE + f for f in dice if row[f]}))
        if takes:
            return ROLL_TAKE, takes, chip, display, row
    bust_display, bust_row = apply_bust(display, row)
    return ROLL_BUST, (), chip, bust_display, bust_row


def resolve_roll(
    display: Sequence[int], row: Sequence[int], dice: Sequence[int], *, last_player: bool, rules: RulesConfig
) -> tuple[str, tuple[int, ...]]:
    """How a roll resolves, ``(kind, legal)``: the first two elements of :func:`apply_roll`."""
    return apply_roll(display, row, dice, last_player, rules)[:2]


def apply_bust(display: Sequence[int], row: Sequence[int]) -> tuple[Display, Row]:
    """A bust (the round ends, ``"bust"``): ``(display plus every row card, the empty row)``."""
    return tuple(map(add, display, row)), EMPTY_ROW


# --------------------------------------------------------------- decisions
def apply_discard(display: Sequence[int], action: int) -> tuple[Display, str | None]:
    """A legal discard: ``(display without the cards, "went_out" if it is now empty else None)``."""
    d = tuple(map(sub, display, _DISCARDS[action - _DISCARD_BASE]))
    return d, (None if any(d) else WENT_OUT)


def apply_take(display: Sequence[int], row: Sequence[int], action: int) -> tuple[Display, Row, str | None]:
    """A take: the row card moves into the display; ``(display, row, "row_empty" if it was the last else None)``."""
    f = action - _TAKE_BASE
    d = list(display)
    d[f] += 1
    r = list(row)
    r[f] = 0
    return tuple(d), tuple(r), (None if any(r) else ROW_EMPTY)


def apply_quit(active: int) -> tuple[int, str | None]:
    """A quit among ``active`` players: ``(active - 1, "all_quit" once nobody is left else None)``."""
    active -= 1
    return active, (None if active else ALL_QUIT)


def next_player(current: int, quit: Sequence[bool]) -> int:
    """The next seat after ``current`` (clockwise) that has not quit (``current`` if every other has)."""
    n = len(quit)
    q = current
    for _ in range(n):
        q = q + 1 if q + 1 < n else 0
        if not quit[q]:
            break
    return q


# -------------------------------------------------------------- round end
def ended_table(display: Sequence[int], row: Sequence[int], action: int, ended_by: str) -> tuple[Display, Row]:
    """The acting player's display and the row as the round ended after ``action`` (for :mod:`lama_env.roundend`)."""
    if A.is_discard(action):
        return apply_discard(display, action)[0], tuple(row)
    if A.is_take(action):
        d, r, _ = apply_take(display, row, action)
        return d, r
    if action == A.ROLL and ended_by == BUST:
        return apply_bust(display, row)
    return tuple(display), tuple(row)


def cut_round(turns_in_round: int, rules: RulesConfig) -> str | None:
    """:data:`TURN_CAP` if the round is cut after this turn (``max_round_turns``; scored as it stands), else None."""
    return TURN_CAP if turns_in_round >= rules.max_round_turns else None


def score_round(
    displays: Sequence[Sequence[int]], totals: Sequence[int], went_out: int | None, rules: RulesConfig
) -> tuple[list[int], list[int], bool]:
    """A round's end: ``(points per seat, new totals, game over)``; whoever went out returns a chip."""
    points = list(map(score_display, displays))
    new = list(map(add, totals, points))
    if went_out is not None:
        new[went_out] = return_chip(new[went_out])
    return points, new, game_over(new, rules)


__all__ = [
    "ALL_QUIT", "BUST", "EMPTY_ROW", "FULL_ROW", "ROLL_BUST", "ROLL_DISCARD", "ROLL_TAKE", "ROLL_TRIPLE_LLAMA",
    "ROUND_ENDINGS", "ROW_EMPTY", "TURN_CAP", "WENT_OUT", "apply_bust", "apply_discard", "apply_quit",
    "apply_roll", "apply_take", "chance_outcomes", "cut_round", "deal_outcomes", "deal_seat", "ended_table",
    "grouped_chance_outcomes", "is_triple_llama", "match_limits", "next_player", "resolve_roll", "score_round",
]
