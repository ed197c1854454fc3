"""The compiled kernels of :class:`lama_env.vector.VectorGame` and its envs (private: use the classes).

The games are an array of state records (:data:`lama_env._kernel.STATE_DTYPE`) and their logs; every change
of a game goes through the package's one compiled step (:func:`lama_env._kernel.transition`).  Around it:
:func:`apply_kernel` applies one action per game and ends rounds (the episode step of
:mod:`lama_env.episode`, compiled: rewards, termination, truncation, final observation, new game or next
round); :func:`decisions_kernel` writes the decision now asked (observation, mask); :func:`step_kernel` does
both for the vector game; :func:`play_kernel` plays the vector env's native seats in waves; the others
sample, check, reset, observe and sum up episodes.  The observation is bit-equal to
:func:`lama_env.observation.encode`'s (``tests/test_vector.py`` checks it all against
:class:`~lama_env.engine.LamaGame`).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit
from numba.np.numpy_support import from_dtype

from . import _kernel as K
from . import episode as _episode
from ._kernel import DISCARD, TAKE, TURN

__all__ = ["DISCARD", "TAKE", "TURN"]

_AGENT_NB = from_dtype(K.AGENT_DTYPE)
#: The "no decision" column of the observation's ``decision`` block (round or game over).
DECISION_NONE = 3
#: :func:`play_kernel`'s status of a game (:meth:`lama_env.vector.VectorGame.play`).
WAIT_LEARNER, WAIT_OPPONENT, ENDED, PAUSED = 0, 1, 2, 3

#: The episode step (:mod:`lama_env.episode`), compiled.
episode_end = njit(cache=True)(_episode.episode_end)
round_reward = njit(cache=True)(_episode.round_reward)


class Outputs(NamedTuple):
    """What a step writes per game: ``obs``, ``mask``, ``player`` (the decision asked), the rest as ``PlayEnds``."""

    obs: np.ndarray
    mask: np.ndarray
    player: np.ndarray
    rew: np.ndarray
    term: np.ndarray
    trunc: np.ndarray
    round_end: np.ndarray
    final_obs: np.ndarray
    rolled: np.ndarray
    fin: np.ndarray
    fin_rounds: np.ndarray


@njit(cache=True)
def _encode_seat(out, gs, r, k, p, to_act):
    """Write player ``p``'s entries of the observation, ``k`` seats after the observer."""
    n = r.n
    thr = r.thr
    m = 0
    for f in range(7):
        c = gs.disp[p, f]
        out[7 * k + f] = r.t_disp[f, c]
        if c > 0:
            m |= 1 << f
    out[7 * n + k] = 1.0 if gs.quit[p] else 0.0
    out[8 * n + k] = 1.0 if p == to_act else 0.0
    out[9 * n + k] = 1.0 if p == gs.start else 0.0
    t = gs.tot[p]
    out[10 * n + k] = t / thr if t < thr else 1.0
    if t >= thr:
        out[11 * n + k] = 0.0
    elif thr - t < 31:
        out[11 * n + k] = (thr - t) / 31
    else:
        out[11 * n + k] = 1.0
    out[12 * n + k] = r.t_pts[m]
    out[13 * n + k] = 1.0 if t + r.score[m] >= thr else 0.0
    out[14 * n + k] = r.t_pnm[m]


@njit(cache=True)
def _encode_dice(out, b, gs, r):
    """Write the dice block at ``out[b:b + 7]``: at each face shown, the share of the dice showing it."""
    for j in range(3):
        f = gs.dice[j]
        out[b + f] = r.t_third[(gs.dice[0] == f) + (gs.dice[1] == f) + (gs.dice[2] == f)]


