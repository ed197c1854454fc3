"""A compiled batched engine: many full games at once, for fast evaluation.

:func:`play_batch` plays ``G`` complete games (until the end threshold) for
``N`` players whose seats are filled by *native* policies, inside one
Numba-compiled kernel, and returns per-game outcome arrays
(:class:`BatchResult`)::

    from lama_env.batched import play_batch

    res = play_batch(2, ["threshold:0.2", "random"], games=10_000, seed=1)
    res.totals.shape        # (10000, 2): final totals by seat
    res.winners_mask()      # (10000, 2) bool: tied for the fewest points

Native policies (:func:`native_policy`) follow the same spec strings and the
same decisions as the Python agents of :mod:`lama_dice.agents.heuristics`:

==================  ==============================================================
spec                decisions
==================  ==============================================================
``random``          uniform over the legal actions (its own random stream)
``always-roll``     always roll; discard every card it may (the per-face limits);
                    take the cheapest row card: the smallest
                    ``(score(display + card) - score(display), value)`` with
                    ``L`` valued 10
``threshold:T``     quit iff ``odds.p_no_match(own display) >= T``, else roll;
                    discards and takes like ``always-roll``
``points:K``        roll iff ``score_display(own display) > K``, else quit;
                    discards and takes like ``always-roll``
==================  ==============================================================

Game ``g`` draws its deals and dice from its own counter-based random stream,
a function of ``(seed, game_ids[g])`` only; policies draw from a second stream
of the same game.  A game therefore plays the same whether it is played alone
or in a batch, logged or not, which is how :func:`play_batch` logs a subset of
games (``log_games``): it plays them again with a trajectory log.  A log
converts to a ``lama-dice-record/1`` dict (:meth:`BatchResult.record`) that
:func:`lama_env.record.replay` checks against the reference engine, and to the
batched engine's own replay result (:meth:`BatchResult.result`) for
comparison.

The turn flow of :class:`lama_env.engine.LamaGame` (and the one-line
:func:`lama_env.rules.return_chip`) is necessarily written a second time here,
in compiled form: that is what makes it fast.  Everything else comes from the
engine's modules as tables: the deck (``DECK_COUNTS``), the rules' dice,
:func:`lama_env.rules.score_display` per set of held faces and
:func:`lama_env.odds.p_no_match` for ``threshold``.  ``tests/test_batched.py``
replays many games of every player count and rules configuration through the
reference engine to keep the two identical.

Pure Python/NumPy/Numba: no gym, torch or file I/O.  The kernel is compiled on
first use and cached on disk (``cache=True``); :func:`compile_kernel` compiles
it eagerly and returns the seconds it took.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

import numpy as np
from numba import njit

from . import odds
from .engine import RECORD_FORMAT
from .errors import LamaDiceError
from .rules import (
    DECK_COUNTS,
    FACES,
    HAND_SIZE,
    MAX_PLAYERS,
    MIN_PLAYERS,
    NUM_FACES,
    RulesConfig,
    score_display,
    winners as _winners,
)

__all__ = [
    "BatchResult", "NativePolicy", "NativePolicyError", "compile_kernel", "is_native",
    "native_policy", "play_batch",
]

# ----------------------------------------------------------------- policies
KIND_RANDOM = 0  #: uniform over legal actions
KIND_TABLE = 1  #: turn decision by table over the display's faces; max discard; cheapest take

NUM_MASKS = 1 << NUM_FACES  #: displays by the set of faces they hold

#: Value of a face for the heuristics' take tie-break (``L`` counts 10).
_FACE_VALUE = (10, 1, 2, 3, 4, 5, 6)

#: Native policy names.
NATIVE_NAMES = ("random", "always-roll", "threshold", "points")


class NativePolicyError(LamaDiceError, ValueError):
    """A spec that the batched engine cannot play natively (or a malformed one)."""


@dataclass(frozen=True)
class NativePolicy:
    """A policy the kernel plays natively.

    Attributes:
        spec: the agent spec string (``"threshold:0.2"``).
        kind: :data:`KIND_RANDOM` or :data:`KIND_TABLE`.
        quit_table: for :data:`KIND_TABLE`, ``quit_table[mask]`` is 1 when the
            policy quits at the start of its turn holding the faces of ``mask``
            (bit ``f`` = face index ``f``).
    """

    spec: str
    kind: int
    quit_table: np.ndarray = field(repr=False)


def _mask_counts(mask: int) -> tuple[int, ...]:
    return tuple((mask >> f) & 1 for f in range(NUM_FACES))


def native_policy(spec: str, rules: RulesConfig | Mapping | None = None) -> NativePolicy:
    """The native form of ``spec`` under ``rules``.

    Raises:
        NativePolicyError: ``spec`` is not one of :data:`NATIVE_NAMES` (with a
            well-formed argument).
    """
    rules = _rules(rules)
    if not isinstance(spec, str):
        raise NativePolicyError(f"a native policy spec must be a string, got {spec!r}")
    name, sep, arg = spec.strip().partition(":")
    table = np.zeros(NUM_MASKS, dtype=np.uint8)
    if name == "random" and not sep:
        return NativePolicy(spec.strip(), KIND_RANDOM, table)
    if name == "always-roll" and not sep:
        return NativePolicy(spec.strip(), KIND_TABLE, table)
    if name == "threshold" and sep:
        try:
            t = float(arg)
        except ValueError:
            raise NativePolicyError(f"threshold:T needs a number T, got {spec!r}") from None
        if not 0.0 <= t <= 1.0:
            raise NativePolicyError(f"threshold:T needs 0 <= T <= 1, got {spec!r}")
        for m in range(NUM_MASKS):
            table[m] = odds.p_no_match(_mask_counts(m), rules) >= t
        return NativePolicy(spec.strip(), KIND_TABLE, table)
    if name == "points" and sep:
        try:
            k = int(arg)
        except ValueError:
            raise NativePolicyError(f"points:K needs an integer K >= 0, got {spec!r}") from None
        if k < 0:
            raise NativePolicyError(f"points:K needs an integer K >= 0, got {spec!r}")
        for m in range(NUM_MASKS):
            table[m] = not score_display(_mask_counts(m)) > k
        return NativePolicy(spec.strip(), KIND_TABLE, table)
    raise NativePolicyError(
        f"{spec!r} is not a native policy (native: random, always-roll, threshold:T, points:K)"
    )


def is_native(spec: Any) -> bool:
    """Whether ``spec`` (a string) can be played by the batched engine."""
    try:
        native_policy(spec)
    except NativePolicyError:
        return False
    return True


def _rules(rules: RulesConfig | Mapping | None) -> RulesConfig:
    return rules if isinstance(rules, RulesConfig) else RulesConfig.from_dict(rules)


# ----------------------------------------------------------- rule tables
def _score_table() -> np.ndarray:
    return np.array([score_display(_mask_counts(m)) for m in range(NUM_MASKS)], dtype=np.int64)


def _take_key_table(score: np.ndarray) -> np.ndarray:
    """``key[mask, f]``: the heuristics' take preference (smaller first)."""
    key = np.zeros((NUM_MASKS, NUM_FACES), dtype=np.int64)
    for m in range(NUM_MASKS):
        for f in range(NUM_FACES):
            key[m, f] = (score[m | (1 << f)] - score[m]) * 16 + _FACE_VALUE[f]
    return key


