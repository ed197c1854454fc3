"""The ``lookahead`` agent: expectimax over the next roll under the real multiplayer rules.

At a turn it compares quitting with one roll, enumerated exactly over the
dice with the rules' own transitions (:func:`lama_env.transitions.apply_roll`,
:func:`~lama_env.transitions.apply_discard`, :func:`~lama_env.transitions.apply_take`):
the take rule while other players
are in, the last-player rule (a miss busts) once they have all quit, the
current llama row (a take that empties it, or a bust, ends the round and is
scored exactly).  Chips count: going out and a triple llama each return a
chip, worth what :func:`lama_env.rules.return_chip` takes off the agent's
total (10, 1 or 0 points).  After a roll it picks the discard or take of best
value with the same evaluation.

**Leaves** (the agent's next turn with display ``d``) use the exact solo
solver (:class:`lama_dice.agents.solver.SoloSolver`, going-out chip counted): the
distribution of the final round result under the optimal solo policy,
blended with the chance ``P_end`` that an opponent still in the round ends it
first (goes out, busts or takes the last row card on their next roll,
assuming they roll and go out when they can), in which case ``d`` scores as
it is.

**Objective**: the chance to win the game, not just few points.  A final
round result ``x`` puts the agent's total at ``F = total + x``; the
opponents' final totals are modelled as independent (a quit opponent's is
known; an active one's follows the solo-optimal distribution from their
display).  If some final total reaches ``end_threshold`` the game ends and
the agent wins iff ``F`` is the lowest (a tie counts one half); otherwise the
chance to win later is ``Phi((lowest opponent - F) / sigma)`` with ``sigma``
growing with the rounds left (estimated from the solo round's mean and spread).
Mid-game this is close to minimising expected points; near the threshold
it takes risks when behind and locks in a lead when ahead.

With ``must_discard=False`` the empty discard (a free re-roll) is valued as
quitting with the same display at the next turn, so that the agent never
waits forever for a roll it would then not take.

``lookahead:points`` minimises expected points (minus chips) instead.
Deterministic: ties go to quitting, then to the lowest action index.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from functools import lru_cache

import numpy as np

from lama_env import actions as A
from lama_env.engine import LamaGame, Phase
from lama_env.errors import clip
from lama_env.rules import MAX_ROUND_POINTS, RulesConfig, return_chip, score_display
from lama_env.transitions import (
    ROLL_BUST,
    ROLL_DISCARD,
    ROLL_TAKE,
    ROLL_TRIPLE_LLAMA,
    apply_discard,
    apply_roll,
    apply_take,
    grouped_chance_outcomes,
)

from .base import Policy
from .registry import AgentSpecError, register
from .solver import TIE_EPS, SoloSolver, deal_distribution, solver_for

_CACHE_LIMIT = 100_000
#: Lowest round result tracked (three chips of 10 returned in one round).
X_MIN = -30
_XS = np.arange(X_MIN, MAX_ROUND_POINTS + 1)


def chip_value(total: int) -> int:
    """Points one returned chip takes off ``total`` (10, 1 or 0)."""
    return total - return_chip(total)


@lru_cache(maxsize=16)
def round_stats(rules: RulesConfig) -> tuple[float, float]:
    """Mean and standard deviation of the solo-optimal round points from a fresh deal (exact)."""
    s = solver_for(rules)
    m = m2 = 0.0
    for h, p in deal_distribution():
        dist = s.distribution(h)
        m += p * float(dist @ s.support)
        m2 += p * float(dist @ s.support.astype(float) ** 2)
    return m, math.sqrt(max(m2 - m * m, 1e-9))


def _phi(z: np.ndarray) -> np.ndarray:
    """Standard normal CDF (logistic approximation, max error ~0.01)."""
    return 1.0 / (1.0 + np.exp(-1.702 * z))


def lowest_highest_pmf(pmfs: Sequence[np.ndarray]) -> np.ndarray:
    """Joint pmf ``J[a, b] = P(min = a, max = b)`` of independent integer variables on ``0..F-1``.

    Args:
        pmfs: one pmf per variable, each of the same length ``F``.
    """
    cd = np.cumsum(np.asarray(pmfs, dtype=float), axis=1)  # P(X <= b)
    below = np.concatenate([np.zeros((len(cd), 1)), cd[:, :-1]], axis=1)  # P(X <= a - 1)
    g = np.triu(np.prod(np.clip(cd[:, None, :] - below[:, :, None], 0.0, None), axis=0))  # P(all in [a, b])
    f = g.shape[0]
    gp = np.zeros((f + 1, f + 1))  # gp[a, b + 1] = G[a, b]; zero row a = F and column b = -1
    gp[:f, 1:] = g
    # P(min = a, max = b) = G[a, b] - G[a+1, b] - G[a, b-1] + G[a+1, b-1]
    return np.clip(gp[:-1, 1:] - gp[1:, 1:] - gp[:-1, :-1] + gp[1:, :-1], 0.0, None)


class LookaheadPolicy(Policy):
    """One-roll expectimax under the real rules, exact solo distributions at the leaves.

    Args:
        objective: ``"win"`` (default: maximise the chance to win the game) or
            ``"points"`` (minimise expected round points minus chips).
    """

    spec = "lookahead"

    def __init__(self, objective: str = "win") -> None:
        """Check ``objective`` and start with empty caches.

        Raises:
            AgentSpecError: ``objective`` is neither ``"win"`` nor ``"points"``.
        """
        super().__init__()
        if objective not in ("win", "points"):
            raise AgentSpecError(f"lookahead takes no argument or 'points', got {clip(objective)}")
        self.objective = objective
        self._end_cache: dict[tuple, float] = {}
        self._utility_cache: dict[tuple, np.ndarray] = {}

    # ----------------------------------------------------------------- public
    def act(self, game: LamaGame, legal: Sequence[int]) -> int:
        """The legal action of best one-roll expectimax value (ties: quit, then the lowest index)."""
        me = game.current_player
        rules = game.rules
        display = game.displays[me]
        row = game.row
        last = game.quit.count(False) == 1
        chip = chip_value(game.totals[me])
        ev = _Eval(rules, solver_for(rules, float(-chip)), chip, 0.0 if last else self._p_round_ends(game, me),
                   self._utility(game, me))
        phase = game.phase
        if phase == Phase.TURN:
            roll = ev.roll_value(display, row, last)
            return A.ROLL if roll > ev.u(score_display(display)) + TIE_EPS else A.QUIT
        if phase == Phase.DISCARD:  # a triple llama's chip (also_match) is already returned: sunk
            return max(legal, key=lambda a: (ev.after_discard(display, row, last, a, 0), -a))
        return max(legal, key=lambda a: (ev.after_take(display, row, a, 0), -a))

    # -------------------------------------------------------------- utility
    def _utility(self, game: LamaGame, me: int) -> np.ndarray:
        """Utility of each final round result ``x`` in ``X_MIN..MAX_ROUND_POINTS`` for ``me`` (higher is better)."""
        if self.objective == "points" or game.num_players == 1:  # solo: nobody to beat, few points
            return -_XS.astype(float)
        totals = game.totals
        n = game.num_players
        quit_ = game.quit
        rules = game.rules
        opp = tuple((totals[o], game.displays[o], quit_[o]) for o in range(n) if o != me)
        key = (rules, totals[me], opp)
        got = self._utility_cache.get(key)
        if got is not None:
            return got
        # each opponent's final total: a pmf over 0..fmax
        fmax = max(t for t, _, _ in opp) + MAX_ROUND_POINTS + 1
        pmfs = []
        for t, d, q in opp:
            pmf = np.zeros(fmax + 1)
            if q:
                pmf[t + score_display(d)] = 1.0
            else:
                s = solver_for(rules, float(-chip_value(t)))
                np.add.at(pmf, np.maximum(t + s.support, 0), s.distribution(d))
            pmfs.append(pmf)
        joint = lowest_highest_pmf(pmfs)
        a_idx, b_idx = np.nonzero(joint > 1e-12)
        w = joint[a_idx, b_idx]
        mean, sd = round_stats(rules)
        thr = rules.end_threshold
        f_me = np.maximum(totals[me] + _XS, 0)[:, None]  # (X, 1)
        lo = a_idx[None, :].astype(float)
        hi = np.maximum(b_idx[None, :], f_me)
        ended = hi >= thr
        win_now = np.where(f_me < lo, 1.0, np.where(f_me == lo, 0.5, 0.0))
        rounds_left = np.maximum(1.0, (thr - hi) / max(mean, 1.0))
        sigma = sd * math.sqrt(2.0) * np.sqrt(rounds_left)
        win_later = _phi((lo - f_me) / sigma)
        util = (np.where(ended, win_now, win_later) * w[None, :]).sum(axis=1) / max(w.sum(), 1e-12)
        if len(self._utility_cache) > _CACHE_LIMIT:
            self._utility_cache.clear()
        util.flags.writeable = False
        self._utility_cache[key] = util
        return util

    # ------------------------------------------------------------ round end
    def _p_round_ends(self, game: LamaGame, me: int) -> float:
        """Chance that an opponent still in the round ends it before ``me``'s next turn.

        Each opponent who has not quit is assumed to roll once (the row as it
        is now) and to go out whenever a roll lets them.
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
            disp = game.displays[o]
            key = (rules, disp, row)
            pe = self._end_cache.get(key)
            if pe is None:
                pe = 0.0
                for dice, p in grouped_chance_outcomes(rules):
                    kind, legal, _, _, _ = apply_roll(disp, row, dice, False, rules)
                    if kind is ROLL_BUST:
                        pe += p
                    elif kind is ROLL_DISCARD:
                        if apply_discard(disp, legal[-1])[1]:  # legal is sorted: the last is the largest
                            pe += p
                    elif kind is ROLL_TAKE and apply_take(disp, row, legal[0])[2]:  # the last row card
                        pe += p
                if len(self._end_cache) > _CACHE_LIMIT:
                    self._end_cache.clear()
                self._end_cache[key] = pe
            p_go_on *= 1.0 - pe
        return 1.0 - p_go_on


