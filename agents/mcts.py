"""``mcts:N``: Monte-Carlo tree search with OpenSpiel's ``MCTSBot`` over the game ``python_lama_dice``.

Spec: ``mcts:N[,rollouts=R][,uct=C][,rollout=random|openspiel|SPEC][,reward=win|points][,seed=S]``

* ``N``: simulations per decision (OpenSpiel's ``max_simulations``).
* ``rollouts`` (1): rollouts per leaf, averaged.
* ``uct`` (2.0): the UCT exploration constant (OpenSpiel's ``uct_c``; returns lie in [-1, 1]).
* ``rollout`` (``random``): who plays the rollouts to the end of the game: ``random``
  (uniform over the legal actions, as OpenSpiel's ``RandomRolloutEvaluator``, on the engine
  itself), ``openspiel`` (OpenSpiel's ``RandomRolloutEvaluator`` itself, through ``pyspiel``
  states: the same playouts, slower) or any agent spec, e.g. ``rollout=threshold:0.2``.
* ``reward`` (``win``; ``points`` solo, where a win is always 0): what the search maximises,
  as the game's ``reward`` parameter (lama_env.openspiel).
* ``seed``: a fixed seed of the search and its rollouts (else the tool's ``--seed``
  decides, through :meth:`~lama_dice.agents.base.Policy.seed`).

The tree is OpenSpiel's: explicit chance nodes for every roll and every card of a deal,
UCT at the decisions, MCTS-Solver backups; a search starts from the game in hand
(:func:`lama_env.openspiel.state_from_game`) and is thrown away after the decision.
Leaves are valued by :class:`EngineRolloutEvaluator`: the same rollouts as OpenSpiel's
``RandomRolloutEvaluator`` (chance drawn with its exact odds, actions uniform), played
on the rules engine directly rather than through ``pyspiel`` states (faster: see
``python -m lama_dice.bench.search_speed``).
Needs OpenSpiel (``pip install "lama-dice[openspiel]"``).
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache
from typing import TYPE_CHECKING, Any

import numpy as np

from lama_env.engine import LamaGame
from lama_env.errors import clip
from lama_env.rules import RulesConfig
from lama_env.streams import Streams

from .base import Policy
from .registry import AgentSpecError, register

if TYPE_CHECKING:  # pragma: no cover
    from lama_env.openspiel import LamaDiceGame, LamaDiceState

USAGE = "mcts:N[,rollouts=R,uct=C,rollout=random|openspiel|SPEC,reward=win|points,seed=S]"
#: Decisions a rollout may take before it stops (the game's max_game_length cut-off).
_ROLLOUT_LIMIT = 3000


def _require_openspiel() -> Any:
    """OpenSpiel's ``mcts`` module, or a :class:`~lama_env.extras.MissingExtraError` saying how to install it."""
    try:
        from open_spiel.python.algorithms import mcts

        import lama_env.openspiel  # noqa: F401  (registers python_lama_dice)
    except ModuleNotFoundError as e:
        if (e.name or "").split(".")[0] not in ("open_spiel", "pyspiel"):
            raise
        from lama_env.extras import missing_extra

        raise missing_extra("openspiel", "mcts:N (OpenSpiel's MCTS)", "open-spiel") from None
    return mcts


class EngineRolloutEvaluator:
    """Values a leaf by playing it out to the game's end on the engine (an OpenSpiel ``Evaluator``).

    Args:
        rollouts: playouts per leaf, averaged.
        policy: who plays the playouts (every seat); None: uniform over the legal actions.
        reward: the returns measured (``LamaGame.returns``).
        rng: the playouts' random stream (deals, dice, the random policy's choices).
    """

    def __init__(self, rollouts: int, policy: Policy | None, reward: str, rng: np.random.Generator) -> None:
        """Keep the settings (see the class docstring)."""
        self.rollouts = rollouts
        self.policy = policy
        self.reward = reward
        self.rng = rng

    def evaluate(self, state: LamaDiceState) -> np.ndarray:
        """The mean returns of :attr:`rollouts` playouts from ``state``."""
        total = np.zeros(state.lama_game.num_players)
        for _ in range(self.rollouts):
            total += self._playout(state.lama_game)
        return total / self.rollouts

    def _playout(self, start: LamaGame) -> np.ndarray:
        game = start.clone(chance="sampled", rng=Streams(int(self.rng.integers(2**63)), 0))  # dice: at a drawn state
        rng, policy = self.rng, self.policy
        for _ in range(_ROLLOUT_LIMIT):
            if game.game_over:
                break
            if game.is_chance_node():
                game.sample_chance()
            else:
                legal = game.legal_actions()
                if policy is not None:
                    game.step(policy.act(game, legal))
                else:
                    game.step(legal[int(rng.integers(len(legal)))] if len(legal) > 1 else legal[0])
        if not game.game_over and self.reward == "win":  # cut off: no result, as the game itself
            return np.zeros(game.num_players)
        return np.asarray(game.returns(self.reward))

    def prior(self, state: LamaDiceState) -> list[tuple[int, float]]:
        """Uniform over the legal actions; the exact odds at a chance node."""
        if state.is_chance_node():
            return state.chance_outcomes()
        legal = state.legal_actions(state.current_player())
        return [(a, 1.0 / len(legal)) for a in legal]


