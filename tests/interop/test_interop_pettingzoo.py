"""PettingZoo's own tools on ``lama_dice_v1``: the registry (``pettingzoo.make``, 1.27+) and ``save_observation``.

``pettingzoo.make("aec", "lama_dice_v1", ...)`` builds the same env as
``lama_dice_v1.env(...)`` once ``lama_env`` is imported (``classic/connect_four_v3`` is
the control). ``save_observation`` / ``test_save_obs`` write an observation as an image;
they apply to image observations (a ``Box`` in 0..255) only: neither lama_dice_v1 nor the
classic board games have one, so the helper refuses both alike, and ``test_save_obs``
reports it without failing.
"""

from __future__ import annotations

import numpy as np
import pytest

pettingzoo = pytest.importorskip("pettingzoo")
if not hasattr(pettingzoo, "make"):
    pytest.skip(f"PettingZoo {pettingzoo.__version__} has no registry (pettingzoo.make is 1.27+)",
                allow_module_level=True)

import lama_env  # noqa: E402, F401  (registers lama_dice_v1 with PettingZoo's registry)
from lama_env import lama_dice_v1  # noqa: E402


def _random_game(env, seed: int = 0) -> dict[str, float]:
    rng = np.random.default_rng(seed)
    env.reset(seed=seed)
    totals = dict.fromkeys(env.possible_agents, 0.0)
    for agent in env.agent_iter():
        obs, reward, terminated, truncated, _info = env.last()
        totals[agent] += reward
        env.step(None if terminated or truncated else int(rng.choice(np.flatnonzero(obs["action_mask"]))))
    return totals


@pytest.mark.parametrize("env_id", ["lama_dice_v1", "lama_dice-v1"])  # PettingZoo keeps ids as name-vN
def test_pettingzoo_make_builds_the_aec_env(env_id):
    env = pettingzoo.make("aec", env_id, num_players=3)
    assert isinstance(env, pettingzoo.AECEnv)
    assert type(env.unwrapped) is lama_dice_v1.raw_env
    assert env.possible_agents == ["player_0", "player_1", "player_2"]
    totals = _random_game(env)
    assert abs(sum(totals.values())) < 1e-9  # zero-sum "win" rewards, no illegal move
    env.close()


def test_registry_env_matches_the_module_env():
    a = pettingzoo.make("aec", "lama_dice_v1", num_players=2)
    b = lama_dice_v1.env(num_players=2)
    assert str(a) == str(b) == "lama_dice_v1"
    assert _random_game(a, seed=5) == _random_game(b, seed=5)  # same seed, same game


def test_registry_spec_and_listing():
    spec = pettingzoo.env_registry.registration.spec("aec", "lama_dice_v1")
    assert spec.name == "lama_dice" and spec.version == 1
    assert "lama_dice-v1" in pettingzoo.aec_registry


def test_control_pettingzoo_make_connect_four():
    pytest.importorskip("pygame", reason="connect_four_v3 imports pygame (the bench extra)")
    env = pettingzoo.make("aec", "classic/connect_four_v3")
    assert str(env) == "connect_four_v3"
    _random_game(env)
    env.close()


def _save_obs_envs():
    yield "lama_dice_v1", lambda: lama_dice_v1.env(num_players=2)

    def connect_four():
        pytest.importorskip("pygame", reason="connect_four_v3 imports pygame (the bench extra)")
        from pettingzoo.classic import connect_four_v3

        return connect_four_v3.env()

    yield "control-connect_four_v3", connect_four


@pytest.mark.parametrize("make", [m for _, m in _save_obs_envs()], ids=[n for n, _ in _save_obs_envs()])
def test_save_observation_applies_to_image_observations_only(make, tmp_path, monkeypatch, capsys):
    from pettingzoo.test import test_save_obs
    from pettingzoo.utils import save_observation

    monkeypatch.chdir(tmp_path)  # test_save_obs writes under ./saved_observations when it can
    env = make()
    env.reset(seed=0)
    with pytest.raises(AssertionError, match="Observations must be Box"):
        save_observation(env=env, agent=env.agents[0], save_dir=str(tmp_path))
    test_save_obs(env)  # PettingZoo's check: reports, does not fail
    assert "did not save the observations" in capsys.readouterr().out
    assert not (tmp_path / "saved_observations").exists()
    env.close()
