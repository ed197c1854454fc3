"""*Don't L.L.A.M.A. Dice* as the OpenSpiel game ``python_lama_dice``, registered on import (the ``openspiel`` extra).

An adapter over :class:`lama_env.engine.LamaGame` (docs/environments.md, The state API: search and OpenSpiel).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from . import actions as A
from .engine import LamaGame
from .observation import encode, observation_layout, observation_size
from .picture import render_text
from .rules import FACES, MAX_PLAYERS, MAX_ROUND_POINTS, MIN_PLAYERS, NUM_FACES, RULES_FIELDS, RulesConfig
from .streams import Streams

try:
    import pyspiel
except ModuleNotFoundError as e:  # pragma: no cover - the openspiel extra is not installed
    if e.name != "pyspiel":
        raise
    from .extras import missing_extra

    raise ModuleNotFoundError(str(missing_extra("openspiel", "lama_env.openspiel", "open-spiel")),
                              name="pyspiel") from None
from open_spiel.python.observation import IIGObserverForPublicInfoGame

__all__ = ["GAME_NAME", "LamaDiceGame", "LamaDiceObserver", "LamaDiceState", "chance_action", "chance_outcome",
           "state_from_game"]

#: The name the game is registered under (``pyspiel.load_game(GAME_NAME)``).
GAME_NAME = "python_lama_dice"
#: Chance outcome ids: a roll ``49 d0 + 7 d1 + d2`` (below ``_DEAL_BASE``), a deal card ``_DEAL_BASE + face``.
_DEAL_BASE = NUM_FACES**3
_NUM_CHANCE_OUTCOMES = _DEAL_BASE + NUM_FACES
REWARDS = ("win", "points")
DEFAULT_MAX_GAME_LENGTH = 3000


def _rule_params(rules: RulesConfig) -> dict[str, Any]:
    """The game parameters of ``rules``: its fields, ``dice`` as ``"1234LL/3456LL/1256LL"`` (inverse: _rules_of)."""
    return {**{k: getattr(rules, k) for k in RULES_FIELDS}, "dice": "/".join("".join(die) for die in rules.dice)}


PARAMETERS: dict[str, Any] = {"players": 2, "reward": "win", **_rule_params(RulesConfig()),
                              "max_game_length": DEFAULT_MAX_GAME_LENGTH}


def _game_type(utility: pyspiel.GameType.Utility) -> pyspiel.GameType:
    t = pyspiel.GameType
    return t(short_name=GAME_NAME, long_name="Don't L.L.A.M.A. Dice (lama-dice)", dynamics=t.Dynamics.SEQUENTIAL,
             chance_mode=t.ChanceMode.EXPLICIT_STOCHASTIC, information=t.Information.PERFECT_INFORMATION,
             utility=utility, reward_model=t.RewardModel.TERMINAL, max_num_players=MAX_PLAYERS,
             min_num_players=MIN_PLAYERS, provides_information_state_string=True,
             provides_information_state_tensor=False, provides_observation_string=True,
             provides_observation_tensor=True, parameter_specification=PARAMETERS)


def chance_action(game: LamaGame, outcome: Any) -> int:
    """The OpenSpiel chance action of one of ``game.chance_outcomes()``' outcomes."""
    if isinstance(outcome, tuple):
        return NUM_FACES * NUM_FACES * outcome[0] + NUM_FACES * outcome[1] + outcome[2]
    return _DEAL_BASE + int(outcome)


def chance_outcome(action: int) -> Any:
    """The engine's outcome (dice tuple or deal face) of an OpenSpiel chance action."""
    if action >= _DEAL_BASE:
        return action - _DEAL_BASE
    return action // (NUM_FACES * NUM_FACES), action // NUM_FACES % NUM_FACES, action % NUM_FACES


def _rules_of(params: dict[str, Any]) -> RulesConfig:
    dice = tuple(tuple(die) for die in str(params["dice"]).split("/"))
    return RulesConfig(**{**{k: params[k] for k in RULES_FIELDS}, "dice": dice})


