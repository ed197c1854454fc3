"""The one transition of the game (private): every game of lama_env plays through :func:`transition`.

Every engine holds each game as one record of :data:`STATE_DTYPE` and changes it only through this module
(the rules travel as one :data:`RULES_DTYPE` record, :func:`make_rules`); the record's fields, the logs and
the streams: docs/environments.md, The compiled engine's record.  After editing this module, delete the
Numba caches of the kernels that inline it (``find lama_env -name '*.nb[ic]' -delete``): a cache is keyed
by its own file only.
"""

from __future__ import annotations

import numpy as np
from numba import njit
from numba.extending import register_jitable

from . import constants as C
from . import jit_cache  # noqa: F401  (a writable Numba cache folder before the first cache=True decorator)
from .odds import p_no_match
from .rules import MAX_ROUND_POINTS, RulesConfig, return_chip, score_display
from .rules import win_result as _win_result

# ------------------------------------------------------------------ constants
# the record's and the step's codes, read by the other kernels as K.TURN, K.LOG_ROOM...
CONTINUES, ROUND_OVER, GAME_OVER, LOG_ROOM = C.CONTINUES, C.ROUND_OVER, C.GAME_OVER, C.LOG_ROOM
TURN, DISCARD, TAKE, QUIT, ROLL, TAKE_BASE = C.TURN, C.DISCARD, C.TAKE, C.QUIT, C.ROLL, C.TAKE_BASE
KIND_RANDOM, KIND_TABLE = C.KIND_RANDOM, C.KIND_TABLE
_u64 = np.uint64
#: splitmix64 constants (the counter-based random streams).
_GOLDEN, _M1, _M2 = _u64(C.GOLDEN), _u64(C.M1), _u64(C.M2)
_S30, _S27, _S31, _S32 = _u64(30), _u64(27), _u64(31), _u64(32)
_TWO32 = _u64(1) << _S32
_POLICY_SALT = _u64(C.POLICY_SALT)


#: One game's state (docs/environments.md, The compiled engine's record); a batch is an array (:func:`new_state`).
STATE_DTYPE = np.dtype([
    # the fields a step reads first, together (a game's step touches few cache lines)
    ("es", np.uint64), ("ps", np.uint64),
    ("row", np.int32), ("active", np.int32), ("cur", np.int32), ("start", np.int32), ("phase", np.int32),
    ("nround", np.int32), ("nturn", np.int32),
    ("dice", np.int32, (3,)), ("lim", np.int32, (7,)), ("quit", np.uint8, (C.MAX_PLAYERS,)),
    ("tot", np.int32, (C.MAX_PLAYERS,)), ("rstart", np.int32, (C.MAX_PLAYERS,)), ("disp", np.int32, (C.MAX_PLAYERS, 7)),
    ("stats", np.int32, (5, C.MAX_PLAYERS)), ("hands", np.int8, (C.MAX_PLAYERS, 6)),
    ("logpos", np.int64), ("pend", np.int64), ("done_len", np.int64),
    # what the last transition did, for its log entries (log_step): player, phase, action, roll outcome,
    # discarded counts packed or face taken, how the round ended (-1: it goes on), who went out (-1: nobody)
    ("l_player", np.int32), ("l_phase", np.int32), ("l_action", np.int32), ("l_out", np.int32),
    ("l_detail", np.int32), ("l_ended", np.int32), ("l_wo", np.int32),
    ("cnt", np.int32, (7,)),  # unused (was the scratch of a native discard; kept: saved states keep their layout)
    ("deck", np.int32, (36,)),  # scratch of the deal
])

#: A native policy as a record (:func:`agents_table`): its kind (-1: not native, played from
#: Python), ``quit_table[mask]`` and ``take_rank[mask, f]`` (:class:`lama_env.batched.NativePolicy`).
AGENT_DTYPE = np.dtype([("kind", np.int64), ("quit_table", np.uint8, (128,)), ("take_rank", np.int64, (128, 7))])

