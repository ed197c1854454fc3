"""The exact solver of the solo round (docs/RULES.md, "Solo variant").

With one player the last-player rule holds on every turn: there are no takes,
a roll that matches nothing busts (the whole, always full, llama row goes
into the display and the round ends: 31 points with the default faces), a
triple llama in ``chip_only`` mode changes nothing (a self-loop) and, with
``must_discard=False``, the empty discard is a self-loop by choice.  The round
is then a finite Markov decision process over displays (card counts per
face) that only ever shrink, which :class:`SoloSolver` solves exactly by
memoized expectimax:

* ``value(d) = min(score(d), roll_value(d))`` at a turn (quit or roll);
* ``roll_value(d) = sum over rolls of p(roll) * outcome``, where a bust
  scores the display plus the row, a match is worth the best legal discard
  (``min`` over the discards of the value of the display left; an empty
  display, i.e. going out, is worth ``out_value``, 0 round points by default)
  and a ``chip_only`` triple llama is worth ``value(d)`` again.

The self-loops make ``value(d)`` the greatest solution ``v <= score(d)`` of
``v = min(score(d), h(v))`` with ``h`` concave and piecewise linear in ``v``
(the loops enter as ``p * v`` and ``p * min(m, v)``): the limit of value
iteration from "quit everywhere", i.e. the best over policies that end the
round.  It is found exactly, per display, from the linear pieces of ``h``.  The objective is the expected round points
(chips are ignored).  Every roll, discard, take and bust is applied by the
rules' own transitions (:mod:`lama_env.transitions`: :func:`resolve_roll`,
:func:`apply_discard`, :func:`apply_take`, :func:`apply_bust`), scores come
from :func:`lama_env.rules.score_display` and probabilities from
:func:`lama_env.transitions.grouped_chance_outcomes`, so any
:class:`RulesConfig` works: both ``triple_llama`` modes, ``must_discard``,
custom dice.  The turn cap (``max_round_turns``, docs/RULES.md) is not modelled:
the values are those of the round without it, which the default cap (1000
turns) changes by a negligible amount (an optimal solo round ends within a few
turns but for triple llamas, each 1 roll in 27 with the default dice); with a
small cap set on purpose they are not exact.

Example::

    from lama_dice.agents.solver import solver_for
    s = solver_for(RulesConfig())
    s.expected_round_points()          # optimal mean round points from a fresh deal
    s.value((0, 0, 0, 0, 0, 0, 1))     # a display of a single 6
    s.quits((0, 0, 0, 0, 0, 0, 1))     # True: quitting (6) beats rolling
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from functools import cache, lru_cache
from itertools import product
from typing import Protocol

import numpy as np

from lama_env import actions as A
from lama_env.errors import LamaDiceError
from lama_env.rules import DECK_COUNTS, HAND_SIZE, MAX_ROUND_POINTS, NUM_FACES, RulesConfig, score_display
from lama_env.transitions import (
    FULL_ROW,
    ROLL_BUST,
    ROLL_DISCARD,
    ROLL_TRIPLE_LLAMA,
    apply_bust,
    apply_discard,
    apply_take,
    grouped_chance_outcomes,
    resolve_roll,
)

Display = tuple[int, ...]

_EMPTY: Display = (0,) * NUM_FACES
#: Values closer than this count as ties in decisions (quit vs roll, discards, takes).
TIE_EPS = 1e-9
#: Discard action -> its number of cards.
_DISCARD_SIZE = {a: sum(c) for c, a in A.DISCARD_ACTION.items()}


class SolverError(LamaDiceError, ValueError):
    """A display or policy the solver cannot evaluate."""


class SoloPolicy(Protocol):
    """What :meth:`SoloSolver.policy_value` needs from a deterministic policy.

    The heuristics of :mod:`lama_dice.agents.heuristics` and the optimal agent implement it.
    A policy that also looks at the dice defines ``choose_discard_for_roll(display, dice,
    legal, rules)`` (dice: sorted face indices), which is then asked instead of
    ``choose_discard`` (:class:`lama_dice.agents.solo_exact.ObservationSoloPolicy`).
    """

    def wants_quit(self, display: Display, rules: RulesConfig) -> bool:
        """At a turn with ``display``: quit (True) or roll (False)."""

    def choose_discard(self, display: Display, legal: Sequence[int], rules: RulesConfig) -> int:
        """After a matching roll: one of the legal discard actions ``legal``."""


def _check_display(display: Sequence[int]) -> Display:
    try:
        d = tuple(int(x) for x in display)
    except (TypeError, ValueError):
        raise SolverError(f"a display is {NUM_FACES} card counts per face, got {display!r}") from None
    if len(d) != NUM_FACES or min(d) < 0:
        raise SolverError(f"a display is {NUM_FACES} non-negative card counts per face, got {display!r}")
    return d


@cache
def deal_distribution() -> tuple[tuple[Display, float], ...]:
    """Every 6-card display a player can be dealt from the 36-card deck, with its probability.

    Multivariate hypergeometric over the face counts: ``prod_f C(deck_f, h_f) / C(36, 6)``.
    The probabilities sum to 1 (exactly in rationals; to rounding in floats).
    """
    total = math.comb(sum(DECK_COUNTS), HAND_SIZE)
    out = []
    for h in product(*(range(min(c, HAND_SIZE) + 1) for c in DECK_COUNTS)):
        if sum(h) == HAND_SIZE:
            ways = math.prod(math.comb(c, k) for c, k in zip(DECK_COUNTS, h, strict=True))
            out.append((tuple(h), ways / total))
    return tuple(out)


def displays(max_cards: int = HAND_SIZE) -> list[Display]:
    """Every non-empty display of at most ``max_cards`` cards within the deck, in a fixed order."""
    return [d for d in product(*(range(min(c, max_cards) + 1) for c in DECK_COUNTS)) if 0 < sum(d) <= max_cards]


def is_solo_policy(agent: object) -> bool:
    """Whether ``agent`` gives the solver its decisions directly (:class:`SoloPolicy`: the rule-based agents)."""
    return hasattr(agent, "wants_quit") and hasattr(agent, "choose_discard")


class SoloSolver:
    """Exact optimal play of the solo round for one :class:`RulesConfig`.

    Values are expected final round points (lower is better) from a turn
    decision with the given display, under optimal play; they are computed
    on demand and memoized, for displays of any size (a multiplayer display
    can hold more than six cards).  Use :func:`solver_for` to share one
    solver per rules.

    Args:
        rules: the rules configuration (default: docs/RULES.md's defaults).
        out_value: the worth of going out (emptying the display); 0 round
            points by default.  Search agents pass e.g. ``-10`` to count the
            chip returned by the player who goes out.  Must be ``<= 0``.
    """

    def __init__(self, rules: RulesConfig | None = None, *, out_value: float = 0.0) -> None:
        """Check ``out_value`` and start the memo tables.

        Raises:
            SolverError: ``out_value`` is not ``<= 0``.
        """
        self.rules = rules if rules is not None else RulesConfig()
        if not out_value <= 0:
            raise SolverError(f"out_value must be <= 0, got {out_value!r}")
        self.out_value = float(out_value)
        self._rolls = grouped_chance_outcomes(self.rules)
        self._value: dict[Display, float] = {_EMPTY: self.out_value}
        self._roll: dict[Display, float] = {}
        self._outcome_cache: dict[Display, list[tuple[str, float, tuple[int, ...]]]] = {}
        self._dist: dict[Display, np.ndarray] = {}
        self._discard_choice: dict[tuple[Display, tuple[int, ...]], int] = {}

    # ------------------------------------------------------------ transitions
    def _outcomes(self, d: Display) -> list[tuple[str, float, tuple[int, ...]]]:
        """(kind, probability, legal discards) of each roll from ``d``, grouped by multiset (cached)."""
        out = self._outcome_cache.get(d)
        if out is None:
            rules = self.rules
            rolls = [(*resolve_roll(d, FULL_ROW, dice, last_player=True, rules=rules), p)
                     for dice, p in self._rolls]
            out = self._outcome_cache[d] = [(kind, p, legal) for kind, legal, p in rolls]
        return out

    def bust_points(self, display: Sequence[int]) -> int:
        """Round points of a bust from ``display``: it takes the whole (full) row."""
        return score_display(apply_bust(display, FULL_ROW)[0])

    def _child(self, d: Display, action: int) -> Display:
        return apply_discard(d, action)[0]

    # ---------------------------------------------------------------- values
    def value(self, display: Sequence[int]) -> float:
        """Optimal expected final round points at a turn with ``display`` (``out_value`` if empty)."""
        d = _check_display(display)
        v = self._value.get(d)
        return v if v is not None else self._solve(d)

    def roll_value(self, display: Sequence[int]) -> float:
        """Expected final round points of rolling now with ``display`` and playing optimally after."""
        d = _check_display(display)
        if not any(d):
            raise SolverError("an empty display has gone out: there is no roll")
        if d not in self._roll:
            self._solve(d)
        return self._roll[d]

    def quits(self, display: Sequence[int]) -> bool:
        """The optimal turn decision.

        Returns:
            Whether to quit: iff ``score(display) <= roll_value(display)`` (ties,
            within :data:`TIE_EPS`, quit).
        """
        return score_display(display) <= self.roll_value(display) + TIE_EPS

    def _solve(self, d: Display) -> float:
        """Fill ``_value[d]`` and ``_roll[d]`` (children first, recursively: displays only shrink)."""
        value = self._value
        s = float(score_display(d))
        const = 0.0  # probability-weighted outcomes that do not involve value(d)
        p_fixed = 0.0  # their probability
        loop = 0.0  # probability of a forced self-loop (chip_only triple llama)
        kinks: list[tuple[float, float]] = []  # (p, m): an optional self-loop, worth p * min(m, v)
        best_of: dict[tuple[int, ...], tuple[float, bool]] = {}
        for kind, p, legal in self._outcomes(d):
            if kind is ROLL_DISCARD:
                got = best_of.get(legal)
                if got is None:
                    m = math.inf
                    can_stay = False
                    for a in legal:
                        if _DISCARD_SIZE[a] == 0:
                            can_stay = True
                            continue
                        c = self._child(d, a)
                        cv = value.get(c)
                        if cv is None:
                            cv = self._solve(c)
                        if cv < m:
                            m = cv
                    got = best_of[legal] = (m, can_stay)
                m, can_stay = got
                if can_stay:
                    kinks.append((p, m))
                else:
                    const += p * m
                    p_fixed += p
            elif kind is ROLL_TRIPLE_LLAMA:
                loop += p
            elif kind is ROLL_BUST:
                const += p * self.bust_points(d)
                p_fixed += p
            else:  # pragma: no cover - no takes with last_player=True
                raise AssertionError(f"unexpected solo roll outcome {kind}")

        def h(v: float) -> float:
            return const + loop * v + sum(p * (m if m < v else v) for p, m in kinks)

        hs = h(s)
        if hs >= s:
            v = s
            r = hs
        else:
            v = self._greatest_fixed_point(const, p_fixed, s, kinks)
            r = v
        value[d] = v
        self._roll[d] = r
        return v

    def _greatest_fixed_point(self, const: float, p_fixed: float, s: float,
                              kinks: list[tuple[float, float]]) -> float:
        """The greatest ``v < s`` with ``h(v) == v``, given ``h(s) < s``.

        ``h(v) = const + loop * v + sum(p * min(m, v) for p, m in kinks)`` is
        linear between the kinks' ``m``: on a piece ``[lo, hi]`` the kinks with
        ``m <= lo`` add ``p * m`` and the others (and the forced loops) add
        ``p * v``, so ``h(v) == v`` at ``v = A / D`` with ``A = const + sum(p * m)``
        and ``D = p_fixed + sum(p)`` over the kinks with ``m <= lo`` (``p_fixed``
        being the probability of the outcomes in ``const``; summing ``D`` this way
        avoids cancellation).  Walk the pieces down from ``s``; the first whose
        root lies in it holds the answer (``g = h - v`` is concave, ``g(s) < 0``
        and ``g(min(0, out_value)) >= 0``).  ``D == 0`` means ``h(v) == v`` on the
        whole piece: its top is the greatest fixed point.
        """
        lb = min(0.0, self.out_value)
        ms = sorted(kinks, key=lambda pm: pm[1])
        breaks = [*sorted({m for _, m in kinks if lb < m < s}, reverse=True), lb]
        hi = s
        for lo in breaks:
            num, den = const, p_fixed
            for p, m in ms:
                if m > lo:
                    break
                num += p * m
                den += p
            if den <= 0.0:
                return hi
            v = num / den
            if v >= lo:
                return min(v, hi)
            hi = lo
        return lb  # pragma: no cover - g(lb) >= 0 always holds

    # ------------------------------------------------------------- decisions
    def after_discard_value(self, display: Sequence[int], action: int) -> float:
        """Value of the display left by discard ``action`` (``out_value`` if it empties the display)."""
        d = _check_display(display)
        return self.value(self._child(d, action))

    def best_discard_action(self, display: Sequence[int], legal: Sequence[int]) -> int:
        """The legal discard action leaving the display of least value.

        Ties (values within :data:`TIE_EPS`) go to the larger discard, then to
        the lower action index.  The empty discard (``must_discard=False``)
        leaves the display as it is, worth ``value(display)``.
        """
        d = _check_display(display)
        return self._best_discard(d, tuple(legal))

    def _best_discard(self, d: Display, legal: tuple[int, ...]) -> int:
        key = (d, legal)
        a = self._discard_choice.get(key)
        if a is None:
            vals = [(self.value(self._child(d, a)), a) for a in legal]
            best = min(v for v, _ in vals) + TIE_EPS
            a = self._discard_choice[key] = min((a for v, a in vals if v <= best),
                                                key=lambda a: (-_DISCARD_SIZE[a], a))
        return a

    def best_discard(self, display: Sequence[int], dice: Sequence[int]) -> int:
        """The optimal discard action after ``dice`` (face indices) matched ``display`` in the solo round.

        Raises:
            SolverError: the roll does not match the display (there is nothing to discard).
        """
        d = _check_display(display)
        kind, legal = resolve_roll(d, FULL_ROW, tuple(dice), last_player=True, rules=self.rules)
        if kind is not ROLL_DISCARD:
            raise SolverError(f"dice {tuple(dice)!r} do not let display {d!r} discard ({kind})")
        return self.best_discard_action(d, legal)

    def best_take(self, display: Sequence[int], legal: Sequence[int]) -> int:
        """The legal take action (multiplayer) leaving the display of least solo value.

        Ties (within :data:`TIE_EPS`) go to the card adding fewer points, then
        to the lower face value (``L`` = 10): the heuristics' cheapest take
        (:func:`lama_dice.agents.heuristics.take_cost`).
        """
        from .heuristics import take_cost

        d = _check_display(display)
        vals = []
        for a in legal:
            nd = apply_take(d, FULL_ROW, a)[0]  # only the display matters here
            vals.append((self.value(nd), *take_cost(d, a - A.TAKE_BASE), a))
        best = min(v[0] for v in vals) + TIE_EPS
        return min((v for v in vals if v[0] <= best), key=lambda v: v[1:])[3]

    # --------------------------------------------------------- distributions
    @property
    def support(self) -> np.ndarray:
        """The final round results :meth:`distribution` ranges over: integers ``floor(out_value)..MAX_ROUND_POINTS``."""
        return np.arange(math.floor(self.out_value), MAX_ROUND_POINTS + 1)

    def distribution(self, display: Sequence[int]) -> np.ndarray:
        """Probabilities of each final round result (over :attr:`support`) from a turn with ``display``.

        Under the optimal policy (the decisions of :meth:`quits` and
        :meth:`best_discard_action`), in the solo round; going out counts as
        ``out_value`` (which must be an integer here).  The mean is :meth:`value`.
        """
        if self.out_value != math.floor(self.out_value):
            raise SolverError(f"distribution needs an integer out_value, got {self.out_value}")
        d = _check_display(display)
        return self._distribution(d)

    def _distribution(self, d: Display) -> np.ndarray:
        got = self._dist.get(d)
        if got is not None:
            return got
        lo = math.floor(self.out_value)
        out = np.zeros(MAX_ROUND_POINTS + 1 - lo)
        if not any(d):
            out[0] = 1.0
        elif self.quits(d):
            out[score_display(d) - lo] = 1.0
        else:
            loop = 0.0
            for kind, p, legal in self._outcomes(d):
                if kind is ROLL_DISCARD:
                    a = self._best_discard(d, legal)
                    if _DISCARD_SIZE[a] == 0:
                        loop += p
                    else:
                        out += p * self._distribution(self._child(d, a))
                elif kind is ROLL_TRIPLE_LLAMA:
                    loop += p
                else:
                    out[self.bust_points(d) - lo] += p
            out /= 1.0 - loop
        out.flags.writeable = False
        self._dist[d] = out
        return out

    # ------------------------------------------------------------ aggregates
    def solve_all(self, max_cards: int = HAND_SIZE) -> int:
        """Solve every display of at most ``max_cards`` cards (within the deck); return how many there are."""
        ds = displays(max_cards)
        for d in ds:
            self.value(d)
        return len(ds) + 1  # and the empty display

    def expected_round_points(self) -> float:
        """Optimal expected round points from a fresh deal, averaged exactly over all deals."""
        return sum(p * self.value(h) for h, p in deal_distribution())

    def policy_value(self, policy: SoloPolicy, display: Sequence[int] | None = None) -> float:
        """Exact expected round points of a deterministic ``policy`` in the solo round.

        Args:
            policy: implements :class:`SoloPolicy` (``wants_quit`` and ``choose_discard``).
            display: a turn's display; by default the value is averaged over all deals.

        Returns:
            The expected final round points (``out_value`` for going out); ``inf``
            if the policy can loop forever with probability 1 (a policy that never
            quits and always discards nothing).
        """
        memo: dict[Display, float] = {_EMPTY: self.out_value}
        rules = self.rules
        choose = self._chooser(policy)

        def solve(d: Display) -> float:
            v = memo.get(d)
            if v is not None:
                return v
            if policy.wants_quit(d, rules):
                memo[d] = v = float(score_display(d))
                return v
            const = loop = 0.0
            for dice, kind, p, legal in self.roll_outcomes(d):
                if kind is ROLL_DISCARD:
                    a = choose(d, dice, legal)
                    if _DISCARD_SIZE[a] == 0:
                        loop += p
                    else:
                        const += p * solve(self._child(d, a))
                elif kind is ROLL_TRIPLE_LLAMA:
                    loop += p
                else:
                    const += p * self.bust_points(d)
            memo[d] = v = const / (1.0 - loop) if loop < 1.0 - 1e-12 else math.inf
            return v

        if display is not None:
            return solve(_check_display(display))
        return sum(p * solve(h) for h, p in deal_distribution())

    def roll_outcomes(self, display: Sequence[int]) -> list[tuple[tuple[int, ...], str, float, tuple[int, ...]]]:
        """Every distinct roll at a solo turn with ``display``: ``(dice, kind, probability, legal discards)``.

        ``dice`` are sorted face indices (:func:`lama_env.transitions.grouped_chance_outcomes`),
        ``kind`` what the roll does (:func:`lama_env.transitions.resolve_roll`).
        """
        d = _check_display(display)
        return [(dice, kind, p, legal)
                for (dice, _), (kind, p, legal) in zip(self._rolls, self._outcomes(d), strict=True)]

    def discard_rolls(self, display: Sequence[int]) -> list[tuple[tuple[int, ...], tuple[int, ...]]]:
        """The rolls at a solo turn with ``display`` that ask for a discard: ``(dice, legal discards)``."""
        return [(dice, legal) for dice, kind, _, legal in self.roll_outcomes(display) if kind is ROLL_DISCARD]

    def _chooser(self, policy: SoloPolicy):
        """``choose(display, dice, legal)``: the policy's discard, checked legal and memoized.

        A policy that sees the dice (``choose_discard_for_roll``) is asked per roll, others
        per set of legal discards.
        """
        rules = self.rules
        by_roll = getattr(policy, "choose_discard_for_roll", None)
        memo: dict[tuple[Display, tuple[int, ...]], int] = {}

        def choose(d: Display, dice: tuple[int, ...], legal: tuple[int, ...]) -> int:
            key = (d, dice if by_roll is not None else legal)
            a = memo.get(key)
            if a is None:
                a = memo[key] = by_roll(d, dice, legal, rules) if by_roll is not None else \
                    policy.choose_discard(d, legal, rules)
                if a not in legal:
                    raise SolverError(f"policy {policy!r} chose an illegal discard {a} for {d!r}")
            return a

        return choose

    def visits(self, policy: SoloPolicy) -> tuple[dict[Display, float], dict[tuple[Display, tuple[int, ...]], float]]:
        """How often a deterministic ``policy`` meets each decision of a solo round from a fresh deal.

        Returns:
            ``(turns, discards)``: the expected number of turns at each display
            (a self-loop -- a triple llama, an empty discard -- counts every time), and
            of discard decisions at each ``(display, dice)`` (dice: sorted face indices).
            ``turns`` summed over the displays is the expected number of turns of a round.

        Raises:
            SolverError: the policy can loop forever (never quits and always discards nothing).
        """
        rules = self.rules
        choose = self._chooser(policy)
        inflow: dict[Display, float] = {}
        for h, p in deal_distribution():
            inflow[h] = inflow.get(h, 0.0) + p
        turns: dict[Display, float] = {}
        discards: dict[tuple[Display, tuple[int, ...]], float] = {}
        for size in range(max(sum(d) for d in inflow), 0, -1):  # a discard leaves fewer cards: parents first
            for d in [d for d in inflow if sum(d) == size]:
                reach = inflow.pop(d)
                if policy.wants_quit(d, rules):
                    turns[d] = reach
                    continue
                outcomes = self.roll_outcomes(d)
                chosen = [choose(d, dice, legal) if kind is ROLL_DISCARD else None
                          for dice, kind, _, legal in outcomes]
                loop = sum(p for (_, kind, p, _), a in zip(outcomes, chosen, strict=True)
                           if kind is ROLL_TRIPLE_LLAMA or (a is not None and _DISCARD_SIZE[a] == 0))
                if loop >= 1.0 - 1e-12:
                    raise SolverError(f"policy {policy!r} can loop forever at {d!r}")
                v = turns[d] = reach / (1.0 - loop)  # each turn at d, repeats included
                for (dice, _, p, _), a in zip(outcomes, chosen, strict=True):
                    if a is None:
                        continue
                    discards[(d, dice)] = v * p
                    child = self._child(d, a)
                    if child != d and child != _EMPTY:
                        inflow[child] = inflow.get(child, 0.0) + v * p
        return turns, discards

    def __repr__(self) -> str:
        """Show the rules and ``out_value``."""
        return f"SoloSolver(rules={self.rules!r}, out_value={self.out_value})"


@lru_cache(maxsize=32)
def solver_for(rules: RulesConfig, out_value: float = 0.0) -> SoloSolver:
    """The shared :class:`SoloSolver` of ``rules`` (one per rules and ``out_value``)."""
    return SoloSolver(rules, out_value=out_value)