class LamaDiceGame(pyspiel.Game):
    """The game ``python_lama_dice`` (docs/environments.md, The state API: search and OpenSpiel)."""

    def __init__(self, params: dict[str, Any] | None = None) -> None:
        """Check the parameters and describe the game to OpenSpiel."""
        p = dict(PARAMETERS, **(params or {}))
        n = int(p["players"])
        if not MIN_PLAYERS <= n <= MAX_PLAYERS:
            raise ValueError(f"players must be {MIN_PLAYERS}..{MAX_PLAYERS}, got {n}")
        if p["reward"] not in REWARDS:
            raise ValueError(f"reward must be one of {', '.join(map(repr, REWARDS))}, got {p['reward']!r}")
        if int(p["max_game_length"]) < 1:
            raise ValueError(f"max_game_length must be positive, got {p['max_game_length']}")
        self.rules = _rules_of(p)
        self.reward = p["reward"]
        win = self.reward == "win"
        worst = self.rules.end_threshold - 1 + MAX_ROUND_POINTS  # a total below the threshold, plus one round
        info = pyspiel.GameInfo(num_distinct_actions=A.NUM_ACTIONS, max_chance_outcomes=_NUM_CHANCE_OUTCOMES,
                                num_players=n, min_utility=-1.0 if win else float(-worst),
                                max_utility=1.0 if win else 0.0, utility_sum=0.0 if win else None,
                                max_game_length=int(p["max_game_length"]))
        utility = pyspiel.GameType.Utility.ZERO_SUM if win else pyspiel.GameType.Utility.GENERAL_SUM
        super().__init__(_game_type(utility), info, p)

    def new_initial_state(self) -> LamaDiceState:
        """The start of a game: the first deal's first card (a chance node)."""
        return LamaDiceState(self)

    def make_py_observer(self, iig_obs_type: Any = None,
                         params: dict | None = None) -> LamaDiceObserver | IIGObserverForPublicInfoGame:
        """An observation: :class:`LamaDiceObserver`; an information state: ``IIGObserverForPublicInfoGame``."""
        if params:
            raise ValueError(f"python_lama_dice observers take no parameters, got {params}")
        if iig_obs_type is None or (iig_obs_type.public_info and not iig_obs_type.perfect_recall):
            return LamaDiceObserver(self.num_players())
        return IIGObserverForPublicInfoGame(iig_obs_type, params)


class LamaDiceState(pyspiel.State):
    """A state of ``python_lama_dice``: a :class:`~lama_env.engine.LamaGame` with explicit chance."""

    def __init__(self, game: LamaDiceGame, lama: LamaGame | None = None) -> None:
        """A new game (or, through :func:`state_from_game`, a copy of ``lama`` in explicit-chance mode)."""
        super().__init__(game)
        if lama is None:
            lama = LamaGame(game.num_players(), game.rules, chance="explicit", record=False, rng=Streams(0, 0))
        self._lama = lama
        self._reward = game.reward
        self._max_moves = game.max_game_length()
        self._moves = 0

    @property
    def lama_game(self) -> LamaGame:
        """The engine's game (read it, don't change it)."""
        return self._lama

    def current_player(self) -> int:
        """The player to act, ``CHANCE`` at a chance node, ``TERMINAL`` at the end."""
        if self.is_terminal():
            return pyspiel.PlayerId.TERMINAL
        g = self._lama
        return pyspiel.PlayerId.CHANCE if g.is_chance_node() else g.current_player

    def is_terminal(self) -> bool:
        """Whether the game is over (or cut off at ``max_game_length`` decisions)."""
        return self._lama.game_over or self._moves >= self._max_moves

    def _legal_actions(self, player: int) -> list[int]:
        return list(self._lama.legal_actions())

    def chance_outcomes(self) -> list[tuple[int, float]]:
        """The pending chance event's outcomes as ``(action, probability)``."""
        return [(chance_action(self._lama, o), p) for o, p in self._lama.chance_outcomes()]

    def _apply_action(self, action: int) -> None:
        g = self._lama
        if g.is_chance_node():
            g.apply_chance(chance_outcome(action))
        else:
            g.step(action)  # rounds flow on: a step that ends a round leaves the next deal's chance node
            self._moves += 1

    def _action_to_string(self, player: int, action: int) -> str:
        if player == pyspiel.PlayerId.CHANCE:
            o = chance_outcome(action)
            return "deal " + FACES[o] if isinstance(o, int) else "roll " + " ".join(FACES[f] for f in o)
        return A.describe(action)

    def returns(self) -> list[float]:
        """Terminal returns of the game's ``reward`` mode (all 0 before the end)."""
        g = self._lama
        if not self.is_terminal() or (self.cut_off() and self._reward == "win"):
            return [0.0] * g.num_players
        return list(g.returns(self._reward))  # cut off at max_game_length: the finished rounds' points

    @property
    def max_game_length(self) -> int:
        """The game's ``max_game_length``: the most decisions before the game is cut off."""
        return self._max_moves

    def cut_off(self) -> bool:
        """Whether the game was cut off at ``max_game_length`` decisions (terminal before its end)."""
        return not self._lama.game_over and self._moves >= self._max_moves

    def __str__(self) -> str:
        """The table as text, and the pending chance event (none once terminal)."""
        g = self._lama
        text = _table_text(self)
        if not self.cut_off() and g.is_chance_node():
            outcomes = g.chance_outcomes()
            text += f"\nchance: {'deal' if isinstance(outcomes[0][0], int) else 'roll'} ({len(outcomes)} outcomes)"
        return text + f"\ndecisions: {self._moves}"