_SCORE = _score_table()
_TAKE_KEY = _take_key_table(_SCORE)
_DECK = np.repeat(np.arange(NUM_FACES, dtype=np.int64), DECK_COUNTS)

# -------------------------------------------------------------- log format
#: Log entry tags (each entry is ``tag, ...``; see :meth:`BatchResult.record`).
LOG_ROUND, LOG_QUIT, LOG_ROLL, LOG_END = 0, 1, 2, 3
#: Roll outcomes in a ``LOG_ROLL`` entry.
OUT_TRIPLE, OUT_DISCARD, OUT_TAKE, OUT_BUST = 0, 1, 2, 3
#: ``ended_by`` codes in a ``LOG_END`` entry (index into this tuple).
ENDINGS = ("went_out", "row_empty", "bust", "all_quit")
_WENT_OUT, _ROW_EMPTY, _BUST, _ALL_QUIT = 0, 1, 2, 3


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


@njit(cache=True)
def _play_kernel(n, seat_agent, game_ids, seed, kinds, quit_table, dice, deck0, score, take_key,
                 also_match, must_discard, end_threshold,
                 totals, round_pts, rounds, busts, quits, went_out, triples, log, log_len, log_row):
    """Play games ``g = 0..G-1`` (``G = len(seat_agent)``) to the end; see :func:`play_batch`.

    Per-game outputs (``totals``, ``round_pts``, ``busts``, ``quits``,
    ``went_out``, ``triples``: ``[G, n]``; ``rounds``: ``[G]``) are accumulated
    into the zeroed arrays given.  Game ``g`` with ``log_row[g] = r >= 0`` is
    logged into ``log[r]`` and ``log_len[r]`` gets the log's length, or -1 if
    ``log.shape[1]`` was too small.  The rules arrive as tables: ``dice[d, side]``
    face indices, ``deck0`` the 36 cards, ``score[mask]`` the points of a
    display holding the faces of ``mask``, ``take_key[mask, f]`` the
    heuristics' take preference; policies as ``kinds[a]`` and
    ``quit_table[a, mask]``.
    """
    G = seat_agent.shape[0]
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
                if kind == KIND_RANDOM:
                    ps, r = _below(ps, 2)
                    q = r == 1
                else:
                    q = quit_table[a, _mask(disp, p)] != 0
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
                                if kind == KIND_RANDOM:
                                    nopt = 0
                                    for f in range(7):
                                        nopt += (shown >> f) & 1
                                    ps, k = _below(ps, nopt)
                                    face = -1
                                    for f in range(7):
                                        if (shown >> f) & 1:
                                            if k == 0:
                                                face = f
                                                break
                                            k -= 1
                                else:
                                    m = _mask(disp, p)
                                    face = -1
                                    best = 1 << 30
                                    for f in range(7):
                                        if (shown >> f) & 1 and take_key[m, f] < best:
                                            best = take_key[m, f]
                                            face = f
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
    rounds = []
    for tag, e in _iter_log(log, n):
        if tag == LOG_END:
            wo = int(e[1])
            rounds.append({"finished": True, "ended_by": ENDINGS[int(e[0])],
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
    agents: Sequence[str | NativePolicy],
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
        agents: native specs (or :class:`NativePolicy`), indexed by ``seating``.
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
    if isinstance(num_players, bool) or not isinstance(num_players, (int, np.integer)) \
            or not MIN_PLAYERS <= num_players <= MAX_PLAYERS:
        raise NativePolicyError(f"num_players must be an integer 1..6, got {num_players!r}")
    n = int(num_players)
    if not agents:
        raise NativePolicyError("at least one agent is needed")
    # (re)build every policy for these rules: a threshold table depends on the dice
    natives = [native_policy(a.spec if isinstance(a, NativePolicy) else a, rules) for a in agents]
    if seating is None:
        if games is None:
            raise NativePolicyError("give games or seating")
        seating = np.tile(np.arange(n) % len(natives), (int(games), 1))
    seating = np.ascontiguousarray(seating, dtype=np.int64)
    if seating.ndim != 2 or seating.shape[1] != n:
        raise NativePolicyError(f"seating must have shape (games, {n}), got {seating.shape}")
    if seating.size and (seating.min() < 0 or seating.max() >= len(natives)):
        raise NativePolicyError(f"seating holds agent indices outside 0..{len(natives) - 1}")
    G = seating.shape[0]
    if games is not None and games != G:
        raise NativePolicyError(f"games={games} but seating has {G} rows")
    if game_ids is None:
        game_ids = np.arange(G, dtype=np.int64)
    game_ids = np.ascontiguousarray(game_ids, dtype=np.int64)
    if game_ids.shape != (G,):
        raise NativePolicyError(f"game_ids must have shape ({G},), got {game_ids.shape}")
    seed64 = _seed64(seed)
    kinds = np.array([a.kind for a in natives], dtype=np.int64)
    quit_table = np.ascontiguousarray(np.stack([a.quit_table for a in natives]), dtype=np.uint8)
    dice = np.array(rules.dice_index, dtype=np.int64)
    args = (kinds, quit_table, dice, _DECK, _SCORE, _TAKE_KEY,
            rules.triple_llama == "also_match", bool(rules.must_discard), np.int64(rules.end_threshold))

    out = {k: np.zeros((G, n), dtype=np.int64)
           for k in ("totals", "round_points", "busts", "quits", "went_out", "triple_llamas")}
    rounds = np.zeros(G, dtype=np.int64)
    kernel = _play_kernel
    no_log = np.zeros((0, 0), dtype=np.int32)
    kernel(n, seating, game_ids, seed64, *args, out["totals"], out["round_points"], rounds,
           out["busts"], out["quits"], out["went_out"], out["triple_llamas"],
           no_log, np.zeros(0, dtype=np.int64), np.full(G, -1, dtype=np.int64))

    logs: dict[int, np.ndarray] = {}
    todo = sorted({int(g) for g in log_games})
    if todo and (todo[0] < 0 or todo[-1] >= G):
        raise NativePolicyError(f"log_games must be game indices 0..{G - 1}")
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
    play_batch(2, ["random", "threshold:0.2"], games=1, seed=0, log_games=[0])
    return time.perf_counter() - t0