@njit(cache=True)
def encode(out, gs, r, seat, to_act, decision, show_dice):
    """Write game ``gs``'s observation seen from ``seat`` into ``out`` (one row, float32).

    ``to_act`` is -1 and ``decision`` :data:`DECISION_NONE` for a finished round; the dice are shown when
    ``show_dice``.  ``r`` holds the tables (``t_disp``, ``t_pts``, ``t_pnm``, ``score``, ``t_third``).
    """
    n = r.n
    for k in range(n):
        p = seat + k
        if p >= n:
            p -= n
        _encode_seat(out, gs, r, k, p, to_act)
    b = 15 * n
    for f in range(7):
        out[b + f] = 1.0 if (gs.row >> f) & 1 else 0.0
    for j in range(4):
        out[b + 7 + j] = 1.0 if j == decision else 0.0
    for f in range(7):
        out[b + 11 + f] = 0.0
    if show_dice:
        _encode_dice(out, b + 11, gs, r)
    out[b + 18] = 1.0 if gs.active == 1 else 0.0
    out[b + 19] = gs.active / n
    out[b + 20] = 1.0 if r.must else 0.0
    out[b + 21] = 1.0 if r.also_match else 0.0


@njit(cache=True)
def write_mask(mrow, gs, r):
    """Write the legal actions of game ``gs``'s decision into ``mrow`` (bool, 129): :func:`~lama_env._kernel.legal`."""
    for i in range(mrow.shape[0]):
        mrow[i] = False
    count = K.legal(gs, r, -1)[0]
    for i in range(count):
        mrow[K.legal(gs, r, i)[1]] = True


@njit(cache=True)
def _legal(gs, r, a):
    """Whether ``a`` is one of the legal actions of game ``gs``'s decision (:func:`lama_env._kernel.legal`)."""
    count = K.legal(gs, r, -1)[0]
    for i in range(count):
        if K.legal(gs, r, i)[1] == a:
            return True
    return False


@njit(cache=True)
def check_kernel(actions, s, r):
    """The index of the first game whose action is illegal, or -1 (nothing is changed)."""
    for g in range(actions.shape[0]):
        if not _legal(s[g], r, actions[g]):
            return g
    return -1


@njit(cache=True)
def reset_kernel(s, r, log, sel, reseed, seed_mixed, obs, mask, player):
    """Start a new game in every slot ``g`` with ``sel[g]`` (new streams from ``seed_mixed`` when ``reseed``)."""
    for g in range(s.shape[0]):
        if not sel[g]:
            continue
        gs = s[g]
        if reseed:
            K.start_streams(gs, seed_mixed, g)
        gs.logpos = 0
        gs.pend = -1
        K.new_game(gs, r)
        if r.logging:
            K.log_deal(gs, r, log, g)
        player[g] = 0
        encode(obs[g], gs, r, 0, 0, TURN, False)
        write_mask(mask[g], gs, r)


@njit(cache=True)
def _end_round(gs, r, log, g, o, code, fs):
    """Game ``g``'s round ended (``code``: :data:`~lama_env._kernel.ROUND_OVER` or ``GAME_OVER``): the episode step.

    Rewards; where the episode ends ``term`` or ``trunc``, the final observation from ``fs``, the totals and
    statistics to ``fin`` and a new game; else the next round.
    """
    n = r.n
    o.round_end[g] = True
    end = episode_end(code == K.GAME_OVER, gs.nround + 1, r.episode_round, r.max_rounds)
    terminated = end == _episode.TERMINATED
    for q in range(n):
        o.rew[g, q] = round_reward(r.points, terminated, gs.tot, gs.rstart, n, q)
    if end != _episode.CONTINUES:
        if terminated:
            o.term[g] = True
        else:
            o.trunc[g] = True
        encode(o.final_obs[g], gs, r, fs, -1, DECISION_NONE, False)
        o.fin_rounds[g] = gs.nround + 1
        for q in range(n):
            o.fin[g, 0, q] = gs.tot[q]
            for k in range(5):
                o.fin[g, 1 + k, q] = gs.stats[k, q]
        if r.logging:
            gs.done_len = gs.logpos
            gs.pend = -1
        K.new_game(gs, r)
    else:
        K.next_round(gs, r)
    if r.logging:
        K.log_deal(gs, r, log, g)


