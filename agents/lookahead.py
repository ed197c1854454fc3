"""The ``lookahead`` agent: expectimax over the next roll under the real multiplayer rules.

At a turn it compares quitting (its display's score, exactly) with the
expected outcome of one roll, enumerated exactly over the dice with the
engine's own roll classification (:func:`lama_env.engine.resolve_roll`):
the take rule while other players are in, the last-player rule (a miss busts)
once they have all quit, the current llama row (a take that empties the row,
or a bust, ends the round and is scored exactly).  Chips count: going out
returns a chip and so does a triple llama, worth what
:func:`lama_env.rules.return_chip` takes off the agent's current total (10, 1
or 0 points).  After a discard or take it picks the option of least value
with the same evaluation.

Leaves (the agent's next turn with display ``d``) are valued with the exact
solo solver (:class:`agents.solver.SoloSolver` with the going-out chip
counted), blended with the chance that the round ends before that turn:
``P_end * score(d) + (1 - P_end) * V(d)``, where ``P_end`` is the
probability that an opponent still in the round ends it on their next roll
(goes out, busts or takes the last row card), assuming they roll and go out
when they can.  With ``lookahead:2`` a leaf still in a multiplayer round is
itself searched one more roll deep (slower, cached).

Deterministic: ties go to quitting, then to the lowest action index.
"""

from __future__ import annotations

from typing import Sequence

from lama_env import actions as A
from lama_env.engine import (
    ROLL_BUST,
    ROLL_DISCARD,
    ROLL_TAKE,
    ROLL_TRIPLE_LLAMA,
    LamaGame,
    Phase,
    resolve_roll,
)
from lama_env.rules import NUM_FACES, RulesConfig, return_chip, score_display

from .base import Policy
from .registry import AgentSpecError, register
from .solver import TIE_EPS, SoloSolver, grouped_rolls, solver_for

_CACHE_LIMIT = 200_000


def chip_value(total: int) -> int:
    """Points one returned chip takes off ``total`` (10, 1 or 0)."""
    return total - return_chip(total)


class LookaheadPolicy(Policy):
    """One-roll (or two-roll) expectimax with exact solo values at the leaves.

    Args:
        depth: 1 (default) or 2 rolls of lookahead.
    """

    spec = "lookahead"

    def __init__(self, depth: int = 1) -> None:
        super().__init__()
        if depth not in (1, 2):
            raise AgentSpecError(f"lookahead:D needs a depth D of 1 or 2, got {depth!r}")
        self.depth = depth
        self._leaf_cache: dict[tuple, float] = {}
        self._end_cache: dict[tuple, float] = {}

    # ----------------------------------------------------------------- public
    def act(self, game: LamaGame, legal: Sequence[int]) -> int:
        me = game.current_player
        rules = game.rules
        display = game.display(me)
        row = game.row
        last = game.last_player_rule
        chip = chip_value(game.totals[me])
        solver = solver_for(rules, float(-chip))
        p_end = 0.0 if last else self._p_round_ends(game, me)
        ev = _Eval(self, rules, solver, chip, p_end)
        phase = game.phase
        if phase == Phase.TURN:
            roll = ev.roll_value(display, row, last, self.depth)
            return A.QUIT if score_display(display) <= roll + TIE_EPS else A.ROLL
        if phase == Phase.DISCARD:
            tl_chip = 0  # a triple llama's chip was returned already: it is sunk
            return min(legal, key=lambda a: (ev.after_discard(display, row, last, a, self.depth, tl_chip), a))
        return min(legal, key=lambda a: (ev.after_take(display, row, a, self.depth), a))

    # ------------------------------------------------------------ round end
    def _p_round_ends(self, game: LamaGame, me: int) -> float:
        """Chance that an opponent still in the round ends it before ``me``'s next turn.

        Each opponent who has not quit is assumed to roll once (in seat
        order, the row as it is now) and to go out whenever a roll lets them.
        """
        n = game.num_players
        quit_ = game.quit
        row = game.row
        rules = game.rules
        p_go_on = 1.0
        for k in range(1, n):
            o = (me + k) % n
            if quit_[o]:
                continue
            disp = game.display(o)
            key = (rules, disp, row)
            pe = self._end_cache.get(key)
            if pe is None:
                pe = 0.0
                for dice, p in grouped_rolls(rules):
                    kind, legal = resolve_roll(disp, row, dice, last_player=False, rules=rules)
                    if kind is ROLL_BUST:
                        pe += p
                    elif kind is ROLL_DISCARD:
                        if any(sum(A.DISCARDS[a - A.DISCARD_BASE]) == sum(disp) for a in legal):
                            pe += p
                    elif kind is ROLL_TAKE and sum(row) == 1:
                        pe += p
                if len(self._end_cache) > _CACHE_LIMIT:
                    self._end_cache.clear()
                self._end_cache[key] = pe
            p_go_on *= 1.0 - pe
        return 1.0 - p_go_on