#: The rules and settings as the kernel reads them: one record (:func:`make_rules`).
RULES_DTYPE = np.dtype([
    ("n", np.int64), ("thr", np.int64), ("maxturns", np.int64),
    ("must", np.bool_), ("also_match", np.bool_), ("logging", np.bool_),
    # the vector game's rewards and episodes: points, win, episode = round, max_rounds (0: none)
    ("points", np.bool_), ("win", np.bool_), ("episode_round", np.bool_), ("max_rounds", np.int64),
    ("dice_faces", np.int64, (3, 6)), ("disc", np.int64, (120, 7)), ("dact", np.int64, (1 << 14,)),
    ("deck0", np.int64, (36,)), ("score", np.int64, (128,)),
    # the observation's tables (lama_env._vector_kernel.encode)
    ("t_disp", np.float32, (7, 8)), ("t_pts", np.float32, (128,)), ("t_pnm", np.float32, (128,)),
    ("t_third", np.float32, (4,)),
])


def agents_table(kinds: np.ndarray, quit_tables: np.ndarray, take_ranks: np.ndarray) -> np.ndarray:
    """Native policies (``kinds[k]``, ``quit_tables[k]``, ``take_ranks[k]``) as :data:`AGENT_DTYPE` records."""
    t = np.zeros(len(kinds), AGENT_DTYPE)
    t["kind"], t["quit_table"], t["take_rank"] = kinds, quit_tables, take_ranks
    return t


def new_state(games: int) -> np.ndarray:
    """A zeroed state of ``games`` games (an array of :data:`STATE_DTYPE` records)."""
    s = np.zeros(games, STATE_DTYPE)
    s["pend"] = -1
    return s


def make_rules(n: int, rules: RulesConfig, logging: bool = False, **settings: object) -> np.ndarray:
    """The kernel's rules record (0-d, :data:`RULES_DTYPE`) of ``rules`` for ``n`` players; ``settings``: others."""
    r = np.zeros((), RULES_DTYPE)
    r["n"], r["thr"], r["must"] = n, rules.end_threshold, bool(rules.must_discard)
    r["maxturns"] = rules.max_round_turns
    r["also_match"], r["logging"] = rules.triple_llama == "also_match", bool(logging)
    r["dice_faces"] = np.array(rules.dice_index, dtype=np.int64)
    r["disc"], r["dact"], r["deck0"], r["score"] = TABLES
    for k, v in settings.items():
        r[k] = v
    return r


# ------------------------------------------------------------------ the rules' tables
def mask_display(mask: int) -> tuple[int, ...]:
    """The display holding one card of each face in ``mask`` (bit ``f`` = face ``f``): the tables' index."""
    return tuple((mask >> f) & 1 for f in range(C.NUM_FACES))


#: The points of a display by the set of faces it holds (a bit set).
SCORE = np.array([score_display(mask_display(m)) for m in range(1 << C.NUM_FACES)], dtype=np.int64)
#: The discards by action (counts per face) and the discard action of packed counts (2 bits a face; -1: none).
DISC = np.array(C.DISCARDS, dtype=np.int64)
DACT = np.full(1 << (2 * C.NUM_FACES), -1, dtype=np.int64)
for _i, _counts in enumerate(C.DISCARDS):
    DACT[sum(x << (2 * f) for f, x in enumerate(_counts))] = C.DISCARD_BASE + _i
#: :func:`make_rules`' tables of the rules: discards, discard actions, the deck, the points of a display.
TABLES = (DISC, DACT, np.array(C.DECK, dtype=np.int64), SCORE)


