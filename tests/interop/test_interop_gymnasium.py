"""Gymnasium's wrappers and vector envs on ``LamaDice-v1``: ``RecordVideo`` (``render_mode="rgb_array"``), ``make_vec``.

``RecordVideo`` writes its video with moviepy (the interop extra; moviepy brings the
ffmpeg binary through imageio-ffmpeg). CartPole goes through the same wrapper as the
control (it draws with pygame, the bench extra).
"""

from __future__ import annotations

import importlib.util

import gymnasium
import numpy as np
import pytest
from gymnasium.vector import AutoresetMode

import lama_env  # noqa: F401  (registers LamaDice-v1)
from lama_env import NUM_ACTIONS, observation_size

needs_moviepy = pytest.mark.skipif(importlib.util.find_spec("moviepy") is None,
                                   reason="moviepy is not installed (RecordVideo needs it: the interop extra)")


def _record(env: gymnasium.Env, folder, pick) -> int:
    from gymnasium.wrappers import RecordVideo

    env = RecordVideo(env, str(folder), episode_trigger=lambda episode: True, disable_logger=True)
    _obs, info = env.reset(seed=0)
    steps = 0
    while True:
        _obs, _reward, terminated, truncated, info = env.step(pick(env, info))
        steps += 1
        if terminated or truncated or steps >= 200:
            break
    env.close()
    return steps


@needs_moviepy
@pytest.mark.filterwarnings("error::lama_env.gym_env.IllegalMoveWarning")
@pytest.mark.parametrize("num_players", [2, 4])
def test_record_video_writes_a_video_of_lama_dice(tmp_path, num_players):
    env = gymnasium.make("LamaDice-v1", render_mode="rgb_array", num_players=num_players, opponents=["random"])
    rng = np.random.default_rng(0)
    steps = _record(env, tmp_path / "videos",
                    lambda env, info: int(rng.choice(np.flatnonzero(info["action_mask"]))))
    videos = sorted((tmp_path / "videos").glob("*.mp4"))
    assert steps >= 1 and [v.name for v in videos] == ["rl-video-episode-0.mp4"]
    assert videos[0].stat().st_size > 1000


def test_rgb_array_frames_are_what_record_video_expects():
    env = gymnasium.make("LamaDice-v1", render_mode="rgb_array", num_players=2, opponents=["random"])
    assert "rgb_array" in env.metadata["render_modes"] and env.metadata.get("render_fps")
    env.reset(seed=0)
    frame = env.render()
    assert isinstance(frame, np.ndarray) and frame.dtype == np.uint8 and frame.ndim == 3 and frame.shape[2] == 3
    env.close()


@needs_moviepy
def test_control_record_video_cartpole(tmp_path):
    pytest.importorskip("pygame", reason="CartPole draws with pygame (the bench extra)")
    env = gymnasium.make("CartPole-v1", render_mode="rgb_array")
    _record(env, tmp_path / "videos", lambda env, info: env.action_space.sample())
    assert [v.name for v in (tmp_path / "videos").glob("*.mp4")] == ["rl-video-episode-0.mp4"]


@pytest.mark.filterwarnings("error::lama_env.gym_env.IllegalMoveWarning")
@pytest.mark.parametrize("mode", ["sync", "async"])
def test_make_vec_stacks_masks_and_numeric_infos(mode):
    """``gymnasium.make_vec``, the entry of CleanRL-style loops: masks and numeric infos stack into arrays."""
    envs = gymnasium.make_vec("LamaDice-v1", num_envs=2, vectorization_mode=mode,
                              vector_kwargs={"autoreset_mode": AutoresetMode.SAME_STEP})
    obs, info = envs.reset(seed=0)
    assert obs.shape == (2, observation_size(2))
    rng = np.random.default_rng(0)
    ended = 0
    for _ in range(200):
        mask = info["action_mask"]
        assert mask.shape == (2, NUM_ACTIONS) and mask.any(axis=1).all()  # SAME_STEP: a new episode's mask at once
        obs, reward, terminated, truncated, info = envs.step(np.array([rng.choice(np.flatnonzero(m)) for m in mask]))
        assert np.isfinite(obs).all() and np.isfinite(reward).all()
        done = terminated | truncated
        if done.any():
            ended += int(done.sum())
            final = info["final_info"]
            stats = final["episode_stats"]
            for key in ("win", "rounds", "final_points", "illegal"):
                assert isinstance(stats[key], np.ndarray) and stats[key].dtype.kind in "biuf", key
            assert (stats["illegal"][done] == 0).all()
    assert ended >= 2
    envs.close()