class _Eval:
    """The expectimax of one decision (its context: rules, solver, chip worth, round-end chance)."""

    __slots__ = ("agent", "rules", "solver", "chip", "p_end", "rolls")

    def __init__(self, agent: LookaheadPolicy, rules: RulesConfig, solver: SoloSolver, chip: int,
                 p_end: float) -> None:
        self.agent = agent
        self.rules = rules
        self.solver = solver
        self.chip = chip
        self.p_end = p_end
        self.rolls = grouped_rolls(rules)

    def leaf(self, d: tuple[int, ...], row: tuple[int, ...], last: bool, depth: int) -> float:
        """Expected final points (minus chips) when next at a turn with ``d`` (non-empty)."""
        if last:
            return self.solver.value(d)
        if depth <= 1:
            cont = self.solver.value(d)
        else:
            key = (self.rules, self.chip, d, row, depth)
            cache = self.agent._leaf_cache
            cont = cache.get(key)
            if cont is None:
                cont = min(float(score_display(d)), self.roll_value(d, row, False, depth - 1))
                if len(cache) > _CACHE_LIMIT:
                    cache.clear()
                cache[key] = cont
        return self.p_end * score_display(d) + (1.0 - self.p_end) * cont

    def after_discard(self, d, row, last, action, depth, tl_chip) -> float:
        k = A.DISCARDS[action - A.DISCARD_BASE]
        nd = tuple(x - y for x, y in zip(d, k))
        if not any(nd):
            return -float(self.chip) - tl_chip  # went out: 0 points, a chip returned
        return self.leaf(nd, row, last, depth) - tl_chip

    def after_take(self, d, row, action, depth) -> float:
        f = action - A.TAKE_BASE
        nd = tuple(c + (i == f) for i, c in enumerate(d))
        nrow = tuple(c if i != f else 0 for i, c in enumerate(row))
        if not any(nrow):
            return float(score_display(nd))  # the row is empty: the round ends now
        return self.leaf(nd, nrow, False, depth)

    def roll_value(self, d, row, last, depth) -> float:
        """Expected final points (minus chips) of rolling now with display ``d``."""
        rules = self.rules
        total = 0.0
        stay = None  # value of being back at a turn with d (triple llama, chip_only)
        for dice, p in self.rolls:
            kind, legal = resolve_roll(d, row, dice, last_player=last, rules=rules)
            is_tl = dice[0] == dice[1] == dice[2] == 0
            tl_chip = self.chip if is_tl else 0
            if kind is ROLL_DISCARD:
                v = min(self.after_discard(d, row, last, a, depth, tl_chip) for a in legal)
            elif kind is ROLL_TAKE:
                v = min(self.after_take(d, row, a, depth) for a in legal) - tl_chip
            elif kind is ROLL_TRIPLE_LLAMA:
                if stay is None:
                    stay = min(float(score_display(d)), self.leaf(d, row, last, depth))
                v = stay - tl_chip
            else:  # bust: the whole row joins the display and the round ends
                v = float(score_display([c + r for c, r in zip(d, row)])) - tl_chip
            total += p * v
        return total


def _make(arg: str | None) -> LookaheadPolicy:
    if arg is None:
        return LookaheadPolicy()
    try:
        depth = int(arg)
    except ValueError:
        raise AgentSpecError(f"lookahead:D needs a depth D of 1 or 2, got {arg!r}") from None
    return LookaheadPolicy(depth)


register("lookahead", _make, "lookahead[:D]",
         "expectimax over the next roll (D=1, or 2 rolls) under the real rules, solo values at the leaves")
