"""The compiled kernels of :class:`lama_env.vector.VectorGame`, its env and the batched engine (private).

Every change of a game goes through :func:`lama_env._kernel.transition`; native policies play in
:func:`play_kernel` (the vector game) and :func:`batch_kernel` (``play_batch``); the observation is bit-equal to
:func:`lama_env.observation.encode`'s (``tests/test_vector.py``).
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np
from numba import njit
from numba.np.numpy_support import from_dtype

from . import _kernel as K
from . import episode as _episode
from ._kernel import TURN

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


def outputs(g: int, n: int, obs_size: int, num_actions: int, rew_dtype: Any = np.float32) -> Outputs:
    """Zeroed output buffers of ``g`` games of ``n`` players (``rolled`` -1)."""
    return Outputs(np.zeros((g, obs_size), dtype=np.float32), np.zeros((g, num_actions), dtype=np.bool_),
                   np.zeros(g, dtype=np.int64), np.zeros((g, n), dtype=rew_dtype), np.zeros(g, dtype=np.bool_),
                   np.zeros(g, dtype=np.bool_), np.zeros(g, dtype=np.bool_), np.zeros((g, obs_size), dtype=np.float32),
                   np.full((g, 3), -1, dtype=np.int8), np.zeros((g, 6, n), dtype=np.int64), np.zeros(g, dtype=np.int64))


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
    out[11 * n + k] = min((thr - t) / 31, 1.0) if t < thr else 0.0
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
    """Write game ``gs``'s observation seen from ``seat`` into ``out`` (``to_act`` -1, :data:`DECISION_NONE`: ended)."""
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


@njit(cache=True, inline="always")
def _start(gs, r, log, g, reseed, seed_mixed, game_id):
    """A new game in record ``gs`` (slot ``g``), with the streams of ``(seed_mixed, game_id)`` when ``reseed``."""
    if reseed:
        K.start_streams(gs, seed_mixed, game_id)
    gs.logpos = 0
    gs.pend = -1
    K.new_game(gs, r)
    if r.logging:
        K.log_deal(gs, r, log, g)


@njit(cache=True)
def reset_kernel(s, r, log, sel, reseed, seed_mixed, ids, obs, mask, player):
    """Start a new game in every slot ``g`` with ``sel[g]`` (new streams of game ``ids[g]`` when ``reseed``)."""
    for g in range(s.shape[0]):
        if not sel[g]:
            continue
        gs = s[g]
        _start(gs, r, log, g, reseed, seed_mixed, ids[g])
        player[g] = 0
        encode(obs[g], gs, r, 0, 0, TURN, False)
        write_mask(mask[g], gs, r)


@njit(cache=True, inline="always")
def _finish(gs, r, fin, fin_rounds, g):
    """Game ``g`` is over: its totals and statistics to ``fin[g]``, its rounds to ``fin_rounds[g]``."""
    fin_rounds[g] = gs.nround + 1
    for q in range(r.n):
        fin[g, 0, q] = gs.tot[q]
        for k in range(5):
            fin[g, 1 + k, q] = gs.stats[k, q]


@njit(cache=True)
def _end_round(gs, r, log, g, o, code, fs):
    """Game ``g``'s round ended (``code``): rewards, then the episode's end (final obs. from ``fs``) or next round."""
    n = r.n
    o.round_end[g] = True
    end = episode_end(code == K.GAME_OVER, gs.nround + 1, r.episode_round, r.max_rounds)
    terminated = end == _episode.TERMINATED
    for q in range(n):
        o.rew[g, q] = round_reward(r.points, terminated, gs.tot, gs.rstart, n, q)
    if end != _episode.CONTINUES:  # (term and trunc were cleared before the action)
        o.term[g] = terminated
        o.trunc[g] = not terminated
        encode(o.final_obs[g], gs, r, fs, -1, DECISION_NONE, False)
        _finish(gs, r, o.fin, o.fin_rounds, g)
        if r.logging:
            gs.done_len = gs.logpos
            gs.pend = -1
        K.new_game(gs, r)
    else:
        K.next_round(gs, r)
    if r.logging:
        K.log_deal(gs, r, log, g)


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
        longest = max(longest, s[g].logpos)
    return longest


@njit(cache=True)
def step_kernel(s, r, log, actions, idx, o):
    """Apply ``actions[g]`` (legal: :func:`check_kernel`) in every game ``g`` (``idx``: ``0..G-1``); the longest log.

    Writes ``o``'s flags, ``rew``, ``rolled`` (-1: no roll) and a round's end (:func:`_end_round`, the final
    observation seen from the actor; an earlier one cleared).
    """
    term, trunc, round_end, rew, rolled = o.term, o.trunc, o.round_end, o.rew, o.rolled  # (one reference count)
    for g in range(actions.shape[0]):
        gs = s[g]
        if term[g] or trunc[g]:
            o.final_obs[g, :] = 0.0
        term[g] = False
        trunc[g] = False
        round_end[g] = False
        for q in range(r.n):
            rew[g, q] = 0.0
        p = gs.cur
        roll = gs.phase == TURN and actions[g] == 0
        code = K.transition(gs, r, actions[g])
        if r.logging:
            K.log_step(gs, r, log, g)
        for j in range(3):
            rolled[g, j] = gs.dice[j] if roll else -1
        if code != K.CONTINUES:
            _end_round(gs, r, log, g, o, code, p)
    decisions_kernel(s, r, idx, actions.shape[0], o.obs, o.mask, o.player)
    return _longest(s)


