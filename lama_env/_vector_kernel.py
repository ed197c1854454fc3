"""The compiled kernels of :class:`lama_env.vector.VectorGame` and its envs (private: use the classes).

Every game of a vector game is a row of struct-of-arrays state (``G`` games,
``N`` players):

==============  ====================  ===============================================
array           shape, dtype          meaning
==============  ====================  ===============================================
``es``          ``[G] uint64``        the game's random stream (splitmix64 counter)
``ps``          ``[G] uint64``        the stream of the native agents seated in it
``disp``        ``[G, N, 7] int64``   each display, cards per face index
``row``         ``[G] int64``         the llama row as a bit set (bit ``f`` = face ``f``)
``tot``         ``[G, N] int64``      chip totals
``rstart``      ``[G, N] int64``      the totals when the round began (``points`` rewards)
``quit_``       ``[G, N] bool``       who has quit this round
``active``      ``[G] int64``         players who have not quit
``cur``         ``[G] int64``         whose decision it is
``start``       ``[G] int64``         the round's start player
``phase``       ``[G] int64``         0 roll-or-quit, 1 discard, 2 take
``dice``        ``[G, 3] int64``      the pending roll (discard or take decision)
``lim``         ``[G, 7] int64``      the pending roll's discard limits per face
``nround``      ``[G] int64``         the round's index in the game
``hands``       ``[G, N, 6] int8``    the round's deal, in deal order
``stats``       ``[G, 4, N] int64``   per seat over the game: round points, busts,
                                      quits, rounds gone out
``log``...      ``[G, cap] int32``    trajectory logs (``record=True``), in the
                                      format of :mod:`lama_env.batched`
==============  ====================  ===============================================

:func:`apply_kernel` applies one action in each of a list of games (the
rules, the round ends, the episode ends); :func:`decisions_kernel` writes the
decision each game now asks (observation of the player to act, action mask).
:func:`step_kernel` (the vector game's step) does both for every game, into
one of the vector game's two output buffers; :func:`play_kernel` (the
Gymnasium vector env's, :mod:`lama_env.vector_env`) applies the learners'
actions and then plays the native agents' seats in waves (one
:func:`apply_kernel` call for all the games that move), with the decisions
of :mod:`lama_env.batched` (:func:`~lama_env.batched.native_turn`,
``native_discard``, ``native_take``), until each game waits on its learner,
on a Python agent, or has ended its episode.  :func:`check_kernel` finds the
first illegal action before anything is changed; :func:`reset_kernel` starts
games; :func:`encode_kernel` encodes the current states from any seats;
:func:`stats_kernel` sums up an episode for the learner.  (A kernel loops over
games inside: a call per game of a function with this many array arguments
would cost more than the game's step.)

The turn flow is that of :class:`lama_env.engine.LamaGame` and the kernel of
:mod:`lama_env.batched` (whose random stream helpers and log format it shares),
written once more as a step function: the batched kernel plays whole games of
native policies in one loop, this one stops at every decision.  The
observation is :func:`lama_env.observation.encode`'s layout, every entry
computed by the same expressions (or read from tables the Python side
computes with them) and rounded to float32 once, so the two are bit-equal;
``tests/test_vector.py`` checks all of it against the scalar engine.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from .batched import (
    _ALL_QUIT,
    _BUST,
    _GOLDEN,
    _POLICY_SALT,
    _ROW_EMPTY,
    _WENT_OUT,
    LOG_END,
    LOG_QUIT,
    LOG_ROLL,
    LOG_ROUND,
    OUT_BUST,
    OUT_DISCARD,
    OUT_TAKE,
    OUT_TRIPLE,
    _below,
    _chip,
    _mix,
    native_discard,
    native_take,
    native_turn,
)

#: Phases of a game in the kernel (the engine's Phase.TURN, DISCARD, TAKE; the round-over
#: phases never last: the kernel scores the round and deals the next one in the same step).
TURN, DISCARD, TAKE = 0, 1, 2
#: The "no decision" column of the observation's ``decision`` block (round or game over).
DECISION_NONE = 3
_U64 = np.uint64


@njit(cache=True)
def seed_mix(seed):
    """The mixed base seed of the streams (``seed``: a 64-bit seed), as the batched kernel mixes it."""
    return _mix(seed + _GOLDEN)


@njit(cache=True)
def stream_state(seed_mix, g):
    """The start of game slot ``g``'s random stream (``seed_mix``: the mixed base seed)."""
    return _mix(seed_mix ^ _mix(_U64(g) * _GOLDEN + _GOLDEN))


