"""``search:NET,rollouts=R``: Monte-Carlo rollouts of the policy network, on common random numbers.

Spec: ``search:NET,rollouts=R[,rounds=U][,top=K][,playout=greedy|sample][,z=Z][,value=V][,seed=S]
[,engine=compiled|python]``; ``search:NET`` with neither ``rollouts=R`` nor a tree option is this
search at the strongest settings measured, ``rollouts=128,rounds=1,z=1``
(:data:`lama_dice.agents.search.STRONGEST`).

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

Each rollout's deals, and its rolls beyond the common table, come from its own stream of the
compiled engine's scheme (a :class:`lama_env.streams.Streams` at the rollout's seed), so that
the rollouts run in compiled code (``engine=compiled``, the default:
:mod:`lama_dice.agents._rollout_kernel`, the engine's own step, deals and encoder on state
records, the same NumPy networks run between its lockstep steps) on the same random numbers
as in Python (``engine=python``: :class:`lama_env.engine.LamaGame` copies, the reference the
compiled rollouts are tested against).  The two give the same choices and the same scores,
bit for bit: the networks run through :meth:`lama_dice.agents.mlp.MLP.invariant`, which gives
a row the same outputs in any batch (the two batch the rollouts differently;
tests/test_search.py compares them).  The seeds of a decision's rollouts come from
:meth:`~lama_dice.agents.base.Policy.decision_integers` (keyed by the game and the decision in
a seeded evaluation), so the search plays the same whatever games are batched with it.  The Python rollouts are
played instead where the compiled ones do not apply: ``playout=sample`` (a rollout's draws
past its first 256 come from a generator seeded per move, which compiled code does not
reproduce), a policy network that is not a NumPy MLP (an in-memory SB3 policy, an RLlib
checkpoint), and a game with no state record (:func:`lama_env.snapshot.to_state`
refuses it: then the whole batch).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from lama_env import actions as A
from lama_env.engine import IllegalActionError, LamaGame, Phase
from lama_env.rules import RulesConfig
from lama_env.snapshot import to_state
from lama_env.streams import Streams

from .base import Policy
from .registry import register
from .search import USAGE, SearchPolicy, _final_shares, parse_options, search_kind

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
        engine: str = "compiled",
    ) -> None:
        """Load the policy and value networks (see the module docstring for the options)."""
        super().__init__(net, top=top, value=value, seed=seed)
        self.rollouts, self.rounds, self.playout, self.z = rollouts, rounds, playout, z
        self.engine = engine
        self.steps_played = 0  #: rollout steps played so far (the search's cost)
        #: whether the rollouts run in compiled code (else in Python: the module docstring says when)
        self.compiled = engine == "compiled" and playout == "greedy" and self.prior.mlp is not None
        self._rules: dict[RulesConfig, np.ndarray] = {}

    def search_many(self, games: Sequence[LamaGame]) -> list[tuple[int, dict[int, np.ndarray]]]:
        """The chosen action and each candidate's mean score for the acting seat, for every game.

        (The values are ``[mean, standard error of the paired difference with the network's choice]``.)
        """
        if not games:
            return []
        for game in games:
            if game.num_players != self.num_players:
                self.prior.check_compatible(game.num_players)
        seeds = self.decision_integers(games, 2**63, self.rollouts)
        cands = self._orders(list(games))
        score = self._compiled_scores(games, cands, seeds) if self.compiled else None
        if score is None:
            score = self._python_scores(games, cands, seeds)
        return self._pick(cands, score)

    def _tables(self, game: LamaGame, seeds: np.ndarray) -> tuple[np.ndarray, list[np.ndarray]]:
        """Each rollout's common dice (``[R, rounds, seat, roll, die]`` sides 0..5) and ``playout=sample`` draws."""
        streams = [np.random.default_rng(int(s)) for s in seeds]
        n = game.num_players
        sides = np.stack([st.integers(6, size=(_TABLE_ROUNDS, n, _TABLE_ROLLS, 3)) for st in streams])
        u = [st.random(_DRAWS) if self.playout == "sample" else np.zeros(0) for st in streams]
        return sides, u

    def _compiled_scores(self, games: Sequence[LamaGame], cands: list[list[int]],
                         seeds: np.ndarray) -> np.ndarray | None:
        """The rollouts' scores, played in compiled code (None: a game has no state record)."""
        try:
            roots = np.stack([to_state(g) for g in games])
        except IllegalActionError:
            return None
        r = self.rollouts
        sizes = [len(order) * r for order in cands]
        starts = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
        score = np.empty(int(starts[-1]))
        by_rules: dict[RulesConfig, list[int]] = {}
        for gi, g in enumerate(games):
            by_rules.setdefault(g.rules, []).append(gi)
        for rules, members in by_rules.items():
            parts = np.concatenate([np.arange(starts[gi], starts[gi + 1]) for gi in members])
            score[parts] = self._compiled_group(rules, [games[gi] for gi in members], roots[members],
                                                [cands[gi] for gi in members], seeds[members])
        return score

    def _compiled_group(self, rules: RulesConfig, games: list[LamaGame], roots: np.ndarray,
                        cands: list[list[int]], seeds: np.ndarray) -> np.ndarray:
        """The scores of the rollouts of ``games`` (all under ``rules``), in compiled lockstep steps."""
        from lama_env.vector import encoder_rules

        from . import _rollout_kernel as RK

        rec = self._rules.get(rules)
        if rec is None:
            rec = self._rules[rules] = encoder_rules(self.num_players, rules)[()]
        r, n = self.rollouts, self.num_players
        game, action, tab, tables = [], [], [], []
        for gi, (g, order) in enumerate(zip(games, cands, strict=True)):
            sides = self._tables(g, seeds[gi])[0]
            tables.append(sides[..., 0] * 36 + sides[..., 1] * 6 + sides[..., 2])  # the roll's index, as the kernel
            for a in order:
                game += [gi] * r
                action += [a] * r
                tab.append(gi * r + np.arange(r))
        game_ = np.array(game, dtype=np.int64)
        sims = roots[game_]
        sims["es"] = seeds.astype(np.uint64)[game_, np.concatenate(tab) % r]  # rollout i of a game: its stream i
        total = len(sims)
        tab_, tables_ = np.concatenate(tab), np.concatenate(tables).astype(np.int64)
        rolls = np.zeros((total, n), dtype=np.int64)
        first = np.zeros(total, dtype=np.int64)
        me = np.zeros(total, dtype=np.int64)
        status = np.zeros(total, dtype=np.int64)
        score = np.zeros(total)
        mlp = self.prior.mlp
        assert mlp is not None
        x = np.zeros((total, mlp.inputs), dtype=np.float32)
        idx = np.arange(total, dtype=np.int64)
        RK.begin(sims, np.array(action, dtype=np.int64), rec, self.rounds, tab_, tables_, rolls, first, me, status,
                 score)
        logits = np.zeros((0, mlp.outputs), dtype=np.float32)
        rows, choose = total, False
        while True:
            rows, steps = RK.advance(sims, rec, self.rounds, tab_, tables_, rolls, first, me, status, score, idx,
                                     rows, logits, choose, x)
            self.steps_played += int(steps)
            if not rows:
                break
            logits = mlp.invariant(x[:rows])
            choose = True
        cut = RK.encode_cut(sims, rec, status, x, idx)
        if cut:
            k = idx[:cut]
            p = self.value_net.win_probabilities(x[:cut])  # seen from the player to act: the seats in turn
            score[k] = p[np.arange(cut), (me[k] - sims["cur"][k]) % n]
        return score

    def _python_scores(self, games: Sequence[LamaGame], cands: list[list[int]], seeds: np.ndarray) -> np.ndarray:
        """The rollouts' scores, played on :class:`~lama_env.engine.LamaGame` copies (the reference)."""
        sims, owner, draws, tables = self._start(games, cands, seeds)
        first_round = np.array([games[gi].round_index for gi, _, _ in owner])
        now = first_round.copy()  # the round each rollout plays: a step that ends one deals the next
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
                if c.round_index != now[k]:  # the last step ended a round (and dealt the next)
                    now[k] = c.round_index
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
        return score

    def _start(
        self, games: Sequence[LamaGame], cands: list[list[int]], seeds: np.ndarray
    ) -> tuple[list[LamaGame], list[tuple[int, int, int]], list[np.ndarray], list[np.ndarray]]:
        """The rollouts' games, (game, candidate, i), ``playout=sample`` draws and dice tables, before the candidate."""
        r = self.rollouts
        # the rollouts: (game, candidate, i); the i-th of every candidate of a game on the same stream
        sims: list[LamaGame] = []
        owner: list[tuple[int, int, int]] = []
        draws: list[np.ndarray] = []
        tables: list[np.ndarray] = []
        for gi, (game, order) in enumerate(zip(games, cands, strict=True)):
            sides, u = self._tables(game, seeds[gi])
            faces = np.asarray(game.rules.dice_index)  # (3, 6): each die's face index per side
            dice = faces[np.arange(3), sides]
            for ci in range(len(order)):
                for i in range(r):
                    # sampled chance and flowing rounds whatever the modes of the game searched: the deals and
                    # the rolls past the table from the rollout's stream of the compiled engine's scheme (as the
                    # compiled rollouts draw them; a step that ends a round deals the next one from it)
                    sims.append(game.clone(chance="sampled", rng=Streams(int(seeds[gi, i]), 0), rounds="flow"))
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
            logits = self.prior._batch([sims[k] for k in ask], [legals[k] for k in ask], invariant=True)
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
    kind, opts = search_kind(parse_options(arg))
    if kind == "rollouts":
        return RolloutPolicy(**opts)
    return SearchPolicy(**opts)


register("search", _make, USAGE,
         "rollouts of the policy network NET from each of its likeliest choices on common dice, valued at the "
         "round's end by a value network (search:ppo:2p alone: rollouts=128,rounds=1,z=1, the strongest measured); "
         "with depth=D, expectimax over the next decisions and the exact dice instead (e.g. search:ppo:2p,depth=1)")

__all__ = ["PLAYOUTS", "RolloutPolicy"]