@njit(cache=True)
def apply_kernel(s, r, log, idx, count, actions, o, fseat):
    """Apply ``actions[g]`` (legal; none if negative) of the player to act in each game ``g = idx[j]``, ``j < count``.

    Writes ``o.rew[g]``, and ``o.rolled[g]`` for a roll; a round's end goes through :func:`_end_round`
    (final observation seen from ``fseat[g]``, the last actor where negative).  No flag is cleared here.
    """
    n = r.n
    logging = r.logging
    for j in range(count):
        g = idx[j]
        a = actions[g]
        if a < 0:  # no action for this game
            continue
        gs = s[g]
        p = gs.cur
        for q in range(n):
            o.rew[g, q] = 0.0
        roll = gs.phase == TURN and a == 0
        code = K.transition(gs, r, a)
        if logging:
            K.log_step(gs, r, log, g)
        if roll:
            for j2 in range(3):
                o.rolled[g, j2] = gs.dice[j2]
        if code != K.CONTINUES:
            _end_round(gs, r, log, g, o, code, fseat[g] if fseat[g] >= 0 else p)


@njit(cache=True)
def decisions_kernel(s, r, idx, count, obs, mask, player):
    """Write each game ``g = idx[j]``'s decision now asked: the observation of the player to act, the mask, who."""
    for j in range(count):
        g = idx[j]
        gs = s[g]
        c = gs.cur
        player[g] = c
        ph = gs.phase
        encode(obs[g], gs, r, c, c, ph, ph != TURN)
        write_mask(mask[g], gs, r)


@njit(cache=True)
def _longest(s):
    longest = 0
    for g in range(s.shape[0]):
        if s[g].logpos > longest:
            longest = s[g].logpos
    return longest


@njit(cache=True)
def step_kernel(s, r, log, actions, idx, o, fseat):
    """Apply ``actions[g]`` (legal: :func:`check_kernel`) in every game ``g``; return the longest log.

    ``idx`` is ``0..G-1``; ``o`` is one output buffer, whose flags, ``rolled`` and ended games' ``final_obs`` rows
    are cleared first.
    """
    games = actions.shape[0]
    nobs = o.obs.shape[1]
    for g in range(games):
        if o.term[g] or o.trunc[g]:
            for i in range(nobs):
                o.final_obs[g, i] = 0.0
        o.term[g] = False
        o.trunc[g] = False
        o.round_end[g] = False
        o.rolled[g, 0] = -1
        o.rolled[g, 1] = -1
        o.rolled[g, 2] = -1
    apply_kernel(s, r, log, idx, games, actions, o, fseat)
    decisions_kernel(s, r, idx, games, o.obs, o.mask, o.player)
    return _longest(s)


# ------------------------------------------------------------------ the environments' kernel
@njit(cache=True)
def forced_action(gs, r):
    """The only legal action of game ``gs``'s decision (:func:`lama_env._kernel.legal`), or -1 (a choice)."""
    count, a = K.legal(gs, r, 0)
    return a if count == 1 else -1


@njit(cache=True)
def _next_decision(gs, r, agent, me, auto_forced):
    """(action, status) of the game's next decision: the native ``agent``'s action, or whom it waits on."""
    if gs.cur == me:
        return (forced_action(gs, r) if auto_forced else -1), WAIT_LEARNER
    if agent.kind < 0:
        return -1, WAIT_OPPONENT
    st, a = K.native_action(agent, gs, r, gs.ps)
    gs.ps = st
    return a, WAIT_LEARNER