class LamaDiceObserver:
    """OpenSpiel's Python observer of the game: ``tensor`` is :func:`lama_env.observation.encode`."""

    def __init__(self, num_players: int) -> None:
        """An observation tensor of ``15 N + 22`` floats."""
        self.tensor = np.zeros(observation_size(num_players), np.float32)
        self.dict = {"observation": self.tensor}

    def set_from(self, state: LamaDiceState, player: int) -> None:
        """Write ``encode(game, player)`` into :attr:`tensor` (with no one to act once cut off)."""
        self.tensor[:] = encode(state.lama_game, player)
        if state.cut_off():
            for e in observation_layout(state.lama_game.num_players):
                if e.name in _CUT_OFF_VIEW:
                    self.tensor[e.start:e.start + e.length] = _CUT_OFF_VIEW[e.name]

    def string_from(self, state: LamaDiceState, player: int) -> str:
        """The table as text (the game has no hidden information: every player sees the same)."""
        return _table_text(state)


#: The observation blocks of a state cut off at ``max_game_length``: as at the end of a game.
_CUT_OFF_VIEW: dict[str, Any] = {"to_act": 0.0, "decision": np.array((0.0, 0.0, 0.0, 1.0), np.float32), "dice": 0.0}


def _table_text(state: LamaDiceState) -> str:
    """The table as text; once cut off at ``max_game_length``, terminal: no one to act, no dice."""
    g = state.lama_game
    text = render_text(g)
    if not state.cut_off():
        return text
    first, *rest = text.split("\n")
    head = first.split(" · ")
    head[-1] = f"game cut off at max_game_length ({state.max_game_length} decisions)"
    return "\n".join([" · ".join(head)] + [" " + line[1:] if line.startswith(">") else line for line in rest])


def state_from_game(game: LamaGame, spiel_game: LamaDiceGame | None = None) -> LamaDiceState:
    """An OpenSpiel state at ``game``'s position (a copy with explicit chance) of ``spiel_game``."""
    if spiel_game is None:
        spiel_game = load(game.num_players, game.rules)
    if spiel_game.num_players() != game.num_players or spiel_game.rules != game.rules:
        raise ValueError("the OpenSpiel game must have the game's player count and rules")
    return LamaDiceState(spiel_game, game.clone(chance="explicit"))


def load(players: int = 2, rules: RulesConfig | None = None, **params: Any) -> LamaDiceGame:
    """``pyspiel.load_game("python_lama_dice", ...)`` for ``players`` and a :class:`RulesConfig`."""
    return pyspiel.load_game(GAME_NAME, {"players": players, **_rule_params(rules or RulesConfig()), **params})


pyspiel.register_game(_game_type(pyspiel.GameType.Utility.ZERO_SUM), LamaDiceGame)