def observation_tables(rules: RulesConfig) -> dict[str, np.ndarray]:
    """The observation's per-value entries (:data:`RULES_DTYPE`'s ``t_*``), by the encoder's own expressions."""
    scale = [1.0 / (c + 1) for c in C.DECK_COUNTS]
    t_disp = np.array([[c * scale[f] for c in range(8)] for f in range(C.NUM_FACES)], dtype=np.float32)
    masks = [mask_display(m) for m in range(1 << C.NUM_FACES)]
    t_pts = np.array([int(SCORE[m]) / MAX_ROUND_POINTS for m in range(len(masks))], dtype=np.float32)
    t_pnm = np.array([p_no_match(d, rules) for d in masks], dtype=np.float32)
    t_third = np.array([k / 3.0 for k in range(4)], dtype=np.float32)
    return {"t_disp": t_disp, "t_pts": t_pts, "t_pnm": t_pnm, "t_third": t_third}


def encoder_rules(n: int, rules: RulesConfig) -> np.ndarray:
    """The rules record (0-d) of ``n`` players under ``rules`` with the observation's tables (no logs or rewards)."""
    return make_rules(n, rules, False, **observation_tables(rules))


# ------------------------------------------------------------------ random streams
@njit(cache=True, inline="always")
def mix(z):
    """splitmix64's finaliser."""
    z = (z ^ (z >> _S30)) * _M1
    z = (z ^ (z >> _S27)) * _M2
    return z ^ (z >> _S31)


