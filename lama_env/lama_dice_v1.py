"""
# Don't L.L.A.M.A. Dice

A PettingZoo AEC environment for Reiner Knizia's dice game, from `lama-dice` (docs/environments.md).

| Import             | `from lama_env import lama_dice_v1`                          |
|--------------------|--------------------------------------------------------------|
| Creation           | `lama_dice_v1.env(num_players=2)` (`raw_env` is unwrapped)   |
| Actions            | Discrete                                                     |
| Parallel API       | No                                                           |
| Manual Control     | No                                                           |
| Agents             | `agents= ['player_0', 'player_1', ...]`                      |
| Agents             | 1 to 6 (`num_players`; 1 is the solo variant)                |
| Action Shape       | (1,)                                                         |
| Action Values      | Discrete(129)                                                |
| Observation Shape  | (15 N + 22,) (52 for 2 players), in a dict with the mask     |
| Observation Values | [0, 1]                                                       |

The keywords, observation, actions, rewards, infos, illegal actions and versions: `docs/environments.md`
(PettingZoo AEC); the rules: `docs/RULES.md`. v0 is retired (`lama_env.options.DeprecatedEnvError`).

"""  # noqa: D212, D415 (PettingZoo env-doc convention: the Markdown title on its own line)

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium import spaces
from gymnasium.utils import EzPickle
from pettingzoo import AECEnv

from . import actions as A
from .aec_wrappers import AssertOutOfBounds, OrderEnforcing, TerminateIllegal
from .engine import LamaGame
from .episode import CONTINUES, TERMINATED, advance, forced
from .observation import encode, observation_size
from .options import MASKS, ScalarEnv, action_mask, as_action
from .picture import render_text
from .rules import RulesConfig

__all__ = ["env", "raw_env"]


def env(**kwargs: Any) -> AECEnv:
    """:class:`raw_env` (same keywords) wrapped as PettingZoo's classic envs are (:mod:`lama_env.aec_wrappers`)."""
    return OrderEnforcing(AssertOutOfBounds(TerminateIllegal(raw_env(**kwargs), illegal_reward=-1)))


class raw_env(ScalarEnv, AECEnv, EzPickle):  # noqa: N801 (PettingZoo's name)
    """The unwrapped AEC environment (see the module docstring; :func:`env` wraps it)."""

    metadata = {"render_modes": ["human", "ansi", "rgb_array"], "name": "lama_dice_v1",  # noqa: RUF012 (PettingZoo's)
                "is_parallelizable": False, "render_fps": 2}
    _title = "lama_dice_v1"

    def __init__(self, num_players: int = 2, render_mode: str | None = None, episode: str = "game",
                 reward: str = "win", auto_forced: bool = False, max_rounds: int | None = None,
                 record: bool = False, **rules: Any) -> None:
        """Check the options and build the spaces (docs/environments.md, PettingZoo AEC)."""
        EzPickle.__init__(self, num_players=num_players, render_mode=render_mode, episode=episode, reward=reward,
                          auto_forced=auto_forced, max_rounds=max_rounds, record=record, **rules)
        super().__init__()
        # first: an unknown keyword is a TypeError (named after this __init__'s own keywords)
        rules_config = RulesConfig.from_keywords(rules, f"{type(self).__name__}.__init__()")
        self._check_options(rules_config, num_players, episode, reward, auto_forced, max_rounds)
        self._check_render_mode(render_mode)
        self.record = bool(record)
        n = self.num_players
        self.possible_agents = [f"player_{i}" for i in range(n)]
        self._names = tuple(self.possible_agents)
        self._seat = {a: i for i, a in enumerate(self.possible_agents)}
        size = observation_size(n)
        self.observation_spaces = {a: spaces.Dict({"observation": spaces.Box(0.0, 1.0, (size,), dtype=np.float32),
                                                   "action_mask": spaces.Box(0, 1, (A.NUM_ACTIONS,), dtype=np.int8)})
                                   for a in self.possible_agents}
        self.action_spaces = {a: spaces.Discrete(A.NUM_ACTIONS) for a in self.possible_agents}
        self._over = True
        self._dirty = False

    def observation_space(self, agent: str) -> spaces.Space:
        """The observation space of ``agent``: a ``Dict`` of ``observation`` and ``action_mask``."""
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Space:
        """The action space of ``agent``: ``Discrete(NUM_ACTIONS)``."""
        return self.action_spaces[agent]

    def reset(self, seed: int | None = None, options: dict | None = None) -> None:
        """Start a new game (a new random stream when ``seed`` is given)."""
        g = self._deal(seed, self.record)
        self.agents = list(self.possible_agents)
        self.rewards: dict[str, float] = dict.fromkeys(self.agents, 0)
        self._cumulative_rewards: dict[str, float] = dict.fromkeys(self.agents, 0)
        self.terminations = dict.fromkeys(self.agents, False)
        self.truncations = dict.fromkeys(self.agents, False)
        self.infos: dict[str, dict[str, Any]] = {a: {} for a in self.agents}
        self._over = self._dirty = False
        self._skip_agent_selection = None
        if self.auto_forced:  # else nothing to settle: a decision is asked
            self._settle(g)
        self.agent_selection = self._names[g.current_player]

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        """``{"observation": encode(game, seat), "action_mask": ...}`` for ``agent`` (new arrays every call)."""
        g = self._game
        assert g is not None  # agent_selection is set: reset() has dealt a game
        if agent == self.agent_selection and not self._over:
            legal = g.legal_actions()
            mask = MASKS.get(legal)  # action_mask(legal), looked up inline
            mask = action_mask(legal) if mask is None else mask.copy()
        else:
            mask = action_mask(None)
        return {"observation": encode(g, self._seat[agent]), "action_mask": mask}

    def step(self, action: Any) -> None:
        """Apply ``action`` for ``agent_selection`` (illegal: ``lama_env.IllegalActionError``, the state unchanged)."""
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        self._play(agent, action if type(action) is int else as_action(action))

    def _play(self, agent: str, action: Any) -> None:
        """:meth:`step` for ``agent``, the live agent to act (the wrappers' fast path calls it directly)."""
        g = self._game
        assert g is not None  # agent_selection is set: reset() has dealt a game
        g.step(action)  # raises before changing anything
        if self._dirty:
            self._clear_rewards()
            self._dirty = False
        self._cumulative_rewards[agent] = 0
        # the fast path: the driver only when a round ended or a forced decision is to be applied
        if g.rounds_finished != self._book.rounds or (self.auto_forced and len(g.legal_actions()) == 1):
            self._settle(g)
        self.agent_selection = self._names[g.current_player]
        if self._dirty:
            self._accumulate_rewards()
        if self.render_mode == "human":
            self.render()

    def _settle(self, g: LamaGame) -> None:
        """Settle ``g``'s round ends and forced decisions (:func:`lama_env.episode.advance`): rewards, flags."""
        book = self._book
        if not advance(g, book, forced if self.auto_forced else None):
            return
        rewards = self.rewards
        for a, r in zip(self._names, book.rewards, strict=True):
            rewards[a] += r
        self._dirty = True
        if book.end == CONTINUES:
            return
        self._over = True
        if book.end == TERMINATED:
            self.terminations = dict.fromkeys(self._names, True)
        else:
            self.truncations = dict.fromkeys(self._names, True)

    def _draw(self, game: LamaGame, image: bool) -> Any:
        """The table (``image``: as a picture, else as text), the agents by their names."""
        if image:
            from .picture import picture

            return picture(game, self._names)
        return render_text(game, self._names)
