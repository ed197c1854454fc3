"""Behaviour-cloning warm start: imitate a teacher agent before PPO begins.

PPO from scratch spends most of a small CPU budget rediscovering what a good
heuristic already knows (when to quit, which cards to discard). With a
``pretrain`` section in the config, the trainer first plays ``episodes``
episodes in the *training* environment (same opponents, same reward) with the
learner's moves chosen by ``teacher`` (an agent spec such as ``optimal`` or
``lookahead``), then fits the fresh policy to those moves (masked
cross-entropy) and its value head to the returns observed (mean squared
error). PPO then improves on the teacher from there. Nothing of the teacher
is kept in the checkpoint: the result is an ordinary MaskablePPO policy.

The steps are logged to TensorBoard under ``pretrain/`` (teacher agreement
and losses).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TextIO

import numpy as np
import torch
from torch.nn import functional as F

from lama_dice.agents.registry import make_agent


@dataclass
class TeacherData:
    """Learner decisions played by the teacher: observations, masks, actions and returns-to-go."""

    obs: np.ndarray
    masks: np.ndarray
    actions: np.ndarray
    returns: np.ndarray
    episodes: int


def collect(make_env: Callable[[], Any], teacher_spec: str, episodes: int, gamma: float, seed: int) -> TeacherData:
    """Play ``episodes`` episodes of the training env with the teacher choosing the learner's moves."""
    env = make_env()
    teacher = make_agent(teacher_spec, seed=seed)
    obs_l: list[Any] = []
    mask_l: list[Any] = []
    act_l: list[int] = []
    ret_l: list[float] = []
    obs, info = env.reset(seed=seed)
    for _ in range(episodes):
        rewards: list[float] = []
        while True:
            game = env.unwrapped.game
            action = teacher.act(game, game.legal_actions())
            obs_l.append(obs)
            mask_l.append(info["action_mask"])
            act_l.append(action)
            obs, reward, terminated, truncated, info = env.step(action)
            rewards.append(float(reward))
            if terminated or truncated:
                break
        g = 0.0
        returns = []
        for r in reversed(rewards):
            g = r + gamma * g
            returns.append(g)
        ret_l.extend(reversed(returns))
        obs, info = env.reset()
    env.close()
    return TeacherData(np.asarray(obs_l, dtype=np.float32), np.asarray(mask_l, dtype=bool),
                       np.asarray(act_l, dtype=np.int64), np.asarray(ret_l, dtype=np.float32), episodes)


def fit(model: Any, data: TeacherData, *, epochs: int, batch_size: int, learning_rate: float,
        value_coef: float, seed: int, out: TextIO | None = None) -> dict[str, float]:
    """Fit ``model.policy`` to the teacher's actions and returns; log to the model's logger."""
    policy = model.policy
    policy.set_training_mode(True)
    device = policy.device
    obs = torch.as_tensor(data.obs, device=device)
    masks = data.masks
    actions = torch.as_tensor(data.actions, device=device)
    returns = torch.as_tensor(data.returns, device=device)
    opt = torch.optim.Adam(policy.parameters(), lr=learning_rate)
    rng = np.random.default_rng(seed)
    n = len(data.actions)
    stats: dict[str, float] = {}
    for epoch in range(epochs):
        order = rng.permutation(n)
        tot_pl = tot_vl = 0.0
        for start in range(0, n, batch_size):
            idx = order[start:start + batch_size]
            dist = policy.get_distribution(obs[idx], action_masks=masks[idx])
            policy_loss = -dist.log_prob(actions[idx]).mean()
            value_loss = F.mse_loss(policy.predict_values(obs[idx]).flatten(), returns[idx])
            loss = policy_loss + value_coef * value_loss
            opt.zero_grad()
            loss.backward()
            opt.step()
            tot_pl += policy_loss.item() * len(idx)
            tot_vl += value_loss.item() * len(idx)
        with torch.no_grad():
            dist = policy.get_distribution(obs, action_masks=masks)
            agree = float((dist.distribution.probs.argmax(dim=1) == actions).float().mean())
        stats = {"policy_loss": tot_pl / n, "value_loss": tot_vl / n, "teacher_agreement": agree}
        for k, v in stats.items():
            model.logger.record(f"pretrain/{k}", v)
        model.logger.dump(step=epoch)
    policy.set_training_mode(False)
    if out is not None:
        print(f"warm start: {n:,} teacher decisions from {data.episodes:,} episodes, {epochs} epochs; "
              f"agreement with the teacher {stats['teacher_agreement']:.1%}", file=out)
    return stats
