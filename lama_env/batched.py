"""A compiled batched engine: many full games at once, for fast evaluation.

:func:`play_batch` plays ``G`` complete games (until the end threshold) for
``N`` players whose seats are filled by *native* policies, inside one
Numba-compiled kernel, and returns per-game outcome arrays
(:class:`BatchResult`)::

    from lama_dice.agents.native import play_batch      # takes agent specs too

    res = play_batch(2, ["threshold:0.2", "random"], games=10_000, seed=1)
    res.totals.shape        # (10000, 2): final totals by seat
    res.winners_mask()      # (10000, 2) bool: tied for the fewest points

A native policy is plain data, a :class:`NativePolicy`, that a policy object
builds for itself (``policy.native(rules)``: :mod:`lama_dice.agents.base`,
:mod:`lama_dice.agents.heuristics`); this module knows no agent.  The kernel plays two
kinds of description:

==================  ==============================================================
kind                decisions
==================  ==============================================================
``KIND_RANDOM``     uniform over the legal actions (its own random stream)
``KIND_TABLE``      at a turn, quit iff ``quit_table[mask]`` (``mask``: the set of
                    faces the display holds, bit ``f`` = face index ``f``); discard
                    every card it may (the per-face limits); take the shown row
                    card of smallest ``take_rank[mask, f]``
==================  ==============================================================

:func:`play_batch` takes descriptions, or objects with a ``native(rules)``
method, which it asks for their description under the rules played.

Game ``g`` draws its deals and dice from its own counter-based random stream,
a function of ``(seed, game_ids[g])`` only; policies draw from a second stream
of the same game.  A game therefore plays the same whether it is played alone
or in a batch, logged or not, which is how :func:`play_batch` logs a subset of
games (``log_games``): it plays them again with a trajectory log.  A log
converts to a ``lama-dice-record/1`` dict (:meth:`BatchResult.record`) that
:func:`lama_env.record.replay` checks against the reference engine, and to the
batched engine's own replay result (:meth:`BatchResult.result`) for
comparison.

The turn flow of :class:`lama_env.engine.LamaGame` (the transitions of
:mod:`lama_env.transitions`, and the one-line :func:`lama_env.rules.return_chip`)
is necessarily written a second time here, in compiled form: that is what
makes it fast.  Everything else comes from the engine's modules as tables: the
deck (``DECK``), the rules' dice, :func:`lama_env.rules.score_display` per set
of held faces, the round endings.  ``tests/test_batched.py`` replays many
games of every player count and rules configuration through the reference
engine to keep the two identical, and checks that the native descriptions
decide like the Python agents.

Pure Python/NumPy/Numba: no gym, torch or file I/O.  The kernel is compiled on
first use and cached on disk (``cache=True``); :func:`compile_kernel` compiles
it eagerly and returns the seconds it took.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numba import njit

from .engine import RECORD_FORMAT
from .errors import LamaDiceError
from .rules import (
    DECK,
    FACES,
    HAND_SIZE,
    NUM_FACES,
    RulesConfig,
    check_num_players,
    score_display,
)
from .rules import winners as _winners
from .transitions import ALL_QUIT, BUST, ROUND_ENDINGS, ROW_EMPTY, WENT_OUT

__all__ = [
    "KIND_RANDOM",
    "KIND_TABLE",
    "NUM_MASKS",
    "BatchResult",
    "NativePolicy",
    "NativePolicyError",
    "compile_kernel",
    "mask_display",
    "play_batch",
]

# ----------------------------------------------------------------- policies
KIND_RANDOM = 0  #: uniform over legal actions
KIND_TABLE = 1  #: turn decision by table over the display's faces; max discard; take by rank table

NUM_MASKS = 1 << NUM_FACES  #: displays by the set of faces they hold


class NativePolicyError(LamaDiceError, ValueError):
    """A policy that the batched engine cannot play natively, a malformed description or a bad argument."""


def mask_display(mask: int) -> tuple[int, ...]:
    """The display holding one card of each face in ``mask`` (bit ``f`` = face index ``f``).

    A table policy's tables are indexed by such masks: its decisions may
    depend on which faces the display holds, not on how many of each.
    """
    return tuple((mask >> f) & 1 for f in range(NUM_FACES))


@dataclass(frozen=True, eq=False)
class NativePolicy:
    """A policy as plain data, for the kernel (build one with :meth:`random` or :meth:`table`).

    Attributes:
        spec: a label (the agent's spec, e.g. ``"threshold:0.2"``).
        kind: :data:`KIND_RANDOM` or :data:`KIND_TABLE`.
        quit_table: ``uint8[NUM_MASKS]``: for :data:`KIND_TABLE`, 1 where the
            policy quits at the start of its turn holding the faces of the mask.
        take_rank: ``int64[NUM_MASKS, NUM_FACES]``: for :data:`KIND_TABLE`, the
            policy takes the shown row card of smallest rank (the first face on ties).
        rules: the rules the tables were built for (None: valid under any rules).
    """

    spec: str
    kind: int
    quit_table: np.ndarray = field(repr=False)
    take_rank: np.ndarray = field(repr=False)
    rules: RulesConfig | None = None

    @classmethod
    def random(cls, spec: str = "random") -> NativePolicy:
        """Uniform over the legal actions."""
        return cls(spec, KIND_RANDOM, np.zeros(NUM_MASKS, dtype=np.uint8),
                   np.zeros((NUM_MASKS, NUM_FACES), dtype=np.int64))

    @classmethod
    def table(cls, spec: str, quit_table: Any, take_rank: Any, rules: RulesConfig | None = None) -> NativePolicy:
        """A :data:`KIND_TABLE` policy (see the attributes); raises :class:`NativePolicyError` if malformed."""
        q = np.ascontiguousarray(quit_table, dtype=np.uint8)
        t = np.ascontiguousarray(take_rank, dtype=np.int64)
        if q.shape != (NUM_MASKS,) or t.shape != (NUM_MASKS, NUM_FACES):
            raise NativePolicyError(f"a table policy needs quit_table[{NUM_MASKS}] and take_rank[{NUM_MASKS}, "
                                    f"{NUM_FACES}], got {q.shape} and {t.shape}")
        q.flags.writeable = False
        t.flags.writeable = False
        return cls(spec, KIND_TABLE, q, t, rules)


def _describe(agent: Any, rules: RulesConfig) -> NativePolicy:
    """The description of ``agent`` (a description, or an object with ``native(rules)``) under ``rules``."""
    if isinstance(agent, NativePolicy):
        desc = agent
    else:
        native = getattr(agent, "native", None)
        if not callable(native):
            raise NativePolicyError(
                f"{agent!r} is neither a native policy description nor a policy with a native() method "
                "(lama_dice.agents.native.play_batch takes agent specs)")
        desc = native(rules)
        if desc is None:
            raise NativePolicyError(f"agent {getattr(agent, 'spec', agent)!r} is not a native policy "
                                    "(its native() gives no description)")
        if not isinstance(desc, NativePolicy):
            raise NativePolicyError(f"{agent!r}.native() returned {desc!r}, not a NativePolicy")
    if desc.rules is not None and desc.rules != rules:
        raise NativePolicyError(f"native policy {desc.spec!r} was built for other rules than these")
    return desc


def _rules(rules: RulesConfig | Mapping | None) -> RulesConfig:
    return rules if isinstance(rules, RulesConfig) else RulesConfig.from_dict(rules)


# ----------------------------------------------------------- rule tables
_SCORE = np.array([score_display(mask_display(m)) for m in range(NUM_MASKS)], dtype=np.int64)
_DECK = np.array(DECK, dtype=np.int64)

# -------------------------------------------------------------- log format
#: Log entry tags (each entry is ``tag, ...``; see :meth:`BatchResult.record`).
LOG_ROUND, LOG_QUIT, LOG_ROLL, LOG_END = 0, 1, 2, 3
#: Roll outcomes in a ``LOG_ROLL`` entry.
OUT_TRIPLE, OUT_DISCARD, OUT_TAKE, OUT_BUST = 0, 1, 2, 3
#: ``ended_by`` codes in a ``LOG_END`` entry: indices into :data:`lama_env.transitions.ROUND_ENDINGS`.
_WENT_OUT, _ROW_EMPTY, _BUST, _ALL_QUIT = (ROUND_ENDINGS.index(e) for e in (WENT_OUT, ROW_EMPTY, BUST, ALL_QUIT))


# ------------------------------------------------------------------ kernel
_u64 = np.uint64
#: splitmix64 constants (the counter-based random streams of the kernel).
_GOLDEN = _u64(0x9E3779B97F4A7C15)
_M1 = _u64(0xBF58476D1CE4E5B9)
_M2 = _u64(0x94D049BB133111EB)
_S30, _S27, _S31, _S32 = _u64(30), _u64(27), _u64(31), _u64(32)
_TWO32 = _u64(1) << _S32
_POLICY_SALT = _u64(0xD1B54A32D192ED03)


@njit(cache=True)
def _mix(z):
    z = (z ^ (z >> _S30)) * _M1
    z = (z ^ (z >> _S27)) * _M2
    return z ^ (z >> _S31)


@njit(cache=True)
def _below(state, k):
    """(new state, uniform integer in [0, k)) by rejection on 32 bits (exact)."""
    kk = _u64(k)
    lim = (_TWO32 // kk) * kk
    while True:
        state = state + _GOLDEN
        u = _mix(state) >> _S32
        if u < lim:
            return state, np.int64(u % kk)


@njit(cache=True)
def _mask(disp, p):
    m = 0
    for f in range(7):
        if disp[p, f] > 0:
            m |= 1 << f
    return m


@njit(cache=True)
def _chip(t):
    if t >= 10:
        return t - 10
    if t > 0:
        return t - 1
    return t


# The decisions of the two kinds of native policy, shared by this kernel and the vector
# environment's (:mod:`lama_env._vector_kernel`): one home for how a description plays.
@njit(cache=True, inline="always")
def native_turn(kind, quit_table, a, m, ps):
    """(new policy stream, quit?) of agent ``a``'s turn decision; ``m``: the faces the display holds."""
    if kind == KIND_RANDOM:
        ps, r = _below(ps, 2)
        return ps, r == 1
    return ps, quit_table[a, m] != 0


@njit(cache=True, inline="always")
def native_discard(kind, lim, must_discard, cnt, ps):
    """Write the cards to discard per face into ``cnt`` (``lim``: the roll's discard limits); return ``ps``.

    Random: uniform over the legal discards (the empty one too unless ``must_discard``);
    table: every card it may discard.
    """
    if kind == KIND_RANDOM:
        nopt = 1
        for f in range(7):
            nopt *= lim[f] + 1
        if must_discard:
            ps, k = _below(ps, nopt - 1)
            k += 1
        else:
            ps, k = _below(ps, nopt)
        for f in range(7):
            cnt[f] = k % (lim[f] + 1)
            k //= lim[f] + 1
    else:
        for f in range(7):
            cnt[f] = lim[f]
    return ps


@njit(cache=True, inline="always")
def native_take(kind, take_rank, a, m, shown, ps):
    """(new policy stream, face) of agent ``a``'s take decision among the faces of ``shown`` (a bit set).

    Random: uniform among them; table: the smallest ``take_rank[a, m, f]`` (the first face on ties).
    """
    face = -1
    if kind == KIND_RANDOM:
        nopt = 0
        for f in range(7):
            nopt += (shown >> f) & 1
        ps, k = _below(ps, nopt)
        for f in range(7):
            if (shown >> f) & 1:
                if k == 0:
                    face = f
                    break
                k -= 1
    else:
        best = 1 << 30
        for f in range(7):
            if (shown >> f) & 1 and take_rank[a, m, f] < best:
                best = take_rank[a, m, f]
                face = f
    return ps, face


@njit(cache=True)
def _play_kernel(n, seat_agent, game_ids, seed, kinds, quit_table, take_rank, dice, deck0, score,  # noqa: C901 (kernel: rewritten in the one-kernel change)
                 also_match, must_discard, end_threshold,
                 totals, round_pts, rounds, busts, quits, went_out, triples, log, log_len, log_row):
    """Play games ``g = 0..G-1`` (``G = len(seat_agent)``) to the end; see :func:`play_batch`.

    Per-game outputs (``totals``, ``round_pts``, ``busts``, ``quits``,
    ``went_out``, ``triples``: ``[G, n]``; ``rounds``: ``[G]``) are accumulated
    into the zeroed arrays given.  Game ``g`` with ``log_row[g] = r >= 0`` is
    logged into ``log[r]`` and ``log_len[r]`` gets the log's length, or -1 if
    ``log.shape[1]`` was too small.  The rules arrive as tables: ``dice[d, side]``
    face indices, ``deck0`` the 36 cards, ``score[mask]`` the points of a
    display holding the faces of ``mask``; policies as ``kinds[a]``,
    ``quit_table[a, mask]`` and ``take_rank[a, mask, f]`` (:class:`NativePolicy`).
    """
    G = seat_agent.shape[0]  # noqa: N806 (G: the docstring's symbol for the number of games)
    ncards = n * 6
    cap = log.shape[1]
    room_needed = 2 + ncards + 3 + 2 * n + 8
    deck = np.empty(36, np.int64)
    disp = np.zeros((n, 7), np.int64)
    quit_ = np.zeros(n, np.bool_)
    lim = np.zeros(7, np.int64)
    cnt = np.zeros(7, np.int64)
    tot = np.zeros(n, np.int64)
    pts = np.zeros(n, np.int64)
    seed_mix = _mix(seed + _GOLDEN)
    for g in range(G):
        es = _mix(seed_mix ^ _mix(_u64(game_ids[g]) * _GOLDEN + _GOLDEN))
        ps = _mix(es ^ _POLICY_SALT)
        lr = log_row[g]
        logging = lr >= 0
        pos = 0
        for p in range(n):
            tot[p] = 0
        start = 0
        nround = 0
        while True:
            # ---- deal: partial Fisher-Yates of the 36-card deck
            for i in range(36):
                deck[i] = deck0[i]
            for i in range(ncards):
                es, j = _below(es, 36 - i)
                j += i
                c = deck[i]
                deck[i] = deck[j]
                deck[j] = c
            for p in range(n):
                quit_[p] = False
                for f in range(7):
                    disp[p, f] = 0
                for k in range(6):
                    disp[p, deck[p * 6 + k]] += 1
            if logging:
                if pos + room_needed > cap:
                    logging = False
                    pos = -1
                else:
                    log[lr, pos] = LOG_ROUND
                    log[lr, pos + 1] = start
                    for i in range(ncards):
                        log[lr, pos + 2 + i] = deck[i]
                    pos += 2 + ncards
            row = 127
            active = n
            cur = start
            ended = -1
            wo = -1
            while True:
                p = cur
                a = seat_agent[g, p]
                kind = kinds[a]
                if logging and pos + room_needed > cap:
                    logging = False
                    pos = -1
                # ---- turn: roll or quit
                ps, q = native_turn(kind, quit_table, a, _mask(disp, p), ps)
                if q:
                    if logging:
                        log[lr, pos] = LOG_QUIT
                        log[lr, pos + 1] = p
                        pos += 2
                    quits[g, p] += 1
                    quit_[p] = True
                    active -= 1
                    if active == 0:
                        ended = _ALL_QUIT
                        break
                else:
                    es, r = _below(es, 216)
                    f0 = dice[0, r // 36]
                    f1 = dice[1, (r // 6) % 6]
                    f2 = dice[2, r % 6]
                    if logging:
                        log[lr, pos] = LOG_ROLL
                        log[lr, pos + 1] = p
                        log[lr, pos + 2] = f0
                        log[lr, pos + 3] = f1
                        log[lr, pos + 4] = f2
                        log[lr, pos + 5] = OUT_TRIPLE
                        log[lr, pos + 6] = 0
                    triple = f0 == 0 and f1 == 0 and f2 == 0
                    if triple:
                        tot[p] = _chip(tot[p])
                        triples[g, p] += 1
                    if not (triple and not also_match):
                        for f in range(7):
                            lim[f] = 0
                        matched = False
                        if disp[p, f0] > lim[f0]:
                            lim[f0] += 1
                            matched = True
                        if disp[p, f1] > lim[f1]:
                            lim[f1] += 1
                            matched = True
                        if disp[p, f2] > lim[f2]:
                            lim[f2] += 1
                            matched = True
                        if matched:
                            # ---- discard
                            ps = native_discard(kind, lim, must_discard, cnt, ps)
                            left = 0
                            packed = 0
                            for f in range(7):
                                disp[p, f] -= cnt[f]
                                left += disp[p, f]
                                packed += cnt[f] << (2 * f)
                            if logging:
                                log[lr, pos + 5] = OUT_DISCARD
                                log[lr, pos + 6] = packed
                                pos += 7
                            if left == 0:
                                ended = _WENT_OUT
                                wo = p
                                break
                        else:
                            shown = ((1 << f0) | (1 << f1) | (1 << f2)) & row
                            if active > 1 and shown != 0:
                                # ---- take
                                ps, face = native_take(kind, take_rank, a, _mask(disp, p), shown, ps)
                                row &= ~(1 << face)
                                disp[p, face] += 1
                                if logging:
                                    log[lr, pos + 5] = OUT_TAKE
                                    log[lr, pos + 6] = face
                                    pos += 7
                                if row == 0:
                                    ended = _ROW_EMPTY
                                    break
                            else:
                                # ---- bust: the whole row joins the display
                                for f in range(7):
                                    if (row >> f) & 1:
                                        disp[p, f] += 1
                                row = 0
                                busts[g, p] += 1
                                if logging:
                                    log[lr, pos + 5] = OUT_BUST
                                    pos += 7
                                ended = _BUST
                                break
                    elif logging:
                        pos += 7  # triple llama, chip only
                # ---- next player who has not quit
                q2 = cur
                for _ in range(n):
                    q2 = q2 + 1 if q2 + 1 < n else 0
                    if not quit_[q2]:
                        break
                cur = q2
            # ---- score the round
            hi = 0
            for p in range(n):
                pts[p] = score[_mask(disp, p)]
                tot[p] += pts[p]
                round_pts[g, p] += pts[p]
            if wo >= 0:
                tot[wo] = _chip(tot[wo])
                went_out[g, wo] += 1
            for p in range(n):
                if tot[p] > hi:
                    hi = tot[p]
            if logging:
                log[lr, pos] = LOG_END
                log[lr, pos + 1] = ended
                log[lr, pos + 2] = wo
                for p in range(n):
                    log[lr, pos + 3 + p] = pts[p]
                    log[lr, pos + 3 + n + p] = tot[p]
                pos += 3 + 2 * n
            nround += 1
            if hi >= end_threshold:
                break
            start = start + 1 if start + 1 < n else 0
        for p in range(n):
            totals[g, p] = tot[p]
        rounds[g] = nround
        if lr >= 0:
            log_len[lr] = pos



# ------------------------------------------------------------------ results
@dataclass
class BatchResult:
    """Outcomes of a batch of games (arrays indexed by game, then seat).

    Attributes:
        num_players: players per game.
        rules: the rules played.
        game_ids: ``int64[G]``, the id of each game (its random stream).
        seating: ``int64[G, N]``, the agent index at each seat.
        totals: ``int64[G, N]``, final totals by seat (lower is better).
        round_points: ``int64[G, N]``, the sum of each seat's round points.
        rounds: ``int64[G]``, rounds played.
        busts, quits, went_out, triple_llamas: ``int64[G, N]`` counts per seat
            (busts caused, quits, rounds gone out, triple llamas rolled).
        logs: game index -> trajectory log (``int32`` array) for logged games.
    """

    num_players: int
    rules: RulesConfig
    game_ids: np.ndarray
    seating: np.ndarray
    totals: np.ndarray
    round_points: np.ndarray
    rounds: np.ndarray
    busts: np.ndarray
    quits: np.ndarray
    went_out: np.ndarray
    triple_llamas: np.ndarray
    logs: dict[int, np.ndarray] = field(default_factory=dict)

    @property
    def num_games(self) -> int:
        """How many games were played (``G``)."""
        return int(self.totals.shape[0])

    def winners_mask(self) -> np.ndarray:
        """``bool[G, N]``: seats tied for the fewest points."""
        return self.totals == self.totals.min(axis=1, keepdims=True)

    def record(self, g: int) -> dict:
        """Game ``g`` (which must have been logged) as a ``lama-dice-record/1`` dict."""
        return log_to_record(self._log(g), self.num_players, self.rules)

    def result(self, g: int) -> dict:
        """The batched engine's replay result of logged game ``g`` (docs/RULES.md format)."""
        return log_to_result(self._log(g), self.num_players)

    def _log(self, g: int) -> np.ndarray:
        if g not in self.logs:
            raise KeyError(f"game {g} was not logged (pass it in log_games)")
        return self.logs[g]


def _decode_counts(packed: int) -> list[str]:
    return [FACES[f] for f in range(NUM_FACES) for _ in range((packed >> (2 * f)) & 3)]


def _iter_log(log: np.ndarray, n: int):
    i, size = 0, len(log)
    while i < size:
        tag = int(log[i])
        if tag == LOG_ROUND:
            yield tag, log[i + 1:i + 2 + n * HAND_SIZE]
            i += 2 + n * HAND_SIZE
        elif tag == LOG_QUIT:
            yield tag, log[i + 1:i + 2]
            i += 2
        elif tag == LOG_ROLL:
            yield tag, log[i + 1:i + 7]
            i += 7
        elif tag == LOG_END:
            yield tag, log[i + 1:i + 3 + 2 * n]
            i += 3 + 2 * n
        else:  # pragma: no cover - a kernel bug
            raise ValueError(f"corrupt trajectory log at {i}: tag {tag}")


def log_to_record(log: np.ndarray, num_players: int, rules: RulesConfig) -> dict:
    """A trajectory log of the kernel as a ``lama-dice-record/1`` dict."""
    n = num_players
    rounds: list[dict] = []
    for tag, e in _iter_log(log, n):
        if tag == LOG_ROUND:
            cards = [FACES[int(c)] for c in e[1:]]
            rounds.append({"start_player": int(e[0]),
                           "hands": [cards[p * HAND_SIZE:(p + 1) * HAND_SIZE] for p in range(n)],
                           "turns": []})
        elif tag == LOG_QUIT:
            rounds[-1]["turns"].append({"player": int(e[0]), "action": "quit"})
        elif tag == LOG_ROLL:
            turn: dict[str, Any] = {"player": int(e[0]), "action": "roll",
                                    "dice": [FACES[int(f)] for f in e[1:4]]}
            if e[4] == OUT_DISCARD:
                turn["discard"] = _decode_counts(int(e[5]))
            elif e[4] == OUT_TAKE:
                turn["take"] = FACES[int(e[5])]
            rounds[-1]["turns"].append(turn)
    return {"format": RECORD_FORMAT, "players": n, "rules": rules.to_dict(),
            "start_points": [0] * n, "rounds": rounds}


def log_to_result(log: np.ndarray, num_players: int) -> dict:
    """The per-round results a trajectory log carries, in the replay-result format."""
    n = num_players
    rounds: list[dict[str, Any]] = []
    for tag, e in _iter_log(log, n):
        if tag == LOG_END:
            wo = int(e[1])
            rounds.append({"finished": True, "ended_by": ROUND_ENDINGS[int(e[0])],
                           "went_out": wo if wo >= 0 else None,
                           "points": [int(x) for x in e[2:2 + n]],
                           "totals": [int(x) for x in e[2 + n:2 + 2 * n]]})
    totals = rounds[-1]["totals"] if rounds else [0] * n
    return {"valid": True, "rounds": rounds, "totals": list(totals), "game_over": True,
            "winners": _winners(totals)}


# ------------------------------------------------------------------- driver
def _seed64(seed: int | None) -> np.uint64:
    """The kernel's 64-bit base seed: ``SeedSequence(seed)`` hashed down (fresh entropy for None)."""
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0):
        raise NativePolicyError(f"seed must be an integer >= 0 or None, got {seed!r}")
    return np.random.SeedSequence(None if seed is None else int(seed)).generate_state(1, dtype=np.uint64)[0]


def play_batch(
    num_players: int,
    agents: Sequence[Any],
    *,
    games: int | None = None,
    seating: np.ndarray | None = None,
    rules: RulesConfig | Mapping | None = None,
    seed: int | None = None,
    game_ids: np.ndarray | None = None,
    log_games: Sequence[int] = (),
    log_capacity: int = 4096,
) -> BatchResult:
    """Play whole games with native policies in the compiled kernel.

    Args:
        num_players: players per game, 1..6.
        agents: :class:`NativePolicy` descriptions, or objects with a ``native(rules)``
            method that returns one (policies: :meth:`lama_dice.agents.base.Policy.native`),
            indexed by ``seating``; :func:`lama_dice.agents.native.play_batch` also takes agent specs.
        games: number of games; with ``seating=None`` agent ``s % len(agents)`` sits at seat ``s``.
        seating: ``int[G, N]`` agent index at each seat (gives ``games``).
        rules: a :class:`RulesConfig` or mapping; docs/RULES.md's defaults if None.
        seed: base seed; game ``g`` plays the random stream of ``(seed, game_ids[g])``.
        game_ids: ``int[G]`` stream ids (default ``0..G-1``); equal ids replay equal games
            (given equal seating).
        log_games: game indices whose trajectories to keep (:meth:`BatchResult.record`).
        log_capacity: initial log size per logged game (grown as needed).

    Raises:
        NativePolicyError: an agent is not native, or a bad argument.
    """
    rules = _rules(rules)
    n = check_num_players(num_players, NativePolicyError)
    if not agents:
        raise NativePolicyError("at least one agent is needed")
    natives = [_describe(a, rules) for a in agents]
    if seating is None:
        if games is None:
            raise NativePolicyError("give games or seating")
        seating = np.tile(np.arange(n) % len(natives), (int(games), 1))
    seating = np.ascontiguousarray(seating, dtype=np.int64)
    if seating.ndim != 2 or seating.shape[1] != n:
        raise NativePolicyError(f"seating must have shape (games, {n}), got {seating.shape}")
    if seating.size and (seating.min() < 0 or seating.max() >= len(natives)):
        raise NativePolicyError(f"seating holds agent indices outside 0..{len(natives) - 1}")
    n_games = seating.shape[0]
    if games is not None and games != n_games:
        raise NativePolicyError(f"games={games} but seating has {n_games} rows")
    if game_ids is None:
        game_ids = np.arange(n_games, dtype=np.int64)
    game_ids = np.ascontiguousarray(game_ids, dtype=np.int64)
    if game_ids.shape != (n_games,):
        raise NativePolicyError(f"game_ids must have shape ({n_games},), got {game_ids.shape}")
    seed64 = _seed64(seed)
    kinds = np.array([a.kind for a in natives], dtype=np.int64)
    quit_table = np.ascontiguousarray(np.stack([a.quit_table for a in natives]), dtype=np.uint8)
    take_rank = np.ascontiguousarray(np.stack([a.take_rank for a in natives]), dtype=np.int64)
    dice = np.array(rules.dice_index, dtype=np.int64)
    args = (kinds, quit_table, take_rank, dice, _DECK, _SCORE,
            rules.triple_llama == "also_match", bool(rules.must_discard), np.int64(rules.end_threshold))

    out = {k: np.zeros((n_games, n), dtype=np.int64)
           for k in ("totals", "round_points", "busts", "quits", "went_out", "triple_llamas")}
    rounds = np.zeros(n_games, dtype=np.int64)
    kernel = _play_kernel
    no_log = np.zeros((0, 0), dtype=np.int32)
    kernel(n, seating, game_ids, seed64, *args, out["totals"], out["round_points"], rounds,
           out["busts"], out["quits"], out["went_out"], out["triple_llamas"],
           no_log, np.zeros(0, dtype=np.int64), np.full(n_games, -1, dtype=np.int64))

    logs: dict[int, np.ndarray] = {}
    todo = sorted({int(g) for g in log_games})
    if todo and (todo[0] < 0 or todo[-1] >= n_games):
        raise NativePolicyError(f"log_games must be game indices 0..{n_games - 1}")
    cap = max(int(log_capacity), 1)
    while todo:
        idx = np.array(todo, dtype=np.int64)
        k = len(idx)
        log = np.zeros((k, cap), dtype=np.int32)
        log_len = np.zeros(k, dtype=np.int64)
        scratch = {name: np.zeros((k, n), dtype=np.int64) for name in out}
        kernel(n, seating[idx], game_ids[idx], seed64, *args, scratch["totals"], scratch["round_points"],
               np.zeros(k, dtype=np.int64), scratch["busts"], scratch["quits"], scratch["went_out"],
               scratch["triple_llamas"], log, log_len, np.arange(k, dtype=np.int64))
        if not np.array_equal(scratch["totals"], out["totals"][idx]):  # pragma: no cover
            raise RuntimeError("batched engine: a logged game did not replay identically")
        retry = []
        for j, g in enumerate(todo):
            if log_len[j] < 0:
                retry.append(g)
            else:
                logs[g] = log[j, :log_len[j]].copy()
        todo, cap = retry, cap * 4

    return BatchResult(n, rules, game_ids, seating, out["totals"], out["round_points"], rounds,
                       out["busts"], out["quits"], out["went_out"], out["triple_llamas"], logs)


def compile_kernel() -> float:
    """Compile (or load from the on-disk cache) the kernel now; return the seconds it took."""
    t0 = time.perf_counter()
    first_face = np.tile(np.arange(NUM_FACES, dtype=np.int64), (NUM_MASKS, 1))
    play_batch(2, [NativePolicy.random(), NativePolicy.table("always-roll", np.zeros(NUM_MASKS), first_face)],
               games=1, seed=0, log_games=[0])
    return time.perf_counter() - t0
