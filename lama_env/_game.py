"""The compiled calls of :class:`lama_env.engine.LamaGame` (private): thin drivers over :mod:`lama_env._kernel`.

Every argument is an array or a scalar (Numba's cheapest dispatch): ``s`` the one-game state (a one-element
array of :data:`~lama_env._kernel.STATE_DTYPE`), ``rr`` the rules record (one of ``RULES_DTYPE``).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from . import _kernel as K
from . import _vector_kernel as VK

#: :func:`step`'s result when the action is not legal (nothing was changed), or when ``log`` has no room for it.
ILLEGAL, FULL = -1, -2
#: The layout of :func:`view`'s array for ``n`` players: ``disp`` (7 n), ``tot``, ``quit``, ``rstart`` (n
#: each), then ``row`` (a bit set), ``active``, ``cur``, ``start``, ``phase``, ``nround``, ``nturn``,
#: ``dice`` (3), ``lim`` (7), ``stats`` (5 n).
VIEW_SCALARS = 17


@njit(cache=True)
def step(s, rr, a, x, deal_next, log):
    """Apply action ``a`` of the player to act in game ``s[0]``, logged into ``log[0]``; :data:`ILLEGAL` if not legal.

    ``x``: a roll's dice (die 0's side * 36 + die 1's * 6 + die 2's) or -1 (drawn).  ``deal_next``: deal the
    next round when the action ends one.  Returns ``code | phase << 2 | cur << 4 | dice[0] << 7 | dice[1] << 10
    | dice[2] << 13 | key << 16`` (``code``: ``CONTINUES``, ``ROUND_OVER`` or ``GAME_OVER``; the rest as after the
    step, the next round's if dealt; ``key``: :func:`legal_key`), or :data:`FULL` (grow ``log`` and call again).
    """
    gs = s[0]
    r = rr[0]
    if not VK._legal(gs, r, a):
        return ILLEGAL
    if gs.logpos + K.LOG_ROOM + 8 * r.n > log.shape[1]:
        return FULL
    code = K.transition_roll(gs, r, a, x)
    K.log_step(gs, r, log, 0)
    if code == K.ROUND_OVER and deal_next:
        K.next_round(gs, r)
        K.log_deal(gs, r, log, 0)
    return (code | (gs.phase << 2) | (gs.cur << 4) | (gs.dice[0] << 7) | (gs.dice[1] << 10) | (gs.dice[2] << 13)
            | (legal_key(gs, r) << 16))


@njit(cache=True, inline="always")
def legal_key(gs, r):
    """What :func:`lama_env._kernel.legal` reads of the decision, packed: the key of a cache of its legal actions."""
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
def begin(s, rr, start_player, nround, hands, log):
    """Open round ``nround`` of game ``s[0]`` for ``start_player``, logged into ``log[0]`` once dealt.

    ``hands``: ``[n, 6]`` face indices (as given), ``[[-1]]`` (none yet: :func:`deal_card`) or empty (the stream).
    """
    gs = s[0]
    r = rr[0]
    if hands.shape[0] == 0:
        K.begin_round(gs, r, start_player)
    else:
        K.deal_hands(gs, r, hands)
        K.open_round(gs, r, start_player)
    gs.nround = nround
    if hands.shape[0] == 0 or hands[0, 0] >= 0:
        K.log_deal(gs, r, log, 0)


@njit(cache=True)
def deal_card(s, rr, card, f, log):
    """The ``card``-th card of the deal under way in game ``s[0]`` shows face ``f`` (the last: logged)."""
    K.deal_card(s[0], card, f)
    if card == 6 * rr[0].n - 1:
        K.log_deal(s[0], rr[0], log, 0)


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
    """The action the compiled native agent ``agent[0]`` takes in game ``s[0]`` (drawn from ``ps``, moved on)."""
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
    k = 10 * n
    for p in range(n):
        for f in range(7):
            out[7 * p + f] = gs.disp[p, f]
        out[7 * n + p] = gs.tot[p]
        out[8 * n + p] = gs.quit[p]
        out[9 * n + p] = gs.rstart[p]
        for j in range(5):
            out[k + VIEW_SCALARS + j * n + p] = gs.stats[j, p]
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
    return out
