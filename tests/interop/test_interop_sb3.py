"""Stable-Baselines3 / sb3-contrib: ``make_vec_env("LamaDice-v1")`` with its defaults, and MaskablePPO on it.

Two ways to give MaskablePPO the masks: the env's own ``action_masks()`` (found through
SB3's ``env_method``, past the ``Monitor`` that ``make_vec_env`` adds) and sb3-contrib's
``ActionMasker`` wrapper. Runs are tiny (a few hundred steps); an illegal action would
raise (``IllegalMoveWarning`` is an error here).
"""

# ruff: noqa: E402  (the library's imports follow pytest.importorskip, which skips the module without it)
from __future__ import annotations

import numpy as np
import pytest

sb3_contrib = pytest.importorskip("sb3_contrib", reason="sb3-contrib is not installed")

from sb3_contrib import MaskablePPO
from sb3_contrib.common.maskable.utils import get_action_masks
from sb3_contrib.common.wrappers import ActionMasker
from stable_baselines3.common.env_util import make_vec_env

import lama_env  # noqa: F401  (registers LamaDice-v1)
from lama_env import NUM_ACTIONS, observation_size

pytestmark = pytest.mark.filterwarnings("error::lama_env.gym_env.IllegalMoveWarning")


def test_make_vec_env_with_its_defaults_steps_within_the_masks():
    vec = make_vec_env("LamaDice-v1")  # n_envs=1, DummyVecEnv, Monitor: SB3's defaults
    vec.seed(0)
    obs = vec.reset()
    assert obs.shape == (1, observation_size(2)) and obs.dtype == np.float32
    rng = np.random.default_rng(0)
    episodes = 0
    for _ in range(300):
        masks = get_action_masks(vec)  # env_method("action_masks") through the Monitor
        assert masks.shape == (1, NUM_ACTIONS) and set(np.unique(masks)) <= {0, 1} and masks.any(axis=1).all()
        obs, rewards, dones, infos = vec.step(np.array([rng.choice(np.flatnonzero(m)) for m in masks]))
        assert np.isfinite(obs).all() and np.isfinite(rewards).all()
        for done, info in zip(dones, infos, strict=True):
            assert "action_mask" in info
            if done:
                episodes += 1
                assert "episode" in info and "episode_stats" in info  # Monitor's and the env's summaries
                assert info["episode_stats"]["illegal"] == 0
    assert episodes >= 1
    vec.close()


def test_maskable_ppo_on_make_vec_env_uses_the_envs_action_masks():
    vec = make_vec_env("LamaDice-v1", n_envs=2, seed=0, env_kwargs={"num_players": 2, "opponents": ["random"]})
    model = MaskablePPO("MlpPolicy", vec, n_steps=64, batch_size=64, n_epochs=2, seed=0)
    model.learn(256)
    assert model.num_timesteps >= 256
    obs = vec.reset()
    for _ in range(50):
        masks = get_action_masks(vec)
        actions, _ = model.predict(obs, action_masks=masks, deterministic=True)
        assert all(m[a] for m, a in zip(masks, actions, strict=True))
        obs, _rewards, _dones, _infos = vec.step(actions)
    vec.close()


def test_maskable_ppo_with_action_masker():
    vec = make_vec_env("LamaDice-v1", n_envs=2, seed=1, wrapper_class=ActionMasker,
                       wrapper_kwargs={"action_mask_fn": lambda env: env.unwrapped.action_masks()})
    model = MaskablePPO("MlpPolicy", vec, n_steps=64, batch_size=64, n_epochs=1, seed=1)
    model.learn(256)
    assert model.num_timesteps >= 256
    vec.close()


def test_control_make_vec_env_cartpole():
    """The same call on a classic Gymnasium env (the library call itself works here)."""
    vec = make_vec_env("CartPole-v1")
    assert vec.reset().shape == (1, 4)
    _obs, rewards, _dones, infos = vec.step(np.array([vec.action_space.sample()]))
    assert rewards.shape == (1,) and len(infos) == 1
    vec.close()
