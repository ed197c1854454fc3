"""``search:NET,depth=D``: expectimax over the next decisions, a value network at the leaves, a policy network as prior.

Spec: ``search:NET,depth=D[,top=K][,value=V][,deals=M][,margin=E][,seed=S]``.  Any of the tree's
own options (``depth``, ``deals``, ``margin``) selects this tree; without them ``search:NET`` is the
rollout search (:mod:`lama_dice.agents.rollout`), and ``search:NET`` alone plays the strongest
search measured, :data:`STRONGEST`: ``search:NET,rollouts=128,rounds=1,z=1``
(:func:`search_kind` says which; ``search:NET,depth=1`` is the former default, this tree at depth 1).

* ``NET``: a policy network spec, ``ppo:2p``, ``ppo:runs/x/best.zip``...: its action
  probabilities order the choices at every decision of the tree, and only the ``top`` most
  likely are searched.
* ``depth`` (1): the decisions of the player to act that each line searches, the one in
  hand included; a forced decision (one legal action) costs nothing, and another seat's
  decision is a leaf. ``depth=1``: each choice now, the dice of a roll, then the value
  network; ``depth=2`` also the choice after each roll (which card to discard or take), and
  the next turn when the others have all quit; and so on.
* ``top`` (3): how many choices of each decision are searched, the most likely first (``0``: all).
* ``value`` (the shipped ``value:Np`` of the network's player count, e.g. ``2p``): the
  value network at the leaves, a value file or a shipped name (:mod:`lama_dice.agents.value`).
* ``deals`` (8): a round that ends inside the tree is valued by the mean over this many
  deals of the next round (the same deals for every leaf of a decision, so that choices are
  compared on common deals); a game that ends inside the tree is valued exactly.
* ``margin`` (0): the search plays another choice than the network's most likely one only
  if its value (chance to win) is higher by more than this.
* ``seed``: a fixed seed of the deals drawn (else the tool's ``--seed`` decides).

The tree is expectimax over the state API (:meth:`lama_env.engine.LamaGame.clone`): at a
roll, every distinct roll with its exact probability
(:func:`lama_env.transitions.grouped_chance_outcomes`: which faces show, whatever die shows
them); at a decision of the player to act, the choice with the best chance to win for them;
a leaf (a decision beyond the depth, or another seat's) is valued by the value network, seen
from the player to act there.  The tree is expanded a level of decisions at a time, with one
forward pass of the policy network per level, and all its leaves are valued with one forward
pass of the value network; :meth:`SearchPolicy.act_batch` (what ``evaluate`` calls for the
games it plays in lockstep) grows the trees of all its games together, so that those passes
are shared.  Given its seed the agent is deterministic, and in a seeded evaluation it decides
alike whatever games are batched with it: each game's deals are drawn from
:meth:`~lama_dice.agents.base.Policy.decision_integers` (keyed by the game and the decision),
and the networks run through :meth:`lama_dice.agents.mlp.MLP.invariant` (a row's outputs the
same bits in any batch).
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache
from typing import Any

import numpy as np

from lama_env import actions as A
from lama_env.engine import LamaGame, Phase
from lama_env.errors import clip
from lama_env.rules import DECK, HAND_SIZE, win_shares
from lama_env.streams import Streams
from lama_env.transitions import chance_outcomes, grouped_chance_outcomes

from .base import Policy
from .learned import LearnedPolicy
from .registry import AgentSpecError, make_agent
from .value import ValueNet, load_value, value_names

USAGE = ("search:NET[,rollouts=R,rounds=U,playout=P,z=Z,engine=E,top=K,value=V,seed=S | ,depth=D,deals=M,margin=E,"
         "top=K,value=V,seed=S]")
#: The options and their defaults (the last five: the rollout search, :mod:`lama_dice.agents.rollout`).
DEFAULTS: dict[str, Any] = {"depth": 1, "top": 3, "value": None, "deals": 8, "margin": 0.0, "seed": None,
                            "rollouts": 0, "rounds": 1, "playout": "greedy", "z": 0.0, "engine": "compiled"}
#: The options of the expectimax alone and of the rollout search alone.
_TREE_ONLY, _ROLLOUT_ONLY = ("depth", "deals", "margin"), ("rounds", "playout", "z", "engine")
#: What ``search:NET`` plays when no option names the kind of search (neither ``rollouts=R`` nor a tree
#: option): the strongest search measured (docs/agents-and-evaluation.md, issue 51), the rollout search
#: at these settings (z=1, not z=2 as before: with the retrained ``value:2p`` it beats ``ppo:2p``, and it beats
#: three ``ppo:4p`` as z=2 did); each can be overridden (``search:ppo:2p,z=2`` is ``rollouts=128,rounds=1,z=2``).
STRONGEST: dict[str, Any] = {"rollouts": 128, "rounds": 1, "z": 1.0}
#: The options that name one of a few choices.
_CHOICES = {"playout": ("greedy", "sample"), "engine": ("compiled", "python")}
#: The most decisions a line may search (the tree grows about 70-fold with each roll).
MAX_DEPTH = 4

_LEAF, _EXACT, _MAX, _MEAN = range(4)


class _Node:
    """A node of the search tree: a leaf (index into the leaves), an exact value, a decision or a mean."""

    __slots__ = ("actions", "children", "index", "kind", "player", "value", "weights")

    def __init__(self, kind: int) -> None:
        self.kind = kind
        self.children: list[_Node] = []
        self.weights: list[float] = []
        self.actions: list[int] = []
        self.player = -1
        self.index = -1
        self.value: np.ndarray | None = None


@cache
def _rolls(rules: Any) -> list[tuple[tuple[int, ...], float]]:
    """The distinct rolls (by faces shown) as one roll in die order each, with their probabilities."""
    first: dict[tuple[int, ...], tuple[int, ...]] = {}
    for dice, _ in chance_outcomes(rules):
        first.setdefault(tuple(sorted(dice)), tuple(dice))
    return [(first[faces], p) for faces, p in grouped_chance_outcomes(rules)]


def _deal(seed: int, num_players: int) -> list[int]:
    """A deal of the search's own, card by card in seat order: the first ``6 n`` cards of a deck shuffled by ``seed``.

    A partial Fisher-Yates shuffle of :data:`lama_env.rules.DECK` by ``numpy.random.default_rng(seed)``'s first
    floats (card ``i`` swaps with card ``i + floor(u * (cards left))``), so the deals the search values a
    round's end on are the same whatever stream the game plays on.
    """
    k = HAND_SIZE * num_players
    u = np.random.default_rng(seed).random(k).tolist()
    deck = list(DECK)
    for i in range(k):
        j = i + int(u[i] * (len(deck) - i))
        deck[i], deck[j] = deck[j], deck[i]
    return deck[:k]


def _final_shares(game: LamaGame) -> np.ndarray:
    """Each seat's share of the win of a finished game (1/N each when everyone ties)."""
    return np.array(win_shares(game.totals))


