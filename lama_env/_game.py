"""The compiled calls of :class:`lama_env.engine.LamaGame` (private): one game's record, the kernel's own step.

A :class:`~lama_env.engine.LamaGame` holds its game as a one-element array of
:data:`lama_env._kernel.STATE_DTYPE` (the record :func:`lama_env.batched.play_batch` and
:class:`lama_env.vector.VectorGame` keep per game) and changes it only through these functions,
each a thin driver over :mod:`lama_env._kernel`: the same :func:`~lama_env._kernel.transition_roll`,
deals, :func:`~lama_env._kernel.legal` and native ``random`` draw as every compiled engine, and the
vector game's observation encoder (:func:`lama_env._vector_kernel.encode`).  Every argument is an
array or a scalar (Numba's cheapest dispatch from Python): ``s`` the one-game state, ``rr`` the
rules record as a one-element array of :data:`~lama_env._kernel.RULES_DTYPE`.

=====================  ======================================================================
function               what it does
=====================  ======================================================================
:func:`step`           checks an action against the one legality function and applies it
                       (dice drawn from the game's stream, or given); at a round's end writes
                       what the round did into ``out`` and, when asked, deals the next round
:func:`begin`          opens a round: dealt from the game's stream, as given, or not yet
                       (explicit chance: the cards come one by one through :func:`deal_card`)
:func:`deal_card`      one card of a deal dealt card by card
:func:`legal_actions`  the decision's legal actions (the kernel's order)
:func:`legal_key`      what the legal actions depend on, packed (the key of their cache)
:func:`sample`         the compiled ``random`` agent's draw (from the game's policy stream)
:func:`observe`        the observation from a seat (the vector game's encoder)
:func:`view`           the fields the Python properties read, in one flat array
=====================  ======================================================================
"""

from __future__ import annotations

import numpy as np
from numba import njit

from . import _kernel as K
from . import _vector_kernel as VK

#: :func:`step`'s result when the action is not legal (nothing was changed).
ILLEGAL = -1
#: What :func:`step` writes into ``out`` at a round's end: how it ended, who went out (or -1), then per seat
#: (six entries each) the round's points, who had quit, the triple llamas of the game so far, the totals;
#: then the round's start player and index.
OUT_ENDED, OUT_WENT_OUT, OUT_POINTS, OUT_QUIT, OUT_TRIPLES, OUT_TOTALS = 0, 1, 2, 8, 14, 20
OUT_START, OUT_ROUND = 26, 27
OUT_SIZE = 28
#: The layout of :func:`view`'s array for ``n`` players: ``disp`` (7 n), ``tot``, ``quit``, ``rstart`` (n
#: each), then ``row`` (a bit set), ``active``, ``cur``, ``start``, ``phase``, ``nround``, ``nturn``,
#: ``dice`` (3), ``lim`` (7), ``stats`` (5 n).
VIEW_SCALARS = 17


@njit(cache=True)
def step(s, rr, a, x, deal_next, out):
    """Apply action ``a`` of the player to act in game ``s[0]``; :data:`ILLEGAL` if it is not legal.

    ``x``: a roll's dice (die 0's side * 36 + die 1's * 6 + die 2's) or -1 (drawn from the game's
    stream). ``deal_next``: deal the next round from the stream when the action ends one.  Returns
    ``code | phase << 2 | cur << 4 | dice[0] << 7 | dice[1] << 10 | dice[2] << 13 | key << 16``,
    ``code`` the kernel's ``CONTINUES``, ``ROUND_OVER`` or ``GAME_OVER``, then the phase, player and
    dice after the step (the next round's when one was dealt) and the :func:`legal_key` of the
    decision now; at a round's end ``out`` holds what it did (:data:`OUT_ENDED` ...), read before
    the next deal.
    """
    gs = s[0]
    r = rr[0]
    if not VK._legal(gs, r, a):
        return ILLEGAL
    code = K.transition_roll(gs, r, a, x)
    if code != K.CONTINUES:
        out[OUT_ENDED] = gs.l_ended
        out[OUT_WENT_OUT] = gs.l_wo
        for q in range(r.n):
            out[OUT_POINTS + q] = r.score[K.face_mask(gs, q)]
            out[OUT_QUIT + q] = gs.quit[q]
            out[OUT_TRIPLES + q] = gs.stats[4, q]
            out[OUT_TOTALS + q] = gs.tot[q]
        out[OUT_START] = gs.start
        out[OUT_ROUND] = gs.nround
        if code == K.ROUND_OVER and deal_next:
            K.next_round(gs, r)
    return (code | (gs.phase << 2) | (gs.cur << 4) | (gs.dice[0] << 7) | (gs.dice[1] << 10) | (gs.dice[2] << 13)
            | (legal_key(gs, r) << 16))


