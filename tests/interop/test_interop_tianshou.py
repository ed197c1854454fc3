"""Tianshou 2.x: PettingZooEnv(lama_dice_v1.env()), masked random collectors and DQN as in its tic-tac-toe tutorial.

Tianshou's ``PettingZooEnv`` turns the AEC env's ``{"observation", "action_mask"}`` into
``{"agent_id", "obs", "mask"}``; the random algorithm and DQN's Q-values both respect
``mask``. The buffer must hold no NaN and only legal actions; a few DQN updates (the
tutorial's ``MultiAgentOffPolicyAlgorithm`` and off-policy trainer, tiny) must change the
network and give a finite loss. PettingZoo's ``tictactoe_v3`` goes through the same code as
the control.
"""

# ruff: noqa: E402  (the library's imports follow pytest.importorskip, which skips the module without it)
from __future__ import annotations

import numpy as np
import pytest

tianshou = pytest.importorskip("tianshou", reason="Tianshou is not installed (the interop extra)")

import torch
from tianshou.algorithm import DQN, MARLRandomDiscreteMaskedOffPolicyAlgorithm, MultiAgentOffPolicyAlgorithm
from tianshou.algorithm.modelfree.dqn import DiscreteQLearningPolicy
from tianshou.algorithm.optim import AdamOptimizerFactory
from tianshou.data import Batch, Collector, CollectStats, VectorReplayBuffer
from tianshou.env import DummyVectorEnv, PettingZooEnv
from tianshou.trainer import OffPolicyTrainerParams
from tianshou.utils.net.common import Net
from tianshou.utils.torch_utils import policy_within_training_step

from lama_env import NUM_ACTIONS, lama_dice_v1, observation_size


def lama_env(num_players: int = 2) -> PettingZooEnv:
    return PettingZooEnv(lama_dice_v1.env(num_players=num_players))


def tictactoe_env() -> PettingZooEnv:
    from pettingzoo.classic import tictactoe_v3

    return PettingZooEnv(tictactoe_v3.env())


ENVS = {"lama_dice_v1": lama_env, "lama_dice_v1-3p": lambda: lama_env(3), "control-tictactoe_v3": tictactoe_env}


def leaves(batch: Batch, prefix: str = ""):
    """(key, array) for every array leaf of a (nested) Batch."""
    for key, value in batch.items():
        if isinstance(value, Batch):
            yield from leaves(value, f"{prefix}{key}.")
        else:
            yield f"{prefix}{key}", np.asarray(value)


def stored(buffer: VectorReplayBuffer) -> Batch:
    """Every transition the (vector) buffer holds, in each sub-buffer's order."""
    return buffer[buffer.sample_indices(0)]


def assert_clean_and_legal(data: Batch, n_actions: int) -> None:
    for key, value in leaves(data):
        if value.dtype.kind in "fc":
            assert not np.isnan(value).any(), f"NaN in buffer field {key}"
        # Python objects only where Tianshou puts the agent's name (obs.agent_id, the same for tictactoe_v3)
        assert value.dtype != object or key.endswith("agent_id"), f"buffer field {key} holds Python objects"
    mask = np.asarray(data.obs.mask, dtype=bool)
    act = np.asarray(data.act)
    assert mask.shape == (len(data), n_actions) and mask.any(axis=1).all()
    assert mask[np.arange(len(data)), act].all(), "an action outside the mask was played"


@pytest.mark.parametrize("name", list(ENVS))
def test_masked_random_collector_fills_a_clean_buffer(name):
    if name.startswith("control"):
        pytest.importorskip("pygame", reason="tictactoe_v3 imports pygame (the bench extra)")
    make = ENVS[name]
    env = make()
    algorithms = [MARLRandomDiscreteMaskedOffPolicyAlgorithm(action_space=env.action_space) for _ in env.agents]
    marl = MultiAgentOffPolicyAlgorithm(algorithms=algorithms, env=env)
    envs = DummyVectorEnv([make for _ in range(2)])
    envs.seed(0)
    buffer = VectorReplayBuffer(2000, len(envs))
    collector = Collector[CollectStats](marl, envs, buffer, exploration_noise=True)
    collector.reset()
    stats = collector.collect(n_step=400)
    assert stats.n_collected_steps >= 400 and stats.n_collected_episodes >= 2
    data = stored(buffer)
    assert len(data) == len(buffer) >= 400
    assert_clean_and_legal(data, env.action_space.n)
    rewards = np.asarray(data.rew)
    assert rewards.shape == (len(data), len(env.agents))
    if name.startswith("lama"):
        assert data.obs.obs.shape[1:] == (observation_size(len(env.agents)),)
        assert env.action_space.n == NUM_ACTIONS
        assert np.allclose(rewards.sum(axis=1), 0), "win rewards are zero-sum; an illegal move would break that"
    envs.close()