class _Tree:
    """What the expansion of one search tree shares: the searching seat, its deals, the leaves, the next level."""

    __slots__ = ("deal_seeds", "following", "leaves", "player", "rounds", "scratch")

    def __init__(self, player: int, deal_seeds: np.ndarray, scratch: Streams, leaves: list[LamaGame],
                 following: list[tuple[_Node, LamaGame, int, np.ndarray]]) -> None:
        self.player = player
        self.deal_seeds = deal_seeds
        self.scratch = scratch
        self.leaves = leaves
        self.following = following
        self.rounds: dict[tuple, _Node] = {}  # the nodes of finished rounds, by what the next round starts from


class SearchPolicy(Policy):
    """Expectimax with a value network at the leaves and a policy network as prior (see the module docstring)."""

    def __init__(self, net: str, depth: int = 1, top: int = 3, value: str | None = None, deals: int = 8,
                 margin: float = 0.0, seed: int | None = None) -> None:
        """Load the policy network ``net`` and the value network (see the module docstring for the options)."""
        super().__init__()
        prior = make_agent(net)
        if not isinstance(prior, LearnedPolicy):
            raise AgentSpecError(f"search needs a policy network (ppo:...) as NET, got {clip(net)}")
        self.prior = prior
        self.num_players = prior.num_players
        if value is None:
            name = f"{self.num_players}p"
            if name not in value_names():
                raise AgentSpecError(f"no shipped value network for {self.num_players} players "
                                     f"(shipped: {', '.join(value_names()) or 'none'}); give one: value=FILE")
            value = name
        self.value_net: ValueNet = load_value(value)
        if self.value_net.num_players != self.num_players:
            raise AgentSpecError(f"the value network {clip(value)} is for {self.value_net.num_players} players, "
                                 f"the policy network {clip(net)} for {self.num_players}")
        self.depth, self.top, self.deals, self.margin = depth, top, deals, margin
        self.fixed_seed = seed
        self.leaves_valued = 0  #: leaves valued so far (the search's cost)
        self.seed(seed)

    def seed(self, seed: int | None) -> None:
        """Reseed the deals drawn (a ``seed=S`` of the spec wins over ``seed``)."""
        super().seed(self.fixed_seed if self.fixed_seed is not None else seed)

    def seed_decisions(self, salt: int | None) -> None:
        """Set the salt of the draws keyed by the decision (a ``seed=S`` of the spec keeps its own)."""
        if self.fixed_seed is None:
            super().seed_decisions(salt)

    # ------------------------------------------------------------------ acting
    def act(self, game: LamaGame, legal: Sequence[int]) -> int:
        """Search from ``game`` and return the best choice for the player to act (a forced one at once)."""
        return self.act_batch([game], [legal])[0]

    def act_batch(self, games: Sequence[LamaGame], legals: Sequence[Sequence[int]]) -> list[int]:
        """Search from every game at once (one forward pass per tree level and one for all leaves)."""
        todo = [i for i, legal in enumerate(legals) if len(legal) > 1]
        out = [legal[0] for legal in legals]
        for i, (action, _) in zip(todo, self.search_many([games[i] for i in todo]), strict=True):
            out[i] = action
        return out

    def search(self, game: LamaGame) -> tuple[int, dict[int, np.ndarray]]:
        """The chosen action and each searched action's value (every seat's chance to win) at ``game``."""
        return self.search_many([game])[0]

    def search_many(self, games: Sequence[LamaGame]) -> list[tuple[int, dict[int, np.ndarray]]]:
        """:meth:`search` for many games, their trees expanded and valued together."""
        if not games:
            return []
        for game in games:
            if game.num_players != self.num_players:
                self.prior.check_compatible(game.num_players)
        deal_seeds = self.decision_integers(games, 2**63, self.deals)
        scratch = Streams(0, 0)  # the copies' own stream: never drawn from (the dice are given, deals are chance nodes)
        leaves: list[LamaGame] = []
        roots: list[_Node] = []
        frontier: list[tuple[_Node, LamaGame, int, np.ndarray]] = []
        for game, seeds in zip(games, deal_seeds, strict=True):
            root = _Node(_MAX)
            root.player = game.current_player
            roots.append(root)
            frontier.append((root, game, self.depth, seeds))
        while frontier:
            orders = self._orders([g for _, g, _, _ in frontier])
            following: list[tuple[_Node, LamaGame, int, np.ndarray]] = []
            for (node, g, d, seeds), order in zip(frontier, orders, strict=True):
                node.actions = order
                tree = _Tree(node.player, seeds, scratch, leaves, following)
                node.children = [self._after(g, a, d - 1, tree) for a in order]
            frontier = following
        values = self.value_net.values(leaves) if leaves else np.zeros((0, self.num_players))
        self.leaves_valued += len(leaves)
        results: list[tuple[int, dict[int, np.ndarray]]] = []
        for game, root in zip(games, roots, strict=True):
            me = game.current_player
            child_values = {a: self._backup(c, values) for a, c in zip(root.actions, root.children, strict=True)}
            best = max(root.actions, key=lambda a: child_values[a][me])  # first of the best: the most likely
            if self.margin > 0 and child_values[best][me] <= child_values[root.actions[0]][me] + self.margin:
                best = root.actions[0]
            results.append((best, child_values))
        return results

    def _orders(self, games: list[LamaGame]) -> list[list[int]]:
        """Each game's legal actions, most likely first under the prior, cut to :attr:`top`."""
        legals = [g.legal_actions() for g in games]
        logits = self.prior._batch(games, legals, invariant=True)
        out = []
        for z, legal in zip(logits, legals, strict=True):
            order = sorted(legal, key=lambda a: -z[a])
            out.append(order[:self.top] if self.top else order)
        return out

    def _after(self, g: LamaGame, action: int, d: int, tree: _Tree) -> _Node:
        """The node after ``action`` at ``g``: the mean over the rolls for a roll, else the state it leads to."""
        if action == A.ROLL and g.phase is Phase.TURN:
            node = _Node(_MEAN)
            for dice, p in _rolls(g.rules):
                # flowing rounds, explicit chance: a round's end leaves the next deal's chance node (_settle)
                c = g.clone(chance="explicit", rng=tree.scratch, rounds="flow")
                c.step(A.ROLL, dice=dice)
                node.children.append(self._settle(c, d, tree))
                node.weights.append(p)
            return node
        c = g.clone(chance="explicit", rng=tree.scratch, rounds="flow")
        c.step(action)
        return self._settle(c, d, tree)

    def _settle(self, c: LamaGame, d: int, tree: _Tree) -> _Node:
        """The node of state ``c`` with ``d`` decisions of the searching player left."""
        if c.game_over:
            node = _Node(_EXACT)
            node.value = _final_shares(c)
            return node
        if c.is_chance_node():  # a round ended: the next round's deal, on common deals, valued at once
            key = (c.totals, c.start_player)  # all a finished round leaves to the next (a bust: every bust roll)
            known = tree.rounds.get(key)
            if known is not None:
                return known
            node = tree.rounds[key] = _Node(_MEAN)
            for s in tree.deal_seeds:
                nxt = c.clone()
                for card in _deal(int(s), nxt.num_players):
                    nxt.apply_chance(card)
                node.children.append(self._leaf(nxt, tree.leaves))
                node.weights.append(1.0 / len(tree.deal_seeds))
            return node
        if c.current_player != tree.player:  # another seat's decision: the value network's
            return self._leaf(c, tree.leaves)
        legal = c.legal_actions()
        if len(legal) == 1:  # a forced decision costs no depth
            return self._after(c, legal[0], d, tree)
        if d <= 0:
            return self._leaf(c, tree.leaves)
        node = _Node(_MAX)
        node.player = c.current_player
        tree.following.append((node, c, d, tree.deal_seeds))
        return node

    @staticmethod
    def _leaf(c: LamaGame, leaves: list[LamaGame]) -> _Node:
        node = _Node(_LEAF)
        node.index = len(leaves)
        leaves.append(c)
        return node

    def _backup(self, node: _Node, values: np.ndarray) -> np.ndarray:
        """The value (every seat's chance to win) of ``node``, computed bottom-up and kept on each node."""
        if node.kind == _LEAF:
            node.value = values[node.index]
        elif node.kind == _MEAN:
            node.value = np.asarray(node.weights) @ np.stack([self._backup(c, values) for c in node.children])
        elif node.kind == _MAX:
            vals = [self._backup(c, values) for c in node.children]
            p = node.player
            node.value = max(vals, key=lambda v: v[p])  # first of the best: the most likely under the prior
        assert node.value is not None
        return node.value