@njit(cache=True)
def encode_kernel(out, n, g, seat, disp, tot, quit_, to_act, start, row, decision, dice, show_dice, active,
                  thr, must, also_match, t_disp, t_pts, t_pnm, t_score, t_third):
    """Write game ``g``'s observation seen from ``seat`` into ``out`` (one row, float32).

    ``to_act`` is -1 and ``decision`` :data:`DECISION_NONE` for a finished
    round; the dice are shown when ``show_dice``.  Tables (float32 unless
    said): ``t_disp[f, c]`` a display count's entry, ``t_pts[mask]`` round
    points / 31, ``t_pnm[mask]`` p_no_match, ``t_score[mask]`` (int) the
    points of a display holding the faces of ``mask``, ``t_third[k]`` k / 3.
    """
    for k in range(n):
        p = seat + k
        if p >= n:
            p -= n
        m = 0
        for f in range(7):
            c = disp[g, p, f]
            out[7 * k + f] = t_disp[f, c]
            if c > 0:
                m |= 1 << f
        out[7 * n + k] = 1.0 if quit_[g, p] else 0.0
        out[8 * n + k] = 1.0 if p == to_act else 0.0
        out[9 * n + k] = 1.0 if p == start else 0.0
        t = tot[g, p]
        out[10 * n + k] = t / thr if t < thr else 1.0
        if t >= thr:
            out[11 * n + k] = 0.0
        elif thr - t < 31:
            out[11 * n + k] = (thr - t) / 31
        else:
            out[11 * n + k] = 1.0
        out[12 * n + k] = t_pts[m]
        out[13 * n + k] = 1.0 if t + t_score[m] >= thr else 0.0
        out[14 * n + k] = t_pnm[m]
    b = 15 * n
    for f in range(7):
        out[b + f] = 1.0 if (row >> f) & 1 else 0.0
    for j in range(4):
        out[b + 7 + j] = 1.0 if j == decision else 0.0
    for f in range(7):
        out[b + 11 + f] = 0.0
    if show_dice:
        c0 = 0
        c1 = 0
        c2 = 0
        for j in range(3):  # count each face once, like encode's dice block
            if dice[g, j] == dice[g, 0]:
                c0 += 1
            if dice[g, j] == dice[g, 1]:
                c1 += 1
            if dice[g, j] == dice[g, 2]:
                c2 += 1
        out[b + 11 + dice[g, 0]] = t_third[c0]
        out[b + 11 + dice[g, 1]] = t_third[c1]
        out[b + 11 + dice[g, 2]] = t_third[c2]
    out[b + 18] = 1.0 if active == 1 else 0.0
    out[b + 19] = active / n
    out[b + 20] = 1.0 if must else 0.0
    out[b + 21] = 1.0 if also_match else 0.0


@njit(cache=True)
def write_mask(mrow, phase, lim_g, dice_g, row, must, dact):
    """Write the legal actions of a decision into ``mrow`` (one bool row of 129)."""
    for i in range(mrow.shape[0]):
        mrow[i] = False
    if phase == TURN:
        mrow[0] = True
        mrow[1] = True
    elif phase == TAKE:
        for j in range(3):
            f = dice_g[j]
            if (row >> f) & 1:
                mrow[2 + f] = True
    else:
        nopt = 1
        for f in range(7):
            nopt *= lim_g[f] + 1
        for k in range(1 if must else 0, nopt):
            kk = k
            key = 0
            for f in range(7):
                r = lim_g[f] + 1
                key |= (kk % r) << (2 * f)
                kk //= r
            mrow[dact[key]] = True