@cache
def _spiel_game(players: int, rules: RulesConfig, reward: str) -> LamaDiceGame:
    from lama_env.openspiel import load

    return load(players, rules, reward=reward)


class MCTSPolicy(Policy):
    """Plays by OpenSpiel's ``MCTSBot`` (see the module docstring for the options)."""

    def __init__(self, simulations: int, rollouts: int = 1, uct: float = 2.0, rollout: str = "random",
                 reward: str | None = None, seed: int | None = None) -> None:
        """Check OpenSpiel is there and keep the options; ``reward=None``: win, or points solo."""
        super().__init__()
        _require_openspiel()
        self.simulations = simulations
        self.rollouts = rollouts
        self.uct = uct
        self.reward = reward
        self.fixed_seed = seed
        self.rollout_policy: Policy | None = None
        if rollout not in ("random", "openspiel"):
            from .registry import make_agent

            self.rollout_policy = make_agent(rollout)
        self.rollout = rollout
        self.seed(seed)

    def seed(self, seed: int | None) -> None:
        """Reseed the search and the rollouts (a ``seed=S`` of the spec wins over ``seed``)."""
        seed = self.fixed_seed if self.fixed_seed is not None else seed
        super().seed(seed)
        if self.rollout_policy is not None:
            self.rollout_policy.seed(None if seed is None else int(self.rng.integers(2**31)))

    def seed_decisions(self, salt: int | None) -> None:
        """Set the salt of the draws keyed by the decision (a ``seed=S`` of the spec keeps its own)."""
        if self.fixed_seed is None:
            super().seed_decisions(salt)

    def act(self, game: LamaGame, legal: Sequence[int]) -> int:
        """Search from ``game`` and return the most visited action (a forced one at once)."""
        if len(legal) == 1:
            return legal[0]
        from lama_env.openspiel import state_from_game

        reward = self.reward or ("win" if game.num_players > 1 else "points")
        spiel_game = _spiel_game(game.num_players, game.rules, reward)
        mcts = _require_openspiel()
        rng = self.decision_rng(game)  # keyed by the decision where the game allows: the same in any batch
        if rng is not self.rng and self.rollout_policy is not None:
            self.rollout_policy.seed(int(rng.integers(2**31)))
        if self.rollout == "openspiel":
            evaluator = mcts.RandomRolloutEvaluator(
                self.rollouts, np.random.RandomState(int(rng.integers(2**31))))
        else:
            evaluator = EngineRolloutEvaluator(self.rollouts, self.rollout_policy, reward, rng)
        bot = mcts.MCTSBot(spiel_game, self.uct, self.simulations, evaluator,
                                 random_state=np.random.RandomState(int(rng.integers(2**31))))
        return int(bot.step(state_from_game(game, spiel_game)))


def parse_options(arg: str | None) -> dict[str, Any]:
    """The keyword arguments of :class:`MCTSPolicy` from the text after ``mcts:``."""
    if not arg:
        raise AgentSpecError(f"mcts needs a number of simulations: {USAGE} (e.g. mcts:200)")
    first, *rest = [part.strip() for part in arg.split(",")]
    opts: dict[str, Any] = {"simulations": _number(first, "N (simulations)", int, 1)}
    convert = {"rollouts": (int, 1), "uct": (float, 0.0), "seed": (int, 0)}
    for part in rest:
        key, eq, value = part.partition("=")
        if not eq or key not in (*convert, "rollout", "reward"):
            raise AgentSpecError(f"bad mcts option {clip(part)}; the options are rollouts=R, uct=C, rollout=SPEC, "
                                 "reward=win|points, seed=S")
        if key in opts:
            raise AgentSpecError(f"mcts option {key!r} given twice")
        if key in convert:
            opts[key] = _number(value, key, *convert[key])
        elif key == "reward" and value not in ("win", "points"):
            raise AgentSpecError(f"mcts option reward must be win or points, got {clip(value)}")
        else:
            opts[key] = value
    return opts


def _number(text: str, name: str, kind: type, low: float) -> Any:
    try:
        value = kind(text)
    except ValueError:
        value = None
    if value is None or not np.isfinite(value) or value < low:
        what = "an integer" if kind is int else "a number"
        raise AgentSpecError(f"mcts option {name} must be {what} >= {low}, got {clip(text)}")
    return value


def _make(arg: str | None) -> Policy:
    return MCTSPolicy(**parse_options(arg))


register("mcts", _make, USAGE, "Monte-Carlo tree search with OpenSpiel's MCTSBot, N simulations a decision "
         "(needs the openspiel extra)")

__all__ = ["USAGE", "EngineRolloutEvaluator", "MCTSPolicy", "parse_options"]