class _Eval:
    """The expectimax of one decision: its rules, solver, chip worth, round-end chance and utility."""

    __slots__ = ("chip", "dist_lo", "leaves", "p_end", "rolls", "rules", "solver", "util")

    def __init__(self, rules: RulesConfig, solver: SoloSolver, chip: int, p_end: float, util: np.ndarray) -> None:
        self.rules = rules
        self.solver = solver
        self.chip = chip
        self.p_end = p_end
        self.util = util
        self.rolls = grouped_chance_outcomes(rules)
        self.leaves: dict[tuple, float] = {}
        self.dist_lo = -chip - X_MIN  # index in util of the solver's first support value

    def u(self, x: int) -> float:
        """Utility of a final round result ``x``."""
        return float(self.util[x - X_MIN])

    def leaf(self, d: tuple[int, ...], row: tuple[int, ...], last: bool, shift: int) -> float:
        """Expected utility when next at a turn with ``d`` (non-empty), ``shift`` points of chips already returned."""
        key = (d, last, shift)
        v = self.leaves.get(key)
        if v is None:
            dist = self.solver.distribution(d)
            start = self.dist_lo - shift
            cont = float(dist @ self.util[start: start + len(dist)])
            if last:
                v = cont
            else:
                v = self.p_end * self.u(score_display(d) - shift) + (1.0 - self.p_end) * cont
            self.leaves[key] = v
        return v

    def after_discard(self, d, row, last, action, shift) -> float:
        if not any(A.DISCARDS[action - A.DISCARD_BASE]):
            # The empty discard (must_discard=False) keeps d: worth quitting with d at the next
            # turn.  Valuing it by the solo continuation instead could make the agent wait
            # forever for rolls that it then never takes.
            return self.u(score_display(d) - shift)
        nd, ended = apply_discard(d, action)
        if ended:
            return self.u(-self.chip - shift)  # went out: 0 points, a chip returned
        return self.leaf(nd, row, last, shift)

    def after_take(self, d, row, action, shift) -> float:
        nd, _, ended = apply_take(d, row, action)
        if ended:
            return self.u(score_display(nd) - shift)  # the row is empty: the round ends now
        return self.leaf(nd, row, False, shift)

    def roll_value(self, d, row, last) -> float:
        """Expected utility of rolling now with display ``d``."""
        rules = self.rules
        total = 0.0
        for dice, p in self.rolls:
            kind, legal, chip, after, _ = apply_roll(d, row, dice, last, rules)
            shift = self.chip if chip else 0
            if kind is ROLL_DISCARD:
                v = max(self.after_discard(d, row, last, a, shift) for a in legal)
            elif kind is ROLL_TAKE:
                v = max(self.after_take(d, row, a, shift) for a in legal)
            elif kind is ROLL_TRIPLE_LLAMA:  # back at a turn with d: quit or go on
                v = max(self.u(score_display(d) - shift), self.leaf(d, row, last, shift))
            else:  # bust: the whole row joined the display and the round ends
                v = self.u(score_display(after) - shift)
            total += p * v
        return total


def _make(arg: str | None) -> LookaheadPolicy:
    if arg is None:
        return LookaheadPolicy()
    if arg.strip() == "points":
        return LookaheadPolicy("points")
    raise AgentSpecError(f"lookahead takes no argument or 'points', got lookahead:{arg}")


register("lookahead", _make, "lookahead[:points]",
         "expectimax over the next roll under the real rules (solo values at the leaves); "
         "plays to win the game (':points': to minimise points)")