@njit(cache=True, inline="always")
def below(state, k):
    """(new state, uniform integer in [0, k)) by rejection on 32 bits (exact)."""
    kk = _u64(k)
    lim = (_TWO32 // kk) * kk
    while True:
        state = state + _GOLDEN
        u = mix(state) >> _S32
        if u < lim:
            return state, np.int64(u % kk)


@njit(cache=True)
def start_streams(gs, seed_mixed, game_id):
    """Start game ``gs``'s streams from ``seed_mixed`` (:func:`lama_env.streams.kernel_seed`) and its id."""
    e = mix(seed_mixed ^ mix(_u64(game_id) * _GOLDEN + _GOLDEN))
    gs.es = e
    gs.ps = mix(e ^ _POLICY_SALT)


#: The chip rule (:func:`lama_env.rules.return_chip`), compiled: its one home.
chip = njit(cache=True)(return_chip)
#: A seat's win share and win reward at a game's end (:func:`lama_env.rules.win_result`), compiled: its one home.
win_result = njit(cache=True)(_win_result)
# and callable by name from compiled code (lama_env.episode.round_reward calls rules.win_result)
register_jitable(_win_result)


# ------------------------------------------------------------------ rounds and games
# Functions over records and scalars are inlined (no reference counts); those taking arrays (the logs) are not
# (an inlined array argument costs two atomic reference-count updates).
_inline = njit(cache=True, inline="always")


@_inline
def face_mask(gs, p):
    """The faces player ``p``'s display holds, as a bit set."""
    m = 0
    for f in range(7):
        if gs.disp[p, f] > 0:
            m |= 1 << f
    return m


@_inline
def _hand_out(gs, r):
    """Give each seat the six cards of the deal at the top of ``gs.deck`` (nobody has quit yet)."""
    deck = gs.deck
    for p in range(r.n):
        gs.quit[p] = 0
        for f in range(7):
            gs.disp[p, f] = 0
        for k in range(6):
            c = deck[6 * p + k]
            gs.disp[p, c] += 1
            gs.hands[p, k] = c


@njit(cache=True)
def log_deal(gs, r, log, g):
    """Log the round just dealt (``LOG_ROUND``) into ``log[g]``: its hands, the deal in order (not the scratch deck)."""
    pos = gs.logpos
    log[g, pos] = C.LOG_ROUND
    log[g, pos + 1] = gs.start
    for i in range(6 * r.n):
        log[g, pos + 2 + i] = gs.hands[i // 6, i % 6]
    gs.logpos = pos + 2 + 6 * r.n


@_inline
def begin_round(gs, r, start_player):
    """Deal a round that ``start_player`` starts (log it with :func:`log_deal`): a partial Fisher-Yates shuffle."""
    deck = gs.deck
    for i in range(36):
        deck[i] = r.deck0[i]
    st = gs.es
    for i in range(6 * r.n):
        st, j = below(st, 36 - i)
        j += i
        c = deck[i]
        deck[i] = deck[j]
        deck[j] = c
    gs.es = st
    _hand_out(gs, r)
    open_round(gs, r, start_player)


@_inline
def deal_hands(gs, r, hands):
    """Deal the round's hands as given (``hands[p, k]``: seat ``p``'s ``k``-th card; ``hands[0, 0] < 0``: none yet)."""
    if hands[0, 0] < 0:  # no card yet: empty displays (and hands), nobody has quit
        gs.quit[:r.n] = 0
        gs.disp[:r.n] = 0
        gs.hands[:r.n] = 0
        return
    for p in range(r.n):
        for k in range(6):
            gs.deck[6 * p + k] = hands[p, k]
    _hand_out(gs, r)


@_inline
def deal_card(gs, card, f):
    """The ``card``-th card of a deal dealt card by card (six to each seat in seat order) shows face ``f``."""
    p = card // 6
    gs.disp[p, f] += 1
    gs.hands[p, card - 6 * p] = f


@_inline
def open_round(gs, r, start_player):
    """Everything a new round sets but its deal: ``start_player`` starts, the full row, nobody quit, no turn."""
    gs.start = start_player
    gs.row = 127
    gs.active = r.n
    gs.cur = start_player
    gs.phase = TURN
    gs.nturn = 0
    for p in range(r.n):
        gs.rstart[p] = gs.tot[p]


@_inline
def new_game(gs, r):
    """A new game (totals and statistics 0, seat 0 starts; log its deal with :func:`log_deal`); its streams go on."""
    for p in range(r.n):
        gs.tot[p] = 0
        for k in range(5):
            gs.stats[k, p] = 0
    gs.nround = 0
    begin_round(gs, r, 0)


@_inline
def next_round(gs, r):
    """Deal the game's next round, the start player rotating (log it with :func:`log_deal`)."""
    gs.nround += 1
    first = gs.start + 1
    begin_round(gs, r, first if first < r.n else 0)


@_inline
def _score_round(gs, r, wo):
    """Score the round that ended (``wo``: who went out, or -1); return the highest total."""
    hi = 0
    for q in range(r.n):
        pts = r.score[face_mask(gs, q)]
        gs.tot[q] += pts
        gs.stats[0, q] += pts
    if wo >= 0:
        gs.tot[wo] = chip(gs.tot[wo])
        gs.stats[3, wo] += 1
    for q in range(r.n):
        hi = max(hi, gs.tot[q])
    return hi


# ------------------------------------------------------------------ actions
@_inline
def _quit(gs, p):
    """Player ``p`` quits; return the round's ending (all quit) or -1."""
    gs.quit[p] = 1
    gs.stats[2, p] += 1
    gs.active -= 1
    return C.END_ALL_QUIT if gs.active == 0 else -1


@_inline
def _roll(gs, r, p, x):
    """Player ``p`` rolls ``x`` (die 0's side * 36 + die 1's * 6 + die 2's; -1: drawn); see :func:`_resolve`."""
    if x < 0:
        st, x = below(gs.es, 216)
        gs.es = st
    gs.dice[0] = r.dice_faces[0, x // 36]
    gs.dice[1] = r.dice_faces[1, (x // 6) % 6]
    gs.dice[2] = r.dice_faces[2, x % 6]
    return _resolve(gs, r, p, gs.dice[0], gs.dice[1], gs.dice[2])


@_inline
def _resolve(gs, r, p, f0, f1, f2):
    """How the roll of faces ``f0, f1, f2`` resolves: (log outcome, the round's ending or -1)."""
    if f0 == 0 and f1 == 0 and f2 == 0:  # a triple llama
        gs.tot[p] = chip(gs.tot[p])
        gs.stats[4, p] += 1
        if not r.also_match:
            return C.OUT_TRIPLE, -1
    for f in range(7):  # the discard limits per face: as many as the dice match the display
        gs.lim[f] = 0
    matched = False
    for d in (f0, f1, f2):
        if gs.disp[p, d] > gs.lim[d]:
            gs.lim[d] += 1
            matched = True
    if matched:
        gs.phase = DISCARD
        return C.OUT_DISCARD, -1
    if gs.active > 1 and ((1 << f0) | (1 << f1) | (1 << f2)) & gs.row != 0:
        gs.phase = TAKE
        return C.OUT_TAKE, -1
    for f in range(7):  # a bust: the whole row joins the display
        if (gs.row >> f) & 1:
            gs.disp[p, f] += 1
    gs.row = 0
    gs.stats[1, p] += 1
    return C.OUT_BUST, C.END_BUST


@_inline
def _discard(gs, r, p, a):
    """Player ``p`` discards the cards of action ``a``; return (the counts packed 2 bits per face, ending or -1)."""
    left = 0
    packed = 0
    for f in range(7):
        c = r.disc[a - C.DISCARD_BASE, f]
        gs.disp[p, f] -= c
        left += gs.disp[p, f]
        packed += c << (2 * f)
    gs.phase = TURN
    return packed, C.END_WENT_OUT if left == 0 else -1


@_inline
def _take(gs, p, a):
    """Player ``p`` takes the row card of action ``a``; return (the face, the ending (row empty) or -1)."""
    f = a - TAKE_BASE
    gs.row &= ~(1 << f)
    gs.disp[p, f] += 1
    gs.phase = TURN
    return f, C.END_ROW_EMPTY if gs.row == 0 else -1


@_inline
def _next_player(gs, r):
    """The turn passes to the next player who has not quit."""
    q = gs.cur
    for _ in range(r.n):
        q = q + 1 if q + 1 < r.n else 0
        if not gs.quit[q]:
            break
    gs.cur = q


@_inline
def transition(gs, r, a):
    """Apply the legal action ``a`` of the player to act in ``gs`` (dice drawn); see :func:`transition_roll`."""
    return transition_roll(gs, r, a, -1)


@_inline
def transition_roll(gs, r, a, x):
    """:func:`transition` with a roll's dice given: ``x`` (die 0's side * 36 + die 1's * 6 + die 2's), or -1: drawn.

    Returns ``CONTINUES``, ``ROUND_OVER`` (scored: :func:`next_round`) or ``GAME_OVER``; ``l_*`` say what it did.
    """
    p = gs.cur
    ph = gs.phase
    out = 0
    detail = 0
    if ph == TURN:
        gs.nturn += 1
        if a == QUIT:
            ended = _quit(gs, p)
        else:
            out, ended = _roll(gs, r, p, x)
    elif ph == DISCARD:
        detail, ended = _discard(gs, r, p, a)
    else:
        detail, ended = _take(gs, p, a)
    if ended < 0 and gs.phase == TURN and gs.nturn >= r.maxturns:
        ended = C.END_TURN_CAP  # the turn is over and the round would go on: cut (transitions.cut_round)
    wo = p if ended == C.END_WENT_OUT else -1
    if r.logging:  # (scratch for log_step only)
        gs.l_player = p
        gs.l_phase = ph
        gs.l_action = a
        gs.l_out = out
        gs.l_detail = detail
        gs.l_ended = ended
        gs.l_wo = wo
    if ended < 0:
        if gs.phase == TURN:
            _next_player(gs, r)
        return CONTINUES
    hi = _score_round(gs, r, wo)
    return GAME_OVER if hi >= r.thr else ROUND_OVER


@njit(cache=True)
def log_step(gs, r, log, g):
    """Log what the last :func:`transition` of game ``g`` did into ``log[g]`` (and the round's end)."""
    pos = gs.logpos
    p = gs.l_player
    if gs.l_phase == TURN and gs.l_action == QUIT:
        log[g, pos] = C.LOG_QUIT
        log[g, pos + 1] = p
        pos += 2
    elif gs.l_phase == TURN:
        gs.pend = pos
        log[g, pos] = C.LOG_ROLL
        log[g, pos + 1] = p
        for j in range(3):
            log[g, pos + 2 + j] = gs.dice[j]
        log[g, pos + 5] = gs.l_out
        log[g, pos + 6] = 0
        pos += 7
    else:
        log[g, gs.pend + 6] = gs.l_detail
    if gs.l_ended >= 0:
        n = r.n
        log[g, pos] = C.LOG_END
        log[g, pos + 1] = gs.l_ended
        log[g, pos + 2] = gs.l_wo
        for q in range(n):
            log[g, pos + 3 + q] = r.score[face_mask(gs, q)]
            log[g, pos + 3 + n + q] = gs.tot[q]
        pos += 3 + 2 * n
    gs.logpos = pos


# ------------------------------------------------------------------ legal actions and native policies
@_inline
def legal(gs, r, i):
    """(how many legal actions game ``gs``'s decision has, the ``i``-th of them or -1 when ``i`` is out of range).

    The one derivation of the legal actions in compiled code.  The order: a turn: roll, quit; a take: the
    shown row cards by face; a discard: the counts of at most ``lim[f]`` of each face as mixed-radix numbers
    (face 0 lowest, radix ``lim[f] + 1``) increasing, no empty discard under ``must``.  ``i = -1``: the
    count and the last legal action (-1 when none).
    """
    ph = gs.phase
    if ph == TURN:
        return 2, (ROLL if i == 0 else (QUIT if i == 1 or i == -1 else -1))
    if ph == TAKE:
        shown = ((1 << gs.dice[0]) | (1 << gs.dice[1]) | (1 << gs.dice[2])) & gs.row
        count = 0
        a = -1
        for f in range(7):
            if (shown >> f) & 1:
                if count == i or i == -1:
                    a = TAKE_BASE + f
                count += 1
        return count, a
    first = 1 if r.must else 0
    nopt = 1
    key = 0
    for f in range(7):
        nopt *= gs.lim[f] + 1
        key |= gs.lim[f] << (2 * f)  # the last count: every digit at its most
    count = nopt - first
    if i == -1:
        return count, (r.dact[key] if count > 0 else -1)
    if i < 0 or i >= count:
        return count, -1
    k = i + first
    key = 0
    for f in range(7):
        x = gs.lim[f] + 1
        if x > 1:  # (a face without matched dice has the one digit 0)
            key |= (k % x) << (2 * f)
            k //= x
    return count, r.dact[key]


@_inline
def native_action(agent, gs, r, st):
    """(new stream state, action) of native agent ``agent`` in game ``gs``, drawing from ``st``.

    ``KIND_RANDOM``: one draw of an index in :func:`legal`'s order; ``KIND_TABLE``: ``quit_table[m]``, the last
    legal discard, or the shown row card of smallest ``take_rank[m, f]`` (first face on ties), ``m`` the display's.
    """
    ph = gs.phase
    if agent.kind == KIND_RANDOM:
        st, x = below(st, legal(gs, r, -1)[0])
        return st, legal(gs, r, x)[1]
    if ph == DISCARD:
        return st, legal(gs, r, -1)[1]
    m = face_mask(gs, gs.cur)
    if ph == TURN:
        return st, QUIT if agent.quit_table[m] != 0 else ROLL
    count, a = legal(gs, r, -1)  # the last shown face; then the others, last to first (ties: the first face)
    best = agent.take_rank[m, a - TAKE_BASE]
    for j in range(count - 2, -1, -1):
        b = legal(gs, r, j)[1]
        if agent.take_rank[m, b - TAKE_BASE] <= best:
            best = agent.take_rank[m, b - TAKE_BASE]
            a = b
    return st, a
