"""``search:NET,rollouts=R``: Monte-Carlo rollouts of the policy network, on common random numbers.

Spec: ``search:NET,rollouts=R[,rounds=U][,top=K][,playout=greedy|sample][,z=Z][,value=V][,seed=S]``

At each decision with more than one legal action, each candidate (the policy network's
``top`` most likely actions; ``0``: all) is played out ``R`` times: the action, then every
seat follows the policy network ``NET`` (its most likely action, ``playout=greedy``, or a
sample of its distribution, ``playout=sample``) to the end of the game or of the ``rounds``-th
round counted from the current one (``rounds=1``: the end of this round); a finished game
scores the acting seat's share of the win, a cut one the value network's chance to win for
it, from the first decision of the next round (as Tesauro's rollouts of TD-Gammon).  The
candidate with the best mean is played.

Common random numbers: the ``i``-th rollout of every candidate plays on the same luck, so
that the paired differences have a far smaller variance than the means: its deals come from
the same stream, and each seat's ``k``-th roll of the ``j``-th round from its start is the
same roll (a table drawn per rollout, by round, seat and roll: a quit that moves the others'
rolls earlier does not shift everyone's dice), as are the ``playout=sample`` choices.
``z`` (0): the search plays another choice than the network's most likely one only if its
mean beats that choice's by more than ``z`` standard errors of the paired differences.

Every rollout of every game asked at once (:meth:`RolloutPolicy.search_many`, what
``evaluate``'s lockstep chunks call through ``act_batch``) is stepped in lockstep: one forward
pass of the policy network per step for all of them, one of the value network for all the
cut ones.  Given its seed the agent is deterministic.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from lama_env import actions as A
from lama_env.engine import LamaGame, Phase

from .base import Policy
from .registry import register
from .search import USAGE, SearchPolicy, _final_shares, parse_options

#: How the rollouts' seats choose: the network's most likely action, or a sample of its distribution.
PLAYOUTS = ("greedy", "sample")
#: Uniform draws kept per rollout for ``playout=sample`` (a longer rollout draws on from its stream).
_DRAWS = 256
#: The rounds and the rolls per seat and round that the common dice tables cover (beyond: the rollout's stream).
_TABLE_ROUNDS, _TABLE_ROLLS = 4, 48


class RolloutPolicy(SearchPolicy):
    """Rollouts of the policy network from each candidate action, on common random numbers (module docstring)."""

    def __init__(
        self,
        net: str,
        rollouts: int = 16,
        rounds: int = 1,
        top: int = 3,
        playout: str = "greedy",
        z: float = 0.0,
        value: str | None = None,
        seed: int | None = None,
    ) -> None:
        """Load the policy and value networks (see the module docstring for the options)."""
        super().__init__(net, top=top, value=value, seed=seed)
        self.rollouts, self.rounds, self.playout, self.z = rollouts, rounds, playout, z
        self.steps_played = 0  #: rollout steps played so far (the search's cost)

    def search_many(self, games: Sequence[LamaGame]) -> list[tuple[int, dict[int, np.ndarray]]]:
        """The chosen action and each candidate's mean score for the acting seat, for every game.

        (The values are ``[mean, standard error of the paired difference with the network's choice]``.)
        """
        if not games:
            return []
        for game in games:
            if game.num_players != self.num_players:
                self.prior.check_compatible(game.num_players)
        r = self.rollouts
        seeds = self.rng.integers(2**63, size=(len(games), r))
        cands = self._orders(list(games))
        sims, owner, draws, tables = self._start(games, cands, seeds)
        first_round = np.array([games[gi].round_index for gi, _, _ in owner])
        rolls = np.zeros((len(sims), self.num_players), dtype=np.int64)  # each seat's rolls this round
        for k, (gi, ci, _) in enumerate(owner):
            self._step(sims[k], cands[gi][ci], tables[k], rolls[k], 0)
        score = np.zeros(len(sims))
        moves = np.zeros(len(sims), dtype=np.int64)
        active = list(range(len(sims)))
        while active:
            playing: list[int] = []
            cut: list[int] = []
            for k in active:
                c = sims[k]
                if c.game_over:
                    score[k] = _final_shares(c)[games[owner[k][0]].current_player]
                    continue
                if c.round_over:
                    c.next_round()
                    rolls[k] = 0
                if c.round_index - first_round[k] >= self.rounds:
                    cut.append(k)
                else:
                    playing.append(k)
            if cut:
                values = self.value_net.values([sims[k] for k in cut])
                for k, v in zip(cut, values, strict=True):
                    score[k] = v[games[owner[k][0]].current_player]
            if playing:
                chosen = self._choose([sims[k] for k in playing], [draws[k] for k in playing], moves[playing])
                for k, a in zip(playing, chosen, strict=True):
                    self._step(sims[k], a, tables[k], rolls[k], int(sims[k].round_index - first_round[k]))
                moves[playing] += 1
                self.steps_played += len(playing)
            active = playing
        return self._pick(cands, score)

    def _start(
        self, games: Sequence[LamaGame], cands: list[list[int]], seeds: np.ndarray
    ) -> tuple[list[LamaGame], list[tuple[int, int, int]], list[np.ndarray], list[np.ndarray]]:
        """The rollouts' games, (game, candidate, i), ``playout=sample`` draws and dice tables, before the candidate."""
        r = self.rollouts
        # the rollouts: (game, candidate, i); the i-th of every candidate of a game on the same stream
        n = self.num_players
        sims: list[LamaGame] = []
        owner: list[tuple[int, int, int]] = []
        draws: list[np.ndarray] = []
        tables: list[np.ndarray] = []
        for gi, (game, order) in enumerate(zip(games, cands, strict=True)):
            streams = [np.random.default_rng(int(s)) for s in seeds[gi]]
            faces = np.asarray(game.rules.dice_index)  # (3, 6): each die's face index per side
            dice = [faces[np.arange(3), st.integers(6, size=(_TABLE_ROUNDS, n, _TABLE_ROLLS, 3))] for st in streams]
            u = [st.random(_DRAWS) if self.playout == "sample" else np.zeros(0) for st in streams]
            for ci in range(len(order)):
                for i in range(r):
                    # manual rounds: a round's end is where the rolls per seat restart (the common dice tables' rounds),
                    # whatever the mode of the game searched
                    sims.append(game.clone(rng=np.random.default_rng(int(seeds[gi, i])), rounds="manual"))
                    owner.append((gi, ci, i))
                    draws.append(u[i])
                    tables.append(dice[i])
        return sims, owner, draws, tables

    def _pick(self, cands: list[list[int]], score: np.ndarray) -> list[tuple[int, dict[int, np.ndarray]]]:
        """Each game's choice from its rollouts' scores (the candidates in turn, ``rollouts`` each)."""
        r = self.rollouts
        results: list[tuple[int, dict[int, np.ndarray]]] = []
        s = score
        start = 0
        for order in cands:
            block = s[start : start + len(order) * r].reshape(len(order), r)
            start += len(order) * r
            means = block.mean(axis=1)
            diff = block - block[0]
            se = diff.std(axis=1, ddof=1) / np.sqrt(r) if r > 1 else np.zeros(len(order))
            best = int(np.argmax(means))  # the first of the best: the most likely under the prior
            if best and self.z > 0 and not means[best] - means[0] > self.z * se[best]:
                best = 0
            results.append((order[best], {a: np.array([means[j], se[j]]) for j, a in enumerate(order)}))
        return results

    def _choose(self, sims: list[LamaGame], draws: list[np.ndarray], moves: np.ndarray) -> list[int]:
        """The policy network's choice in every rollout of ``sims`` (one forward pass)."""
        legals = [c.legal_actions() for c in sims]
        forced = [len(legal) == 1 for legal in legals]
        ask = [k for k, f in enumerate(forced) if not f]
        chosen = [legal[0] for legal in legals]
        if ask:
            logits = self.prior._batch([sims[k] for k in ask], [legals[k] for k in ask])
            if self.playout == "greedy":
                picks = logits.argmax(axis=1)
            else:
                z = logits - logits.max(axis=1, keepdims=True)
                cum = np.exp(z).cumsum(axis=1)
                u = np.array([self._draw(draws[k], int(moves[k])) for k in ask])[:, None] * cum[:, -1:]
                picks = (cum > u).argmax(axis=1)
            for k, a in zip(ask, picks.tolist(), strict=True):
                chosen[k] = a
        return chosen

    @staticmethod
    def _step(c: LamaGame, action: int, table: np.ndarray, rolls: np.ndarray, j: int) -> None:
        """Play ``action`` in rollout ``c``: a roll is the ``rolls[seat]``-th of the seat in the table's round ``j``."""
        if action == A.ROLL and c.phase is Phase.TURN:
            p = c.current_player
            k = int(rolls[p])
            rolls[p] = k + 1
            if j < _TABLE_ROUNDS and k < _TABLE_ROLLS:
                c.step(action, dice=table[j, p, k].tolist())
                return
        c.step(action)

    @staticmethod
    def _draw(u: np.ndarray, move: int) -> float:
        """The rollout's uniform draw for its ``move``-th step (a fresh one, reproducible, past the kept ones)."""
        if move < len(u):
            return float(u[move])
        return float(np.random.default_rng([int(u[0] * 2**32), move]).random())


# The ``search:`` spec is registered here, in the module that knows both searches (the tree of
# :mod:`lama_dice.agents.search` and the rollouts), so that neither imports the other's caller.
def _make(arg: str | None) -> Policy:
    opts = parse_options(arg)
    if "rollouts" in opts:
        return RolloutPolicy(**opts)
    return SearchPolicy(**opts)


register("search", _make, USAGE,
         "expectimax over the next decisions and the exact dice, a value network at the leaves, "
         "the policy network NET ordering and pruning the choices (e.g. search:ppo:2p); with rollouts=R, "
         "R rollouts of NET from each choice on common dice (e.g. search:ppo:2p,rollouts=16)")

__all__ = ["PLAYOUTS", "RolloutPolicy"]