def _number(key: str, value: str, hi: float) -> float:
    """The number of option ``key``, 0..``hi``."""
    try:
        x = float(value)
    except ValueError:
        x = float("nan")
    if not 0.0 <= x <= hi:
        raise AgentSpecError(f"search option {key} must be a number 0..{hi:g}, got {clip(value)}")
    return x


def parse_options(arg: str | None) -> dict[str, Any]:
    """The keyword arguments of :class:`SearchPolicy` from the text after ``search:``.

    Raises:
        AgentSpecError: no network, or a bad or repeated option.
    """
    if not arg or not arg.strip():
        raise AgentSpecError(f"search needs a policy network: {USAGE} (e.g. search:ppo:2p)")
    first, *rest = [part.strip() for part in arg.split(",")]
    if "=" in first or not first:
        raise AgentSpecError(f"search's first part must be a policy network (e.g. search:ppo:2p), got {clip(first)}")
    opts: dict[str, Any] = {"net": first}
    ints = {"depth": (1, MAX_DEPTH), "top": (0, A.NUM_ACTIONS), "deals": (1, 256), "seed": (0, 2**63 - 1),
            "rollouts": (1, 4096), "rounds": (1, 100)}
    for part in rest:
        key, eq, value = part.partition("=")
        key, value = key.strip(), value.strip()
        if not eq or key not in DEFAULTS:
            raise AgentSpecError(f"bad search option {clip(part)}; the options are depth=D, top=K, value=V, "
                                 "deals=M, margin=E, seed=S, rollouts=R, rounds=U, playout=P, z=Z, engine=E")
        if key in opts:
            raise AgentSpecError(f"search option {key!r} given twice")
        if key in ints:
            lo, hi = ints[key]
            try:
                number = int(value)
            except ValueError:
                number = None
            if number is None or not lo <= number <= hi:
                raise AgentSpecError(f"search option {key} must be an integer {lo}..{hi}, got {clip(value)}")
            opts[key] = number
        elif key in ("margin", "z"):
            opts[key] = _number(key, value, 1.0 if key == "margin" else 10.0)
        elif key in _CHOICES:
            if value not in _CHOICES[key]:
                raise AgentSpecError(f"search option {key} must be {' or '.join(_CHOICES[key])}, got {clip(value)}")
            opts[key] = value
        else:
            if not value:
                raise AgentSpecError("search option value needs a value file or a shipped name (value=2p)")
            opts[key] = value
    rollout_keys = [k for k in ("rollouts", *_ROLLOUT_ONLY) if k in opts]
    tree_keys = [k for k in _TREE_ONLY if k in opts]
    if tree_keys and rollout_keys:
        raise AgentSpecError(f"search option {(tree_keys if 'rollouts' in opts else rollout_keys)[0]!r} "
                             + ("is not one of the rollout search (rollouts=R)" if "rollouts" in opts
                                else f"is one of the rollout search, not of the tree ({tree_keys[0]}= selects "
                                     "the tree: depth=D, deals=M, margin=E)"))
    return opts


def search_kind(opts: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """Which search parsed options ask for, ``"tree"`` or ``"rollouts"``, and its keyword arguments.

    A tree option (``depth``, ``deals``, ``margin``) selects the expectimax (:class:`SearchPolicy`);
    else the rollout search, at :data:`STRONGEST`'s settings where ``rollouts=R`` is not given
    (with ``rollouts=R`` spelled out, the rollout search's own defaults: ``z=0``, as measured before).
    """
    if any(k in opts for k in _TREE_ONLY):
        return "tree", dict(opts)
    if "rollouts" in opts:
        return "rollouts", dict(opts)
    return "rollouts", {**STRONGEST, **opts}


__all__ = ["DEFAULTS", "STRONGEST", "USAGE", "SearchPolicy", "parse_options", "search_kind"]