@njit(cache=True)
def play_kernel(s, r, log, agents, actions, sel, learner, seat_agent, auto_forced, room, status, lrew, o):
    """Play every game ``g`` with ``sel[g]`` until it waits on its learner seat ``learner[g]``; return the longest log.

    :meth:`lama_env.vector.VectorGame.play`: ``actions[g] >= 0`` first, then native seats (``kind >= 0``) and,
    with ``auto_forced``, the learner's forced decisions, in waves, until ``status[g]`` is set (``PAUSED``
    when fewer than ``room`` log entries are left).  ``lrew[g]`` adds the learner's rewards.
    """
    games = sel.shape[0]
    act = np.full(games, -1, np.int64)
    live = np.empty(games, np.int64)  # the games that play the next wave
    count = 0
    for g in range(games):
        if sel[g]:
            o.term[g] = False
            o.trunc[g] = False
            o.round_end[g] = False
            act[g] = actions[g]
            live[count] = g
            count += 1
    done = np.empty(games, np.int64)  # the games that stopped
    ndone = 0
    cap = log.shape[1]
    while count > 0:
        apply_kernel(s, r, log, live, count, act, o, learner)
        nxt = 0
        for j in range(count):
            g = live[j]
            gs = s[g]
            me = learner[g]
            if act[g] >= 0:
                lrew[g] += o.rew[g, me]
                if o.term[g] or o.trunc[g]:
                    status[g] = ENDED
                    act[g] = -1
                    continue
            if r.logging and gs.logpos + room > cap:
                a, st = -1, PAUSED  # before any decision: the call after the log's growth takes it
            else:
                a, st = _next_decision(gs, r, agents[seat_agent[g, gs.cur]], me, auto_forced)
            act[g] = a
            if a >= 0:
                live[nxt] = g
                nxt += 1
            else:
                status[g] = st
                done[ndone] = g
                ndone += 1
        count = nxt
    decisions_kernel(s, r, done, ndone, o.obs, o.mask, o.player)
    return _longest(s)


@njit(cache=True)
def sample_kernel(s, r, keys, use_keys, out):
    """A uniformly random legal action in every game into ``out``, from ``keys[g]`` if ``use_keys`` else ``ps``.

    The random native policy's draw; the game's own stream ``ps`` moves on unless ``use_keys``.
    """
    rand = np.zeros(1, _AGENT_NB)  # type: ignore[type-var]  # (Numba's record type) a KIND_RANDOM agent
    for g in range(s.shape[0]):
        gs = s[g]
        st = keys[g] if use_keys else gs.ps
        st, a = K.native_action(rand[0], gs, r, st)
        if not use_keys:
            gs.ps = st
        out[g] = a


@njit(cache=True)
def stats_kernel(rows, learner, fin, rounds, illegal, fst, ist):
    """The learner's episode statistics of the games ``rows`` (``fin``, ``rounds``: as :func:`apply_kernel` writes).

    ``fst[:, g]``: win (:func:`lama_env.rules.win_result`'s share; 0 where ``illegal[g]``), points per round;
    ``ist[:, g]``: rounds, final points, busts, quits, went out, illegal (``episode_stats``).
    """
    n = fin.shape[2]
    for j in range(rows.shape[0]):
        g = rows[j]
        me = learner[g]
        fst[0, g] = 0.0 if illegal[g] else K.win_result(fin[g, 0], n, me)[0]
        r = rounds[g]
        fst[1, g] = fin[g, 1, me] / r if r > 0 else 0.0
        ist[0, g] = r
        ist[1, g] = fin[g, 0, me]
        ist[2, g] = fin[g, 2, me]
        ist[3, g] = fin[g, 3, me]
        ist[4, g] = fin[g, 4, me]
        ist[5, g] = 1 if illegal[g] else 0


@njit(cache=True)
def observe_kernel(out, seats, s, r):
    """Write every game's current observation seen from ``seats[g]`` into ``out``."""
    for g in range(out.shape[0]):
        gs = s[g]
        ph = gs.phase
        encode(out[g], gs, r, seats[g], gs.cur, ph, ph != TURN)
