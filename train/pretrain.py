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

With ``states: solo`` (the solo variant) the teacher plays no episodes:
:func:`collect_solo_states` takes *every* decision of the solo round (each
display at a turn, each display and matching roll at a discard), at chip
totals spread over ``0 .. end_threshold - 1`` (the observation shows the
total, and a whole solo game passes through them all), each weighted by how
often the teacher meets it (:meth:`SoloSolver.visits`) plus a uniform share,
with the exact solver values as the value head's targets.

The steps are logged to TensorBoard under ``pretrain/`` (teacher agreement
and losses).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TextIO, cast

import numpy as np
import torch
from torch.nn import functional as F

from lama_dice.agents.registry import make_agent
from lama_env.rules import RulesConfig


@dataclass
class TeacherData:
    """Learner decisions played by the teacher: observations, masks, actions and returns-to-go.

    ``weights`` (None: all equal) is how much each decision counts in the fit;
    ``episodes`` is the teacher's episodes (0 for :func:`collect_solo_states`).
    """

    obs: np.ndarray
    masks: np.ndarray
    actions: np.ndarray
    returns: np.ndarray
    episodes: int
    weights: np.ndarray | None = None

    def describe(self) -> str:
        """Where the decisions came from, for the warm-start line."""
        if self.episodes:
            return f"{len(self.actions):,} teacher decisions from {self.episodes:,} episodes"
        return f"{len(self.actions):,} solo decisions (every state of the round, at several chip totals)"


def collect_solo_states(teacher_spec: str, rules: RulesConfig, reward_scale: float, seed: int,
                        totals_per_state: int = 8, uniform: float = 0.1) -> TeacherData:
    """Every decision of the solo round, labelled by a rule-based teacher (e.g. ``optimal``).

    Args:
        teacher_spec: an agent with ``wants_quit`` and ``choose_discard`` (``optimal``,
            the heuristics).
        rules: the rules of the round.
        reward_scale: the env's ``reward_scale`` (the value targets are minus the
            exact optimal round points, scaled).
        seed: draws the chip totals.
        totals_per_state: each state appears with this many chip totals, drawn
            uniformly from ``0 .. end_threshold - 1`` (every total for the turns).
        uniform: the share of the weight spread evenly over all states; the rest
            follows how often the teacher meets each state.

    Raises:
        ValueError: the teacher is not a rule-based agent.
    """
    from lama_dice.agents.solo_exact import solo_observations
    from lama_dice.agents.solver import SoloPolicy, displays, is_solo_policy, solver_for
    from lama_env import actions as A
    from lama_env.engine import Phase

    teacher = make_agent(teacher_spec, seed=seed)
    if not is_solo_policy(teacher):
        raise ValueError(f"pretrain.teacher {teacher_spec!r} must be a rule-based agent (optimal, threshold:T, "
                         f"points:K) for pretrain.states: solo")
    policy = cast(SoloPolicy, teacher)
    solver = solver_for(rules)
    turn_visits, discard_visits = solver.visits(policy)
    rng = np.random.default_rng(seed)
    all_totals = range(rules.end_threshold)
    rows: list[tuple] = []  # (display, phase, dice, legal, action, value, visits)
    for d in displays():
        quits = policy.wants_quit(d, rules)
        rows.append((d, Phase.TURN, None, (A.ROLL, A.QUIT), A.QUIT if quits else A.ROLL, solver.value(d),
                     turn_visits.get(d, 0.0)))
        for dice, legal in solver.discard_rolls(d):
            a = policy.choose_discard(d, legal, rules)
            rows.append((d, Phase.DISCARD, dice, legal, a, solver.after_discard_value(d, a),
                         discard_visits.get((d, dice), 0.0)))
    visits = np.array([r[6] for r in rows])
    base = (1.0 - uniform) * visits / visits.sum() + uniform / len(rows)
    states_l, mask_l, act_l, ret_l, w_l = [], [], [], [], []
    for (d, phase, dice, legal, a, value, _), w in zip(rows, base, strict=True):
        totals = all_totals if phase == Phase.TURN else rng.integers(0, rules.end_threshold, totals_per_state)
        mask = A.legal_mask(legal, bool)
        for t in totals:
            states_l.append((d, int(t), phase, dice))
            mask_l.append(mask)
            act_l.append(a)
            ret_l.append(-reward_scale * value)
            w_l.append(w / len(totals))
    weights = np.asarray(w_l)
    return TeacherData(solo_observations(rules, states_l), np.asarray(mask_l, dtype=bool),
                       np.asarray(act_l, dtype=np.int64), np.asarray(ret_l, dtype=np.float32), 0,
                       weights / weights.sum())


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
    weights = data.weights
    stats: dict[str, float] = {}
    for epoch in range(epochs):
        # weighted data: each epoch draws n decisions in proportion to their weights
        order = rng.permutation(n) if weights is None else rng.choice(n, size=n, p=weights)
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
            hits = (dist.distribution.probs.argmax(dim=1) == actions).double().cpu().numpy()
            agree = float(hits.mean() if weights is None else hits @ weights)
        stats = {"policy_loss": tot_pl / n, "value_loss": tot_vl / n, "teacher_agreement": agree}
        for k, v in stats.items():
            model.logger.record(f"pretrain/{k}", v)
        model.logger.dump(step=epoch)
    policy.set_training_mode(False)
    if out is not None:
        print(f"warm start: {data.describe()}, {epochs} epochs; "
              f"agreement with the teacher {stats['teacher_agreement']:.2%}", file=out)
    return stats
