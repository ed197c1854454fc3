"""Who sits where: the seating of an evaluation and the schedule of a league.

A seating is an ``int64[G, N]`` array: game ``g`` seats agent ``seating[g, s]``
(an index into the list of agents) at seat ``s``.  Every backend plays a
seating (:mod:`lama_dice.evaluation.backends`).
"""

from __future__ import annotations

import itertools

import numpy as np

__all__ = ["league_seating", "rotation_seating"]

#: SeedSequence spawn key of the random lineups of a league of more than two players
#: (the other streams: games 0 and policies 1 in :mod:`.scalar`, saved sample 2 in :mod:`.saving`).
KEY_LINEUPS = 3


def rotation_seating(num_players: int, games: int) -> np.ndarray:
    """Seating for ``games`` games of ``num_players`` agents (agent ``a`` = index ``a``).

    Game ``i = b * N + r`` seats the ``b``-th cyclic order (cycling through the
    ``(N-1)!`` orders that start with agent 0) rotated by ``r``: seat ``s``
    gets ``order[(s + r) % N]``.  Each block of ``N`` games puts every agent in
    every seat once; a final partial block leaves the seat counts within one
    of each other.

    Returns:
        ``int64[games, num_players]``.
    """
    n = num_players
    orders = np.array([(0, *p) for p in itertools.permutations(range(1, n))], dtype=np.int64).reshape(-1, n)
    i = np.arange(games)
    block, r = np.divmod(i, n)
    cols = (np.arange(n)[None, :] + r[:, None]) % n
    return orders[block % len(orders)][np.arange(games)[:, None], cols]


def league_seating(num_agents: int, num_players: int, games: int, seed: int) -> np.ndarray:
    """The league schedule as ``int64[G, num_players]`` agent indices (see :mod:`lama_dice.evaluation.league`).

    For two players ``G = games * num_agents * (num_agents - 1) / 2``; otherwise ``G = games``.
    """
    if num_players == 2:
        # interleaved: round j plays every pair once (so ratings evolve evenly), seats alternating with j
        pairs = np.array(list(itertools.combinations(range(num_agents), 2)), dtype=np.int64)
        rounds = [pairs if j % 2 == 0 else pairs[:, ::-1] for j in range(games)]
        return np.ascontiguousarray(np.concatenate(rounds))
    n = num_players
    rng = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(KEY_LINEUPS,)))
    blocks = -(-games // n)
    out = np.empty((blocks * n, n), dtype=np.int64)
    rot = (np.arange(n)[None, :] + np.arange(n)[:, None]) % n
    for b in range(blocks):
        lineup = rng.choice(num_agents, size=n, replace=False)
        out[b * n:(b + 1) * n] = lineup[rot]
    return out[:games]
