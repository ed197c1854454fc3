"""TorchRL: ``GymEnv("LamaDice-v1")`` and ``PettingZooWrapper(lama_dice_v1.env(), use_mask=True)``.

Each passes ``check_env_specs`` and a short random rollout across episode ends. With the
mask (``ActionMask`` over the Gymnasium env's ``info["action_mask"]``, ``use_mask=True``
for the PettingZoo env) every random action is legal. Classic envs (CartPole,
connect_four_v3) go through the same calls as controls.
"""

# ruff: noqa: E402  (the library's imports follow pytest.importorskip, which skips the module without it)
from __future__ import annotations

import warnings

import numpy as np
import pytest

torchrl = pytest.importorskip("torchrl", reason="TorchRL is not installed (the interop extra)")

import torch
from torchrl.data import Binary, Composite
from torchrl.envs import ActionMask, GymEnv, PettingZooWrapper, TransformedEnv
from torchrl.envs.gym_like import BaseInfoDictReader
from torchrl.envs.utils import check_env_specs

import lama_env  # noqa: F401  (registers LamaDice-v1)
from lama_env import NUM_ACTIONS, lama_dice_v1, observation_size
from lama_env.gym_env import IllegalMoveWarning

pytestmark = [
    pytest.mark.filterwarnings("error::lama_env.gym_env.IllegalMoveWarning"),
    # TorchRL names the PettingZoo version it was tested with when it is another one
    pytest.mark.filterwarnings("ignore:PettingZoo in TorchRL is tested using version:UserWarning"),
]


class MaskFromInfo(BaseInfoDictReader):
    """Puts the Gymnasium env's ``info["action_mask"]`` (int8) into the tensordict as a bool mask."""

    def __call__(self, info, tensordict):
        return tensordict.set("action_mask", torch.as_tensor(info["action_mask"], dtype=torch.bool))

    @property
    def info_spec(self):
        return Composite(action_mask=Binary(NUM_ACTIONS, dtype=torch.bool))


def test_gymenv_with_its_defaults_passes_check_env_specs():
    env = GymEnv("LamaDice-v1")
    with warnings.catch_warnings():  # unmasked one-hot random actions: an illegal one ends the episode (-1)
        warnings.simplefilter("ignore", IllegalMoveWarning)
        check_env_specs(env, seed=0)
        td = env.rollout(5)
    assert env.observation_spec["observation"].shape == (observation_size(2),)
    assert td["next", "observation"].isfinite().all()
    env.close()


def test_gymenv_masked_rollout_plays_legal_moves_across_episodes():
    base = GymEnv("LamaDice-v1", num_players=2, opponents=["random"], categorical_action_encoding=True)
    base.set_info_dict_reader(MaskFromInfo())
    env = TransformedEnv(base, ActionMask())
    check_env_specs(env, seed=0)
    env.set_seed(0)
    td = env.rollout(300, break_when_any_done=False)
    actions, masks = td["action"], td["action_mask"]
    assert masks.any(-1).all(), "the learner's mask is never empty while it acts"
    assert masks.gather(-1, actions.unsqueeze(-1)).all(), "every random action lies in its mask"
    assert td["next", "done"].sum() >= 2
    rewards = td["next", "reward"]
    assert rewards.isfinite().all() and (rewards.abs() <= 1).all()
    env.close()


def test_control_gymenv_cartpole():
    env = GymEnv("CartPole-v1")
    check_env_specs(env, seed=0)
    assert env.rollout(20)["next", "observation"].isfinite().all()
    env.close()


@pytest.mark.parametrize("num_players", [2, 3])
def test_pettingzoo_wrapper_with_mask_passes_check_env_specs_and_plays_legal_moves(num_players):
    env = PettingZooWrapper(lama_dice_v1.env(num_players=num_players), use_mask=True, categorical_actions=True)
    agents = [f"player_{i}" for i in range(num_players)]
    assert set(env.group_map) == set(agents)  # classic envs: one group per agent
    check_env_specs(env, seed=0)
    env.set_seed(0)
    td = env.rollout(300, break_when_any_done=False)
    acted = 0
    total = torch.zeros(())
    for agent in agents:
        acting = td[agent, "mask"].squeeze(-1)  # the agent whose turn it was
        mask, action = td[agent, "action_mask"].squeeze(-2), td[agent, "action"].squeeze(-1)
        assert mask[acting].any(-1).all()
        assert mask[acting].gather(-1, action[acting].unsqueeze(-1)).all(), f"{agent} played outside its mask"
        acted += int(acting.sum())
        reward = td["next", agent, "reward"]
        assert reward.isfinite().all()
        total = total + reward.sum()
    assert acted == td.shape[0]  # exactly one agent acts at each step
    assert td["next", "done"].sum() >= 2
    # "win" rewards are zero-sum over each finished game; an illegal move (-1, 0) would break that
    assert abs(float(total)) < 1e-6
    env.close()


def test_control_pettingzoo_wrapper_connect_four():
    pytest.importorskip("pygame", reason="connect_four_v3 imports pygame (the bench extra)")
    from pettingzoo.classic import connect_four_v3

    env = PettingZooWrapper(connect_four_v3.env(), use_mask=True, categorical_actions=True)
    check_env_specs(env, seed=0)
    td = env.rollout(50, break_when_any_done=False)
    for agent in ("player_0", "player_1"):
        acting = td[agent, "mask"].squeeze(-1)
        mask, action = td[agent, "action_mask"].squeeze(-2), td[agent, "action"].squeeze(-1)
        assert mask[acting].gather(-1, action[acting].unsqueeze(-1)).all()
    env.close()


def test_rollout_rewards_are_numbers():
    """The rollouts above hold tensors only: nothing of the env's infos leaks in as objects."""
    env = PettingZooWrapper(lama_dice_v1.env(), use_mask=True)
    td = env.rollout(50, break_when_any_done=False)
    for key, value in td.items(include_nested=True, leaves_only=True):
        assert isinstance(value, torch.Tensor), key
        if value.is_floating_point():
            assert not torch.isnan(value).any(), key
    assert np.isfinite(td["next", "player_0", "reward"].numpy()).all()
    env.close()