def _dqn(env: PettingZooEnv) -> tuple[DQN, Net]:
    torch.manual_seed(0)
    net = Net(state_shape=env.observation_space["observation"].shape, action_shape=env.action_space.n,
              hidden_sizes=[64, 64])
    policy = DiscreteQLearningPolicy(model=net, action_space=env.action_space, eps_training=0.1, eps_inference=0.05)
    return DQN(policy=policy, optim=AdamOptimizerFactory(lr=1e-3), gamma=0.9, n_step_return_horizon=3,
               target_update_freq=20), net


def test_dqn_updates_against_a_masked_random_opponent():
    env = lama_env()
    dqn, net = _dqn(env)
    opponent = MARLRandomDiscreteMaskedOffPolicyAlgorithm(action_space=env.action_space)
    marl = MultiAgentOffPolicyAlgorithm(algorithms=[opponent, dqn], env=env)  # player_1 learns
    envs = DummyVectorEnv([lama_env for _ in range(2)])
    envs.seed(1)
    collector = Collector[CollectStats](marl, envs, VectorReplayBuffer(2000, len(envs)), exploration_noise=True)
    collector.reset()
    collector.collect(n_step=256)
    assert_clean_and_legal(stored(collector.buffer), NUM_ACTIONS)  # DQN's epsilon-greedy acts within the mask too
    before = [p.detach().clone() for p in net.parameters()]
    with policy_within_training_step(marl.policy):
        for _ in range(5):
            stats = marl.update(buffer=collector.buffer, sample_size=32)
    loss = stats._agent_id_to_stats["player_1"].loss
    assert np.isfinite(loss)
    assert any(not torch.equal(a, b) for a, b in zip(before, net.parameters(), strict=True))
    envs.close()


def test_off_policy_trainer_as_in_the_tic_tac_toe_tutorial():
    env = lama_env()
    dqn, net = _dqn(env)
    opponent = MARLRandomDiscreteMaskedOffPolicyAlgorithm(action_space=env.action_space)
    marl = MultiAgentOffPolicyAlgorithm(algorithms=[opponent, dqn], env=env)
    train_envs = DummyVectorEnv([lama_env for _ in range(2)])
    test_envs = DummyVectorEnv([lama_env for _ in range(2)])
    train_envs.seed(2)
    test_envs.seed(3)
    train_collector = Collector[CollectStats](marl, train_envs, VectorReplayBuffer(2000, len(train_envs)),
                                              exploration_noise=True)
    test_collector = Collector[CollectStats](marl, test_envs, exploration_noise=True)
    train_collector.reset()
    train_collector.collect(n_step=64)
    before = [p.detach().clone() for p in net.parameters()]
    result = marl.run_training(OffPolicyTrainerParams(
        training_collector=train_collector, test_collector=test_collector, max_epochs=1, epoch_num_steps=100,
        collection_step_num_env_steps=10, test_step_num_episodes=2, batch_size=32,
        update_step_num_gradient_steps_per_sample=0.1, test_in_training=False, verbose=False, show_progress=False,
        multi_agent_return_reduction=lambda rews: rews[:, 1],  # the learner's (player_1's) return
    ))
    assert result.update_step >= 5 and np.isfinite(result.best_reward)
    assert any(not torch.equal(a, b) for a, b in zip(before, net.parameters(), strict=True))
    assert_clean_and_legal(stored(train_collector.buffer), NUM_ACTIONS)
    train_envs.close()
    test_envs.close()