@njit(cache=True)
def check_kernel(actions, phase, dice, lim, row, must, disc):
    """The index of the first game whose action is illegal, or -1 (nothing is changed)."""
    for g in range(actions.shape[0]):
        a = actions[g]
        ph = phase[g]
        if ph == TURN:
            if a == 0 or a == 1:
                continue
        elif ph == TAKE:
            if 2 <= a <= 8:
                f = a - 2
                if (row[g] >> f) & 1 and (dice[g, 0] == f or dice[g, 1] == f or dice[g, 2] == f):
                    continue
        elif 9 <= a <= 128:
            ok = True
            size = 0
            for f in range(7):
                c = disc[a - 9, f]
                size += c
                if c > lim[g, f]:
                    ok = False
            if ok and (size > 0 or not must):
                continue
        return g
    return -1


@njit(cache=True)
def deal(g, n, es, disp, quit_, hands, deck, deck0, log, logpos, logging, start):
    """Deal game ``g``'s round (a partial Fisher-Yates shuffle of the deck, as the batched kernel)."""
    ncards = 6 * n
    for i in range(36):
        deck[i] = deck0[i]
    s = es[g]
    for i in range(ncards):
        s, j = _below(s, 36 - i)
        j += i
        c = deck[i]
        deck[i] = deck[j]
        deck[j] = c
    es[g] = s
    for p in range(n):
        quit_[g, p] = False
        for f in range(7):
            disp[g, p, f] = 0
        for k in range(6):
            c = deck[6 * p + k]
            disp[g, p, c] += 1
            hands[g, p, k] = c
    if logging:
        pos = logpos[g]
        log[g, pos] = LOG_ROUND
        log[g, pos + 1] = start
        for i in range(ncards):
            log[g, pos + 2 + i] = deck[i]
        logpos[g] = pos + 2 + ncards


@njit(cache=True)
def _begin_round(g, n, start_player, es, disp, quit_, hands, deck, deck0, log, logpos, logging,
                 row, active, cur, start, phase, tot, rstart):
    start[g] = start_player
    deal(g, n, es, disp, quit_, hands, deck, deck0, log, logpos, logging, start_player)
    row[g] = 127
    active[g] = n
    cur[g] = start_player
    phase[g] = TURN
    for p in range(n):
        rstart[g, p] = tot[g, p]


@njit(cache=True)
def reset_kernel(n, sel, reseed, seed_mix, es, ps, disp, row, tot, rstart, quit_, active, cur, start, phase, dice,
                 nround, hands, stats, log, logpos, pend, logging,
                 obs, mask, player, thr, must, also_match, dact, deck0,
                 t_disp, t_pts, t_pnm, t_score, t_third):
    """Start a new game in every slot ``g`` with ``sel[g]`` (new streams from ``seed_mix`` when ``reseed``)."""
    deck = np.empty(36, np.int64)
    for g in range(es.shape[0]):
        if not sel[g]:
            continue
        if reseed:
            es[g] = stream_state(seed_mix, g)
            ps[g] = _mix(es[g] ^ _POLICY_SALT)
        for p in range(n):
            tot[g, p] = 0
            for k in range(4):
                stats[g, k, p] = 0
        nround[g] = 0
        logpos[g] = 0
        pend[g] = -1
        _begin_round(g, n, 0, es, disp, quit_, hands, deck, deck0, log, logpos, logging,
                     row, active, cur, start, phase, tot, rstart)
        player[g] = 0
        encode_kernel(obs[g], n, g, 0, disp, tot, quit_, 0, 0, row[g], TURN, dice, False, n,
                      thr, must, also_match, t_disp, t_pts, t_pnm, t_score, t_third)
        write_mask(mask[g], TURN, dice[g], dice[g], row[g], must, dact)