@njit(cache=True, inline="always")
def _next_decision(gs, r, agent, me, auto_forced):
    """(action, status) of the game's next decision: the native ``agent``'s (or the learner's forced) action, or -1."""
    if gs.cur == me:
        if not auto_forced:
            return -1, WAIT_LEARNER
        count, a = K.legal(gs, r, 0)
        return (a if count == 1 else -1), WAIT_LEARNER
    if agent.kind < 0:
        return -1, WAIT_OPPONENT
    st, a = K.native_action(agent, gs, r, gs.ps)
    gs.ps = st
    return a, WAIT_LEARNER


@njit(cache=True)
def play_kernel(s, r, log, agents, actions, sel, learner, seat_agent, auto_forced, room, status, lrew, o):
    """The loop of native play in the vector game and its env (:meth:`lama_env.vector.VectorGame.play`).

    Each game ``g`` of ``sel``: ``actions[g]`` (if >= 0), then its native seats (``agents[seat_agent[g, p]]``) and,
    with ``auto_forced``, the forced decisions of ``learner[g]``, until ``status[g]`` (``PAUSED``: ``room`` log
    entries left); ``lrew`` adds the learner's rewards.  The longest log.
    """
    games = sel.shape[0]
    cap = log.shape[1]
    done = np.empty(games, np.int64)  # the games that wait on a decision
    ndone = 0
    rew, rolled, term, trunc, round_end = o.rew, o.rolled, o.term, o.trunc, o.round_end
    for g in range(games):
        if not sel[g]:
            continue
        gs = s[g]
        me = learner[g]
        a = actions[g]
        term[g] = False
        trunc[g] = False
        round_end[g] = False
        fresh = True  # o.rew[g] holds the last action's rewards: cleared before the next action
        while True:
            if a >= 0:
                if fresh:
                    for q in range(r.n):
                        rew[g, q] = 0.0
                    fresh = False
                p = gs.cur
                roll = gs.phase == TURN and a == 0
                code = K.transition(gs, r, a)
                if r.logging:
                    K.log_step(gs, r, log, g)
                if roll:
                    for j in range(3):
                        rolled[g, j] = gs.dice[j]
                if code != K.CONTINUES:
                    _end_round(gs, r, log, g, o, code, me if me >= 0 else p)
                    fresh = True
                    lrew[g] += rew[g, me]
                    if term[g] or trunc[g]:
                        st = ENDED
                        break
            if r.logging and gs.logpos + room > cap:
                a, st = -1, PAUSED  # before any decision: the call after the log's growth takes it
            else:
                a, st = _next_decision(gs, r, agents[seat_agent[g, gs.cur]], me, auto_forced)
            if a < 0:
                break
        status[g] = st
        if st != ENDED:
            done[ndone] = g
            ndone += 1
    decisions_kernel(s, r, done, ndone, o.obs, o.mask, o.player)
    return _longest(s)


@njit(cache=True)
def batch_kernel(r, log, agents, seat_agent, ids, seed_mixed, fin, rounds, lens, s, pos, budget):
    """The loop of :func:`lama_env.batched.play_batch`: games ``g = pos[0]..G-1``, every seat native, to their ends.

    Game ``g`` plays the streams of ``(seed_mixed, ids[g])`` in the record ``s[0]`` (copied to one of the loop's
    own, which the compiler keeps closest) and ends in ``fin[g]``, ``rounds[g]`` and, logged into ``log[g]``,
    ``lens[g]``.  It returns after ``budget`` transitions or with ``room`` log entries left (``pos``: the next
    game, whether it is under way); call again until ``pos[0] == G``.
    """
    local = s.copy()
    gs = local[0]
    room = K.LOG_ROOM + 8 * r.n
    steps = 0
    g = pos[0]
    while g < seat_agent.shape[0]:
        if pos[1] == 0:
            _start(gs, r, log, g, True, seed_mixed, ids[g])
            pos[1] = 1
        while True:
            if steps >= budget or (r.logging and gs.logpos + room > log.shape[1]):
                pos[0] = g
                s[0] = local[0]
                return
            steps += 1
            st, a = K.native_action(agents[seat_agent[g, gs.cur]], gs, r, gs.ps)
            gs.ps = st
            code = K.transition(gs, r, a)
            if r.logging:
                K.log_step(gs, r, log, g)
            if code == K.GAME_OVER:
                break
            if code == K.ROUND_OVER:
                K.next_round(gs, r)
                if r.logging:
                    K.log_deal(gs, r, log, g)
        _finish(gs, r, fin, rounds, g)
        lens[g] = gs.logpos
        pos[1] = 0
        g += 1
    pos[0] = g


@njit(cache=True)
def sample_kernel(s, r, keys, use_keys, out):
    """The random native policy's action in every game into ``out``, from ``keys[g]`` if ``use_keys`` else ``ps``."""
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
    """The learner's ``episode_stats`` of the games ``rows``: ``fst`` win share, points per round; ``ist`` counts."""
    n = fin.shape[2]
    for j in range(rows.shape[0]):
        g = rows[j]
        me = learner[g]
        fst[0, g] = 0.0 if illegal[g] else K.win_result(fin[g, 0], n, me)[0]
        r = rounds[g]
        fst[1, g] = fin[g, 1, me] / r if r > 0 else 0.0
        ist[0, g] = r
        ist[1, g] = fin[g, 0, me]
        for k in range(2, 5):
            ist[k, g] = fin[g, k, me]
        ist[5, g] = 1 if illegal[g] else 0


@njit(cache=True)
def observe_kernel(out, seats, s, r):
    """Write every game's current observation seen from ``seats[g]`` into ``out``."""
    for g in range(out.shape[0]):
        gs = s[g]
        ph = gs.phase
        encode(out[g], gs, r, seats[g], gs.cur, ph, ph != TURN)