@njit(cache=True, inline="always")
def legal_key(gs, r):
    """What :func:`lama_env._kernel.legal` reads of the decision, packed: the key of a cache of its legal actions.

    The phase (2 bits), and at a discard the limits (2 bits a face) and ``must``, at a take the
    row cards the dice show (7 bits from bit 16): the same key, the same legal actions.
    """
    ph = gs.phase
    key = ph
    if ph == K.DISCARD:
        for f in range(7):
            key |= gs.lim[f] << (2 + 2 * f)
        if r.must:
            key |= 1 << 23
    elif ph == K.TAKE:
        key |= (((1 << gs.dice[0]) | (1 << gs.dice[1]) | (1 << gs.dice[2])) & gs.row) << 16
    return key


@njit(cache=True)
def begin(s, rr, start_player, nround, hands):
    """Open round ``nround`` of game ``s[0]``, which ``start_player`` starts.

    ``hands``: ``[n, 6]`` face indices (the deal as given), ``[[-1]]`` (no card dealt yet:
    :func:`deal_card` deals them) or an empty array (dealt from the game's stream, as the
    kernel deals every round).
    """
    gs = s[0]
    r = rr[0]
    if hands.shape[0] == 0:
        K.begin_round(gs, r, start_player)
    else:
        K.deal_hands(gs, r, hands)
        K.open_round(gs, r, start_player)
    gs.nround = nround


@njit(cache=True)
def deal_card(s, card, f):
    """The ``card``-th card of the deal under way in game ``s[0]`` shows face ``f``."""
    K.deal_card(s[0], card, f)


@njit(cache=True)
def legal_actions(s, rr):
    """The legal actions of game ``s[0]``'s decision (an array, in the kernel's order)."""
    gs = s[0]
    r = rr[0]
    count = K.legal(gs, r, -1)[0]
    out = np.empty(count, np.int64)
    for i in range(count):
        out[i] = K.legal(gs, r, i)[1]
    return out


@njit(cache=True)
def sample(s, rr, agent):
    """The action the compiled native agent ``agent[0]`` (``random``: one draw) takes in game ``s[0]``.

    It draws from the game's policy stream (``ps``), which moves on.
    """
    gs = s[0]
    st, a = K.native_action(agent[0], gs, rr[0], gs.ps)
    gs.ps = st
    return a


@njit(cache=True)
def observe(s, rr, seat, to_act, decision, show_dice, out):
    """Write game ``s[0]``'s observation from ``seat`` into ``out`` (:func:`lama_env._vector_kernel.encode`)."""
    VK.encode(out, s[0], rr[0], seat, to_act, decision, show_dice)


@njit(cache=True)
def view(s, n):
    """The fields the Python properties read, as one int64 array (the layout of :data:`VIEW_SCALARS`)."""
    gs = s[0]
    out = np.empty(15 * n + VIEW_SCALARS, np.int64)
    k = 0
    for p in range(n):
        for f in range(7):
            out[k] = gs.disp[p, f]
            k += 1
    for p in range(n):
        out[k] = gs.tot[p]
        out[k + n] = gs.quit[p]
        out[k + 2 * n] = gs.rstart[p]
        k += 1
    k += 2 * n
    out[k] = gs.row
    out[k + 1] = gs.active
    out[k + 2] = gs.cur
    out[k + 3] = gs.start
    out[k + 4] = gs.phase
    out[k + 5] = gs.nround
    out[k + 6] = gs.nturn
    for j in range(3):
        out[k + 7 + j] = gs.dice[j]
    for f in range(7):
        out[k + 10 + f] = gs.lim[f]
    k += VIEW_SCALARS
    for j in range(5):
        for p in range(n):
            out[k] = gs.stats[j, p]
            k += 1
    return out
