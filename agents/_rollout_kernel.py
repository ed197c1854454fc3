"""The compiled rollouts of ``search:NET,rollouts=R`` (private: :class:`lama_dice.agents.rollout.RolloutPolicy`).

The rollouts of a batch of decisions are state records of the compiled engine
(:data:`lama_env.compiled.STATE_DTYPE`): rollout ``k`` starts as its game's record
(:func:`lama_env.snapshot.to_state`) on its own deal-and-dice stream (``es``: the
rollout's seed, the stream the Python rollouts give their copies as a
:class:`lama_env.streams.Streams`).  :func:`begin` plays each one's candidate action;
:func:`advance` is one lockstep step: it plays the network's choices (the legal action of
largest logit, the lowest among exact ties, as ``argmax`` of the masked logits), then every
rollout's forced moves until its next decision, whose observation it writes for the next
forward pass; :func:`encode_cut` writes the observations of the rollouts cut at a round's end
for the value network.  The caller runs the forward passes between the calls, with the very
networks the Python rollouts run (:meth:`lama_dice.agents.mlp.MLP.invariant`: compiled products
and NumPy activations, a row's outputs a function of that row alone, so that they are the same
bits in the two engines' batches).

Everything else is the compiled engine's own (:mod:`lama_env.compiled`): the step
(:func:`~lama_env.compiled.transition_roll`: a roll's dice from the rollout's common table while
it lasts, else from its stream), the deals (:func:`~lama_env.compiled.next_round`), the legal
actions (:func:`~lama_env.compiled.legal`), the win shares (:func:`~lama_env.compiled.win_result`)
and the vector game's encoder (:func:`~lama_env.compiled.encode`, bit-equal to
:func:`lama_env.observation.encode`).  So the compiled rollouts play the Python rollouts'
algorithm on the same random numbers (tests/test_search.py compares the two).
"""

from __future__ import annotations

from numba import njit

from lama_env import compiled as K
from lama_env.compiled import encode
from lama_env.constants import GAME_OVER, ROUND_OVER, TURN

#: A rollout's state: playing, ended (scored), cut at a round's end (to be valued by the value network).
PLAYING, ENDED, CUT = 0, 1, 2


@njit(cache=True, inline="always")
def _apply(gs, r, a, rolls, table, j):
    """Play ``a`` in rollout ``gs``; a roll is the ``rolls[seat]``-th of the seat in round ``j`` of ``table``."""
    x = -1
    if a == 0 and gs.phase == TURN:  # a roll: the common table's while it lasts, else the rollout's stream
        p = gs.cur
        k = rolls[p]
        rolls[p] = k + 1
        if j < table.shape[0] and k < table.shape[2]:
            x = table[j, p, k]
    return K.transition_roll(gs, r, a, x)


@njit(cache=True)
def _after(sims, k, code, r, rolls, first, rounds, me, status, score):
    """What a step that returned ``code`` leaves rollout ``k``: playing on, ended (its share scored) or cut."""
    gs = sims[k]
    if code == GAME_OVER:
        status[k] = ENDED
        score[k] = K.win_result(gs.tot, r.n, me[k])[0]
    elif code == ROUND_OVER:
        K.next_round(gs, r)
        for q in range(r.n):
            rolls[k, q] = 0
        if gs.nround - first[k] >= rounds:
            status[k] = CUT


@njit(cache=True)
def begin(sims, actions, r, rounds, tab, tables, rolls, first, me, status, score):
    """Play each rollout ``k``'s candidate ``actions[k]`` (``sims[k]``: its root's record on its own stream)."""
    for k in range(sims.shape[0]):
        gs = sims[k]
        first[k] = gs.nround
        me[k] = gs.cur
        code = _apply(gs, r, actions[k], rolls[k], tables[tab[k]], 0)
        _after(sims, k, code, r, rolls, first, rounds, me, status, score)


@njit(cache=True)
def advance(sims, r, rounds, tab, tables, rolls, first, me, status, score, idx, rows, logits, choose, x):
    """One lockstep step: the network's choices, then every rollout on to its next decision; returns its count.

    ``idx[:rows]``: the rollouts waiting on the network; with ``choose``, each plays the legal
    action of largest ``logits[t]`` (the lowest action among exact ties: ``argmax`` of the masked
    logits).  Every one still playing then plays its forced moves until a decision with more than
    one legal action (its observation written to ``x``, its index to ``idx``), the game's end or
    its cut.  Returns the steps played too.
    """
    steps = 0
    live = 0
    for t in range(rows):
        k = idx[t]
        gs = sims[k]
        if choose:
            z = logits[t]
            count = K.legal(gs, r, -1)[0]
            best = -1
            for i in range(count):
                a = K.legal(gs, r, i)[1]
                if best < 0 or z[a] > z[best] or (z[a] == z[best] and a < best):
                    best = a
            code = _apply(gs, r, best, rolls[k], tables[tab[k]], gs.nround - first[k])
            steps += 1
            _after(sims, k, code, r, rolls, first, rounds, me, status, score)
        while status[k] == PLAYING:
            count, a = K.legal(gs, r, 0)
            if count > 1:
                encode(x[live], gs, r, gs.cur, gs.cur, gs.phase, gs.phase != TURN)
                idx[live] = k
                live += 1
                break
            code = _apply(gs, r, a, rolls[k], tables[tab[k]], gs.nround - first[k])  # a forced move
            steps += 1
            _after(sims, k, code, r, rolls, first, rounds, me, status, score)
    return live, steps


@njit(cache=True)
def encode_cut(sims, r, status, x, idx):
    """The cut rollouts' observations (the first decision of the round they were cut at) and indices; their count."""
    rows = 0
    for k in range(sims.shape[0]):
        if status[k] == CUT:
            gs = sims[k]
            encode(x[rows], gs, r, gs.cur, gs.cur, gs.phase, False)
            idx[rows] = k
            rows += 1
    return rows