@njit(cache=True)
def apply_kernel(idx, count, actions, n, es, disp, row, tot, rstart, quit_, active, cur, start, phase, dice, lim,  # noqa: C901 (kernel: rewritten in the one-kernel change)
                 nround, hands, stats, log, logpos, pend, done_len, logging,
                 rew, term, trunc, round_end, final_obs, rolled, fin, fin_rounds, fseat,
                 thr, must, also_match, points, win, episode_round, max_rounds, dice_faces, disc, deck0,
                 t_disp, t_pts, t_pnm, t_score, t_third):
    """Apply ``actions[g]`` (legal; none if negative) of the player to act in each game ``g = idx[j]``, ``j < count``.

    ``rew[g]`` gets what each seat got from the action (zeros unless it ends
    a round).  A round that ends is scored at once; the next one is dealt
    (start player rotating), or, when the episode is over (terminated: the
    game is over, or ``episode_round``; truncated: ``max_rounds > 0`` rounds
    played), ``term[g]`` or ``trunc[g]`` is set, the ended game is written to
    ``final_obs[g]`` seen from ``fseat[g]`` (the last actor where negative),
    its totals and per-seat statistics to ``fin[g]`` (totals, round points,
    busts, quits, went out) and its rounds to ``fin_rounds[g]``, and a new game
    is dealt in the slot.  ``round_end[g]`` is set when a round ends, ``rolled[g]``
    gets the dice of a roll; no flag is cleared here.  ``stats[g, k, p]``
    (round points, busts, quits, went out) counts over the game in progress.
    (One call for many games: a call per game would cost more than the game's step.)
    """
    deck = np.empty(36, np.int64)
    for j in range(count):
        g = idx[j]
        a = actions[g]
        if a < 0:  # no action for this game
            continue
        p = cur[g]
        ph = phase[g]
        for q in range(n):
            rew[g, q] = 0.0
        ended = -1
        wo = -1
        advance = False
        if ph == TURN:
            if a == 1:  # quit
                if logging:
                    pos = logpos[g]
                    log[g, pos] = LOG_QUIT
                    log[g, pos + 1] = p
                    logpos[g] = pos + 2
                quit_[g, p] = True
                stats[g, 2, p] += 1
                active[g] -= 1
                if active[g] == 0:
                    ended = _ALL_QUIT
                else:
                    advance = True
            else:  # roll
                s, r = _below(es[g], 216)
                es[g] = s
                f0 = dice_faces[0, r // 36]
                f1 = dice_faces[1, (r // 6) % 6]
                f2 = dice_faces[2, r % 6]
                rolled[g, 0] = f0
                rolled[g, 1] = f1
                rolled[g, 2] = f2
                dice[g, 0] = f0
                dice[g, 1] = f1
                dice[g, 2] = f2
                pos = logpos[g]
                if logging:
                    pend[g] = pos
                    log[g, pos] = LOG_ROLL
                    log[g, pos + 1] = p
                    log[g, pos + 2] = f0
                    log[g, pos + 3] = f1
                    log[g, pos + 4] = f2
                    log[g, pos + 5] = OUT_TRIPLE
                    log[g, pos + 6] = 0
                    logpos[g] = pos + 7
                triple = f0 == 0 and f1 == 0 and f2 == 0
                if triple:
                    tot[g, p] = _chip(tot[g, p])
                if triple and not also_match:
                    advance = True
                else:
                    for f in range(7):
                        lim[g, f] = 0
                    matched = False
                    if disp[g, p, f0] > lim[g, f0]:
                        lim[g, f0] += 1
                        matched = True
                    if disp[g, p, f1] > lim[g, f1]:
                        lim[g, f1] += 1
                        matched = True
                    if disp[g, p, f2] > lim[g, f2]:
                        lim[g, f2] += 1
                        matched = True
                    if matched:
                        phase[g] = DISCARD
                        if logging:
                            log[g, pos + 5] = OUT_DISCARD
                    else:
                        shown = ((1 << f0) | (1 << f1) | (1 << f2)) & row[g]
                        if active[g] > 1 and shown != 0:
                            phase[g] = TAKE
                            if logging:
                                log[g, pos + 5] = OUT_TAKE
                        else:  # bust: the whole row joins the display
                            for f in range(7):
                                if (row[g] >> f) & 1:
                                    disp[g, p, f] += 1
                            row[g] = 0
                            stats[g, 1, p] += 1
                            if logging:
                                log[g, pos + 5] = OUT_BUST
                            ended = _BUST
        elif ph == DISCARD:
            left = 0
            packed = 0
            for f in range(7):
                c = disc[a - 9, f]
                disp[g, p, f] -= c
                left += disp[g, p, f]
                packed += c << (2 * f)
            if logging:
                log[g, pend[g] + 6] = packed
            if left == 0:
                ended = _WENT_OUT
                wo = p
            else:
                advance = True
        else:  # take
            f = a - 2
            row[g] &= ~(1 << f)
            disp[g, p, f] += 1
            if logging:
                log[g, pend[g] + 6] = f
            if row[g] == 0:
                ended = _ROW_EMPTY
            else:
                advance = True
        if advance:
            q = p
            for _ in range(n):
                q = q + 1 if q + 1 < n else 0
                if not quit_[g, q]:
                    break
            cur[g] = q
            phase[g] = TURN
        elif ended >= 0:
            # ---- the round is over: score it, then the next round or a new game
            round_end[g] = True
            hi = 0
            for q in range(n):
                m = 0
                for f in range(7):
                    if disp[g, q, f] > 0:
                        m |= 1 << f
                tot[g, q] += t_score[m]
                stats[g, 0, q] += t_score[m]
            if wo >= 0:
                tot[g, wo] = _chip(tot[g, wo])
                stats[g, 3, wo] += 1
            if logging:
                pos = logpos[g]
                log[g, pos] = LOG_END
                log[g, pos + 1] = ended
                log[g, pos + 2] = wo
                for q in range(n):
                    m = 0
                    for f in range(7):
                        if disp[g, q, f] > 0:
                            m |= 1 << f
                    log[g, pos + 3 + q] = t_score[m]
                    log[g, pos + 3 + n + q] = tot[g, q]
                logpos[g] = pos + 3 + 2 * n
            for q in range(n):
                if tot[g, q] > hi:
                    hi = tot[g, q]
                if points:
                    rew[g, q] = -(tot[g, q] - rstart[g, q])
            done = False
            if hi >= thr or episode_round:
                done = True
                term[g] = True
                if win:
                    low = tot[g, 0]
                    for q in range(n):
                        if tot[g, q] < low:
                            low = tot[g, q]
                    k = 0
                    for q in range(n):
                        if tot[g, q] == low:
                            k += 1
                    if k < n:
                        for q in range(n):
                            rew[g, q] = 1.0 / k if tot[g, q] == low else -1.0 / (n - k)
            elif max_rounds > 0 and nround[g] + 1 >= max_rounds:
                done = True
                trunc[g] = True
            if done:
                fs = fseat[g] if fseat[g] >= 0 else p
                encode_kernel(final_obs[g], n, g, fs, disp, tot, quit_, -1, start[g], row[g], DECISION_NONE,
                              dice, False, active[g], thr, must, also_match, t_disp, t_pts, t_pnm, t_score, t_third)
                fin_rounds[g] = nround[g] + 1
                for q in range(n):
                    fin[g, 0, q] = tot[g, q]
                    for k in range(4):
                        fin[g, 1 + k, q] = stats[g, k, q]
                        stats[g, k, q] = 0
                    tot[g, q] = 0
                if logging:
                    done_len[g] = logpos[g]
                    pend[g] = -1
                nround[g] = 0
                first = 0
            else:
                nround[g] += 1
                first = start[g] + 1 if start[g] + 1 < n else 0
            _begin_round(g, n, first, es, disp, quit_, hands, deck, deck0, log, logpos, logging,
                         row, active, cur, start, phase, tot, rstart)


@njit(cache=True)
def decisions_kernel(idx, count, n, disp, row, tot, quit_, active, cur, start, phase, dice, lim, obs, mask, player,
                     thr, must, also_match, dact, t_disp, t_pts, t_pnm, t_score, t_third):
    """Write each game ``g = idx[j]``'s decision now asked: the observation of the player to act, the mask, who."""
    for j in range(count):
        g = idx[j]
        c = cur[g]
        player[g] = c
        ph = phase[g]
        encode_kernel(obs[g], n, g, c, disp, tot, quit_, c, start[g], row[g], ph, dice, ph != TURN, active[g],
                      thr, must, also_match, t_disp, t_pts, t_pnm, t_score, t_third)
        write_mask(mask[g], ph, lim[g], dice[g], row[g], must, dact)


@njit(cache=True)
def step_kernel(actions, idx, n, es, disp, row, tot, rstart, quit_, active, cur, start, phase, dice, lim, nround,
                hands, stats, log, logpos, pend, done_len, logging,
                obs, mask, player, rew, term, trunc, round_end, final_obs, rolled, fin, fin_rounds, fseat,
                thr, must, also_match, points, win, episode_round, max_rounds, dice_faces, disc, dact, deck0,
                t_disp, t_pts, t_pnm, t_score, t_third):
    """Apply ``actions[g]`` (legal: :func:`check_kernel`) in every game ``g``; return the longest log.

    :func:`apply_kernel` on every game (``idx``: ``0..G-1``), then the
    decisions now asked (:func:`decisions_kernel`).  The outputs ``obs``,
    ``mask``, ``player``, ``rew``, ``term``, ``trunc``, ``round_end``,
    ``final_obs``, ``rolled``, ``fin`` and ``fin_rounds`` belong to one output
    buffer; ``final_obs`` rows are cleared where that buffer last held an ended game.
    """
    games = actions.shape[0]
    nobs = obs.shape[1]
    for g in range(games):
        if term[g] or trunc[g]:
            for i in range(nobs):
                final_obs[g, i] = 0.0
        term[g] = False
        trunc[g] = False
        round_end[g] = False
        rolled[g, 0] = -1
        rolled[g, 1] = -1
        rolled[g, 2] = -1
    apply_kernel(idx, games, actions, n, es, disp, row, tot, rstart, quit_, active, cur, start, phase, dice, lim,
                 nround, hands, stats, log, logpos, pend, done_len, logging,
                 rew, term, trunc, round_end, final_obs, rolled, fin, fin_rounds, fseat,
                 thr, must, also_match, points, win, episode_round, max_rounds, dice_faces, disc, deck0,
                 t_disp, t_pts, t_pnm, t_score, t_third)
    decisions_kernel(idx, games, n, disp, row, tot, quit_, active, cur, start, phase, dice, lim, obs, mask, player,
                     thr, must, also_match, dact, t_disp, t_pts, t_pnm, t_score, t_third)
    longest = 0
    for g in range(games):
        if logpos[g] > longest:
            longest = logpos[g]
    return longest


# ------------------------------------------------------------------ the environments' kernel
#: :func:`play_kernel`'s status of a game: waiting on the learner, waiting on a Python
#: opponent (the observation written is that opponent's), its episode ended (the slot holds
#: a new game, not yet played), or paused because its log is full (grow it, call again).
WAIT_LEARNER, WAIT_OPPONENT, ENDED, PAUSED = 0, 1, 2, 3


@njit(cache=True, inline="always")
def native_action(kind, k, quit_table, take_rank, g, p, disp, row, phase, dice, lim, must, ps, cnt, dact):
    """The action of native agent ``k`` (of ``kind``) for player ``p`` to act in game ``g`` (draws from ``ps[g]``).

    The decisions are :mod:`lama_env.batched`'s (:func:`~lama_env.batched.native_turn`,
    ``native_discard``, ``native_take``), turned into action numbers.
    """
    m = 0
    for f in range(7):
        if disp[g, p, f] > 0:
            m |= 1 << f
    ph = phase[g]
    if ph == TURN:
        s, q = native_turn(kind, quit_table, k, m, ps[g])
        ps[g] = s
        return 1 if q else 0
    if ph == DISCARD:
        ps[g] = native_discard(kind, lim[g], must, cnt, ps[g])
        key = 0
        for f in range(7):
            key |= cnt[f] << (2 * f)
        return dact[key]
    shown = ((1 << dice[g, 0]) | (1 << dice[g, 1]) | (1 << dice[g, 2])) & row[g]
    s, face = native_take(kind, take_rank, k, m, shown, ps[g])
    ps[g] = s
    return 2 + face


@njit(cache=True, inline="always")
def forced_action(g, phase, dice, lim, row, must, dact):
    """The only legal action of game ``g``'s decision, or -1 when there is a choice (a turn always has one)."""
    ph = phase[g]
    if ph == TAKE:
        shown = ((1 << dice[g, 0]) | (1 << dice[g, 1]) | (1 << dice[g, 2])) & row[g]
        if shown & (shown - 1) != 0:
            return -1
        for f in range(7):
            if (shown >> f) & 1:
                return 2 + f
        return -1
    if ph == DISCARD:
        nopt = 1
        key = 0
        for f in range(7):
            nopt *= lim[g, f] + 1
            key |= lim[g, f] << (2 * f)
        if nopt - (1 if must else 0) == 1:
            return dact[key]  # must discard, one matched card: discard it
    return -1


@njit(cache=True)
def play_kernel(actions, sel, learner, seat_agent, kinds, quit_table, take_rank, auto_forced, room, status, lrew,
                n, es, ps, disp, row, tot, rstart, quit_, active, cur, start, phase, dice, lim, nround, hands,
                stats, log, logpos, pend, done_len, logging,
                obs, mask, player, rew, term, trunc, round_end, final_obs, rolled, fin, fin_rounds,
                thr, must, also_match, points, win, episode_round, max_rounds, dice_faces, disc, dact, deck0,
                t_disp, t_pts, t_pnm, t_score, t_third):
    """Play every game ``g`` with ``sel[g]`` until it waits on its learner seat ``learner[g]``; return the longest log.

    ``actions[g] >= 0`` is applied first (the learner's action, or a Python
    opponent's); then the seats of native agents (``kinds[seat_agent[g, p]]
    >= 0``, their tables ``quit_table`` and ``take_rank``) play in the
    kernel, and the learner's forced decisions too when ``auto_forced``, until
    the learner's decision (``status[g] = WAIT_LEARNER``), a seat of a Python
    agent (``kinds < 0``: ``WAIT_OPPONENT``), the episode's end (``ENDED``:
    ``term``/``trunc`` set, the final observation seen from the learner, a new
    game dealt and not played yet) or a log with less than ``room`` entries left
    (``PAUSED``, before any decision).  ``term``, ``trunc`` and ``round_end``
    of the selected games are cleared first; ``lrew[g]`` adds the learner's
    rewards.  The observation, mask and player written (all but ``ENDED``) are
    those of the player to act.  The games move in waves, one
    :func:`apply_kernel` call for every game with an action.
    """
    games = sel.shape[0]
    cnt = np.zeros(7, np.int64)
    act = np.full(games, -1, np.int64)
    live = np.empty(games, np.int64)  # the games that play the next wave
    count = 0
    for g in range(games):
        if sel[g]:
            term[g] = False
            trunc[g] = False
            round_end[g] = False
            act[g] = actions[g]
            live[count] = g
            count += 1
    done = np.empty(games, np.int64)  # the games that stopped
    ndone = 0
    cap = log.shape[1]
    while count > 0:
        apply_kernel(live, count, act, n, es, disp, row, tot, rstart, quit_, active, cur, start, phase, dice, lim,
                     nround, hands, stats, log, logpos, pend, done_len, logging,
                     rew, term, trunc, round_end, final_obs, rolled, fin, fin_rounds, learner,
                     thr, must, also_match, points, win, episode_round, max_rounds, dice_faces, disc, deck0,
                     t_disp, t_pts, t_pnm, t_score, t_third)
        nxt = 0
        for j in range(count):
            g = live[j]
            me = learner[g]
            if act[g] >= 0:
                lrew[g] += rew[g, me]
                if term[g] or trunc[g]:
                    status[g] = ENDED
                    act[g] = -1
                    continue
            a = -1
            st = WAIT_LEARNER
            p = cur[g]
            if logging and logpos[g] + room > cap:
                st = PAUSED  # before any decision: the call after the log's growth takes it
            elif p == me:
                if auto_forced:
                    a = forced_action(g, phase, dice, lim, row, must, dact)
            else:
                k = seat_agent[g, p]
                if kinds[k] < 0:
                    st = WAIT_OPPONENT
                else:
                    a = native_action(kinds[k], k, quit_table, take_rank, g, p, disp, row, phase, dice, lim, must,
                                      ps, cnt, dact)
            act[g] = a
            if a >= 0:
                live[nxt] = g
                nxt += 1
            else:
                status[g] = st
                done[ndone] = g
                ndone += 1
        count = nxt
    decisions_kernel(done, ndone, n, disp, row, tot, quit_, active, cur, start, phase, dice, lim, obs, mask, player,
                     thr, must, also_match, dact, t_disp, t_pts, t_pnm, t_score, t_third)
    longest = 0
    for g in range(games):
        if logpos[g] > longest:
            longest = logpos[g]
    return longest


@njit(cache=True)
def stats_kernel(rows, learner, fin, rounds, illegal, fst, ist):
    """The learner's episode statistics of the games ``rows`` (``fin``, ``rounds``: as :func:`apply_kernel` writes).

    ``fst[0, g]`` win (1, ``1/k`` in a ``k``-way tie for the fewest points, 0; 0 where
    ``illegal[g]``), ``fst[1, g]`` points per round; ``ist[:, g]``: rounds, final points,
    busts, quits, went out, illegal (the ``episode_stats`` of :mod:`lama_env.gym_env`).
    """
    n = fin.shape[2]
    for j in range(rows.shape[0]):
        g = rows[j]
        me = learner[g]
        low = fin[g, 0, 0]
        for q in range(n):
            if fin[g, 0, q] < low:
                low = fin[g, 0, q]
        k = 0
        for q in range(n):
            if fin[g, 0, q] == low:
                k += 1
        fst[0, g] = 1.0 / k if fin[g, 0, me] == low and not illegal[g] else 0.0
        r = rounds[g]
        fst[1, g] = fin[g, 1, me] / r if r > 0 else 0.0
        ist[0, g] = r
        ist[1, g] = fin[g, 0, me]
        ist[2, g] = fin[g, 2, me]
        ist[3, g] = fin[g, 3, me]
        ist[4, g] = fin[g, 4, me]
        ist[5, g] = 1 if illegal[g] else 0


@njit(cache=True)
def observe_kernel(out, seats, n, disp, row, tot, quit_, active, cur, start, phase, dice,
                   thr, must, also_match, t_disp, t_pts, t_pnm, t_score, t_third):
    """Write every game's current observation seen from ``seats[g]`` into ``out``."""
    for g in range(out.shape[0]):
        ph = phase[g]
        encode_kernel(out[g], n, g, seats[g], disp, tot, quit_, cur[g], start[g], row[g], ph, dice, ph != TURN,
                      active[g], thr, must, also_match, t_disp, t_pts, t_pnm, t_score, t_third)
