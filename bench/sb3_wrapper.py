"""PettingZoo's SB3 action-mask wrapper (the Connect Four tutorial's), as the baseline of the training benchmark.

PettingZoo's tutorial "SB3: Action Masked PPO for Connect Four"
(``tutorials/SB3/connect_four/sb3_connect_four_action_mask.py``) turns an AEC
env into a single-agent Gymnasium env for MaskablePPO: one policy plays every
seat in turn (``step`` returns the observation of the agent to act next and
the reward, termination, truncation and info of the agent that just acted),
and ``action_mask()`` reads the mask of the agent to act.  This is our own
copy of that wrapper (with ``gymnasium.Env`` as a second base class, which
Gymnasium 1.x's wrappers need), used as::

    env = SB3ActionMaskWrapper(connect_four_v3.env())
    env.reset(seed=0)                       # defines the spaces
    env = ActionMasker(env, lambda e: e.action_mask())
"""

from __future__ import annotations

from typing import Any

import gymnasium
import pettingzoo.utils


class SB3ActionMaskWrapper(pettingzoo.utils.BaseWrapper, gymnasium.Env):
    """A PettingZoo AEC env as a Gymnasium env for SB3's action masking (one policy plays every seat)."""

    def reset(self, seed: int | None = None, options: dict | None = None) -> tuple[Any, dict]:
        """Reset the AEC env; set the (shared) spaces, the action mask left out; return the first observation."""
        super().reset(seed=seed, options=options)
        first = self.possible_agents[0]
        # the AEC env's space methods (named as gymnasium.Env's space attributes, which these assignments set)
        self.observation_space = pettingzoo.utils.BaseWrapper.observation_space(self, first)["observation"]
        self.action_space = pettingzoo.utils.BaseWrapper.action_space(self, first)
        return self.observe(self.agent_selection), {}

    def step(self, action: Any) -> tuple[Any, float, bool, bool, dict]:
        """Step the agent to act; return the next agent's observation and the acting agent's outcome."""
        acting = self.agent_selection
        super().step(action)
        return (
            self.observe(self.agent_selection),
            self._cumulative_rewards[acting],
            self.terminations[acting],
            self.truncations[acting],
            self.infos[acting],
        )

    def observe(self, agent: str) -> Any:
        """The observation without the action mask."""
        return super().observe(agent)["observation"]

    def action_mask(self) -> Any:
        """The action mask of the agent to act."""
        return super().observe(self.agent_selection)["action_mask"]
