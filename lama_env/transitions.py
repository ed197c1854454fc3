"""The rules as transitions: what a roll, a discard, a take or a quit does, as pure functions.

Pgx writes a game as pure ``init`` / ``step`` / ``observe`` functions over a
small state, and OpenSpiel's states expose ``chance_outcomes()``.  This module
does the same for every consequence of an action in *Don't L.L.A.M.A. Dice*,
each over the smallest state it needs, so that each is worked out in exactly
one place:

=======================================  ===================================
consequence                              function
=======================================  ===================================
the rolls and their probabilities        :func:`chance_outcomes` (written in
                                         :mod:`lama_env.odds`),
                                         :func:`grouped_chance_outcomes`
the deal, card by card, and its odds     :func:`deal_outcomes`,
                                         :func:`deal_seat`
a triple llama (a chip is returned)      :func:`is_triple_llama` (written in
                                         :mod:`lama_env.rules`)
how a roll resolves, and what it does    :func:`apply_roll` (its
                                         classification: :func:`resolve_roll`)
a bust: the whole row joins the display  :func:`apply_bust`
a discard, and going out                 :func:`apply_discard`
a take, and the row running out          :func:`apply_take`
a quit, and everyone having quit         :func:`apply_quit`
whose turn is next                       :func:`next_player`
the turn cap: a round cut after          :func:`cut_round`
``max_round_turns`` turns
the round's points, the chip for going   :func:`score_round`
out, the game end
the table as a round ended (for the      :func:`ended_table`
viewers that pause on it)
=======================================  ===================================

The state they read and return is plain data: a display is a tuple of seven
card counts (face index order, ``L`` first), the llama row a 7-tuple of 0/1,
the dice three face indices in die order, totals a list of ints.  A function
whose action can end the round also returns how it ended (one of
:data:`ROUND_ENDINGS`) or None.  These names (the round endings, the roll outcomes, the full and
empty rows) are :mod:`lama_env.constants`'s, importable here too.

The game's one step is the compiled one (:mod:`lama_env._kernel`:
:func:`~lama_env._kernel.transition_roll` over a game's one record of
``STATE_DTYPE``): :class:`lama_env.engine.LamaGame` (a Python view over one
such record), the batched evaluation engine :mod:`lama_env.batched` and the
vector game :mod:`lama_env.vector` and its envs all play through it.  This
module is the rules written as pure functions, for two uses.  It is the
reference the tests replay the engines against: ``tests/test_transitions.py``
drives a turn flow of its own with these functions beside
:class:`~lama_env.engine.LamaGame` (and so beside the step every engine
shares), step by step, for 1, 2, 3 and 6 players under every rules
configuration.  And it is the enumeration of what can happen that the exact
solo solver, the lookahead and search agents,
:mod:`lama_dice.agents.solo_random`, the heuristics and the terminal front end
use: they enumerate abstract states, not games.  No engine steps through these
functions; :class:`~lama_env.engine.LamaGame` lists its chance nodes' outcomes
with :func:`chance_outcomes` and :func:`deal_outcomes`.

Speed: the solvers and the lookahead call these functions many times per
decision, so they take and return tuples and ints (no state objects, no
keyword-only arguments) to keep that cheap.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from functools import cache, lru_cache
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
# apply_roll hands back the display and row it is given, unless the roll busts
_D = TypeVar("_D", bound=Sequence[int])
_R = TypeVar("_R", bound=Sequence[int])

_DISCARDS, _DISCARD_BASE, _TAKE_BASE = A.DISCARDS, A.DISCARD_BASE, A.TAKE_BASE
_legal_discards = lru_cache(maxsize=None)(A.legal_discards)  # a few hundred (limits, must) pairs


# ------------------------------------------------------------------ chance
@cache
def grouped_chance_outcomes(rules: RulesConfig) -> tuple[tuple[tuple[int, ...], float], ...]:
    """The rolls grouped by multiset of faces (sorted face indices), with probabilities.

    A roll's consequences depend only on which faces show, not on which die
    shows them, so search can enumerate these fewer outcomes.
    """
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
    """The outcomes of the next card of a deal: each face still in the deck, with its probability.

    A deal is a sequence of chance events, one card at a time (at most
    :data:`~lama_env.rules.NUM_FACES` outcomes each), from the shuffled
    36-card deck: the next card shows face ``f`` with probability (cards of
    ``f`` left) / (cards left), so a whole deal has the probability of the
    uniform shuffle.  Which seat a card goes to: :func:`deal_seat`.

    Args:
        dealt: the cards dealt so far this round, as counts per face index.

    Returns:
        ``(face, probability)`` pairs, by face, for the faces left (probabilities sum to 1).
    """
    return _deal_outcomes(tuple(dealt))


def deal_seat(card: int) -> int:
    """The seat that the ``card``-th card of a deal (0-based) goes to: six to seat 0, then six to seat 1, ..."""
    return card // HAND_SIZE


# ------------------------------------------------------------------- rolls
def match_limits(display: Sequence[int], dice: Sequence[int]) -> tuple[int, ...] | None:
    """The most cards of each face a roll lets a player discard (docs/RULES.md, "Match: discarding").

    Args:
        display: the player's cards, as counts per face index.
        dice: the three dice, as face indices.

    Returns:
        ``min(dice showing f, cards of f in the display)`` per face, or None
        when no die matches the display.
    """
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
    """What a roll does for the rolling player (docs/RULES.md, "A turn").

    This is the single place where a roll is classified and its immediate
    consequences are worked out.

    Args:
        display: the rolling player's cards, as counts per face index.
        row: the llama row (1 where the card of that face is still there).
        dice: the three dice, as face indices in die order.
        last_player: whether every other player has quit (no takes: a miss busts).
        rules: the rules configuration (``triple_llama``, ``must_discard``).

    Returns:
        ``(kind, legal, chip, display, row)``: ``kind`` is one of
        :data:`ROLL_TRIPLE_LLAMA`, :data:`ROLL_DISCARD`, :data:`ROLL_TAKE`,
        :data:`ROLL_BUST` (which is also the round ending ``"bust"``);
        ``legal`` lists the legal actions of the decision that follows
        (discards or takes, sorted), empty for a triple llama or a bust;
        ``chip`` is whether the roller returns a chip (a triple llama, in both
        modes: see :func:`lama_env.rules.return_chip`); ``display`` and
        ``row`` are the state after the roll (changed only by a bust, see
        :func:`apply_bust`; otherwise the objects given).
    """
    chip = is_triple_llama(dice)
    if chip and rules.triple_llama != "also_match":
        return ROLL_TRIPLE_LLAMA, (), True, display, row
    limits = match_limits(display, dice)
    if limits is not None:
        return ROLL_DISCARD, _legal_discards(limits, rules.must_discard), chip, display, row
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
    kind, legal, _, _, _ = apply_roll(display, row, dice, last_player, rules)
    return kind, legal


def apply_bust(display: Sequence[int], row: Sequence[int]) -> tuple[Display, Row]:
    """A bust: the whole llama row goes into the display (and the round ends, ``"bust"``).

    Returns:
        ``(display, row)`` after it: the display plus every row card, and the empty row.
    """
    return tuple(map(add, display, row)), EMPTY_ROW


# --------------------------------------------------------------- decisions
def apply_discard(display: Sequence[int], action: int) -> tuple[Display, str | None]:
    """A discard action (one of the legal discards after a matching roll).

    Returns:
        ``(display, ended_by)``: the display without the discarded cards, and
        ``"went_out"`` if that leaves it empty (the round ends), else None.
    """
    d = tuple(map(sub, display, _DISCARDS[action - _DISCARD_BASE]))
    return d, (None if any(d) else WENT_OUT)


def apply_take(display: Sequence[int], row: Sequence[int], action: int) -> tuple[Display, Row, str | None]:
    """A take action: the row card of the action's face moves into the display.

    Returns:
        ``(display, row, ended_by)``: ``ended_by`` is ``"row_empty"`` if that
        was the last row card (the round ends), else None.
    """
    f = action - _TAKE_BASE
    d = list(display)
    d[f] += 1
    r = list(row)
    r[f] = 0
    return tuple(d), tuple(r), (None if any(r) else ROW_EMPTY)


def apply_quit(active: int) -> tuple[int, str | None]:
    """A quit, with ``active`` players still in the round before it.

    Returns:
        ``(active, ended_by)``: one fewer active player, and ``"all_quit"``
        once nobody is left (the round ends), else None.
    """
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
    """The acting player's display and the llama row as the round ended, after ``action`` ended it.

    For a viewer of the round's end (:class:`lama_env.roundend.RoundEnd`): the compiled step that
    ended the round has dealt the next one.  A discard or a take changes the display (and a take
    the row), a bust (``ended_by == "bust"``) adds the whole row; a quit, or a roll cut by the
    turn cap, changes neither.
    """
    if A.is_discard(action):
        return apply_discard(display, action)[0], tuple(row)
    if A.is_take(action):
        d, r, _ = apply_take(display, row, action)
        return d, r
    if action == A.ROLL and ended_by == BUST:
        return apply_bust(display, row)
    return tuple(display), tuple(row)


def cut_round(turns_in_round: int, rules: RulesConfig) -> str | None:
    """When a turn is over and the round goes on: :data:`TURN_CAP` if the round is cut now, else None.

    A round cut after :attr:`~lama_env.rules.RulesConfig.max_round_turns` turns is scored as it
    stands (:func:`score_round` with nobody gone out), as if every player still in it had quit.
    """
    return TURN_CAP if turns_in_round >= rules.max_round_turns else None


def score_round(
    displays: Sequence[Sequence[int]], totals: Sequence[int], went_out: int | None, rules: RulesConfig
) -> tuple[list[int], list[int], bool]:
    """The end of a round: each display's points join its total; whoever went out returns a chip.

    Returns:
        ``(points, totals, game_over)``: the round points per seat, the new
        totals (new lists) and whether the game is over (:func:`lama_env.rules.game_over`).
    """
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
