"""The Gymnasium environment LamaDice-v1."""

from __future__ import annotations

import warnings

import gymnasium
import numpy as np
import pytest

import lama_env
from lama_dice.agents.base import Policy, RandomPolicy
from lama_dice.agents.registry import AgentSpecError
from lama_env import IllegalActionError
from lama_env.actions import QUIT, ROLL
from lama_env.gym_env import IllegalMoveWarning, LamaDiceEnv, LamaEnvError
from lama_env.observation import encode, observation_size
from lama_env.rules import win_rewards, winners


def run_episode(env, seed=None, rng=None, options=None, check=None):
    """Masked random play; returns (rewards, last info)."""
    rng = rng or np.random.default_rng(seed)
    obs, info = env.reset(seed=seed, options=options)
    rewards = []
    while True:
        mask = info["action_mask"]
        assert mask.any() and np.array_equal(mask, env.unwrapped.action_masks())
        assert env.observation_space.contains(obs)
        if check:
            check(env, obs, info)
        obs, reward, terminated, truncated, info = env.step(int(rng.choice(np.flatnonzero(mask))))
        rewards.append(reward)
        if terminated or truncated:
            assert env.observation_space.contains(obs)
            return rewards, info


class Recorder(Policy):
    """Plays the first legal action and checks it is asked only for its own seats."""

    spec = "recorder"

    def __init__(self):
        super().__init__()
        self.calls = 0

    def act(self, game, legal):
        assert tuple(legal) == game.legal_actions() and legal
        self.calls += 1
        return legal[-1]


def test_registered_and_make():
    env = gymnasium.make("LamaDice-v1", num_players=3, opponents=["random"])
    obs, _info = env.reset(seed=0)
    assert obs.shape == (observation_size(3),) and obs.dtype == np.float32
    assert isinstance(env.unwrapped, LamaDiceEnv)
    assert "LamaDice-v1" in gymnasium.registry
    import importlib

    importlib.reload(lama_env)  # registering twice is harmless


#: The configurations docs/environments.md says pass Gymnasium's and SB3's check_env.
CHECKED_CONFIGS = [
    {"num_players": 3},
    {"num_players": 1},
    {"num_players": 6, "reward": "points"},
    {"episode": "round"},
    {"auto_forced": True, "reward": "points"},
    {"max_rounds": 2},
]


@pytest.mark.parametrize("kwargs", CHECKED_CONFIGS, ids=lambda kw: ",".join(f"{k}={v}" for k, v in kw.items()))
def test_gymnasium_check_env(kwargs):
    from gymnasium.utils.env_checker import check_env

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", IllegalMoveWarning)
        check_env(gymnasium.make("LamaDice-v1", **kwargs).unwrapped)


def test_gymnasium_check_env_with_max_rounds_1_fails_as_the_docs_say():
    """One quit can end the only round: truncated after one step, which the checker's determinism check refuses."""
    from gymnasium.utils.env_checker import check_env

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", IllegalMoveWarning)
        with pytest.raises(AssertionError, match="truncates after 1 step"):
            check_env(gymnasium.make("LamaDice-v1", max_rounds=1).unwrapped)
        check_env(gymnasium.make("LamaDice-v1", episode="round").unwrapped)  # the one-round episode that passes


@pytest.mark.parametrize("kwargs", CHECKED_CONFIGS[:4], ids=lambda kw: ",".join(f"{k}={v}" for k, v in kw.items()))
def test_sb3_check_env(kwargs):
    from stable_baselines3.common.env_checker import check_env

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", IllegalMoveWarning)
        check_env(LamaDiceEnv(**kwargs), warn=True)


def test_the_logger_call_the_docs_name_silences_the_illegal_move_warning(monkeypatch):
    """Gymnasium 1.x has no logger.set_level: docs and docstring name ``logger.min_level = logger.ERROR``."""
    import lama_env.gym_env as G

    assert not hasattr(gymnasium.logger, "set_level")
    for text in (G.__doc__ or "", open("docs/environments.md", encoding="utf-8").read()):
        assert "set_level(" not in text.replace("has no `set_level`", "").replace("has no ``set_level``", "")
        assert "gymnasium.logger.min_level = gymnasium.logger.ERROR" in text
    env = LamaDiceEnv(num_players=2, learner_seat=0)
    env.reset(seed=0)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        env.step(128)
    assert any(issubclass(w.category, IllegalMoveWarning) for w in caught)
    monkeypatch.setattr(gymnasium.logger, "min_level", gymnasium.logger.ERROR)
    env.reset(seed=0)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        env.step(128)
    assert not any(issubclass(w.category, IllegalMoveWarning) for w in caught)


def test_the_default_illegal_reward_is_a_loss_and_a_lower_one_is_worse():
    """docs/environments.md (learners without masks): -1 is exactly a two-player loss; -2 is below every game."""
    warnings.simplefilter("ignore", IllegalMoveWarning)
    env = LamaDiceEnv(num_players=2, learner_seat=0)
    env.reset(seed=0)
    assert env.step(128)[1] == -1.0 == min(win_rewards([20, 45]))  # a two-player loss
    env = LamaDiceEnv(num_players=2, learner_seat=0, illegal_reward=-2.0)
    env.reset(seed=0)
    _, reward, terminated, truncated, info = env.step(128)
    assert reward == -2.0 and terminated and not truncated and info["illegal_action"]


@pytest.mark.parametrize("n", range(1, 7))
def test_masked_random_play(n):
    if n == 1:
        with pytest.warns(UserWarning, match="solo"):
            env = LamaDiceEnv(num_players=n, end_threshold=30)
    else:
        env = LamaDiceEnv(num_players=n, end_threshold=30)

    def check(env, obs, info):
        g = env.game
        assert g.current_player == env.learner_seat
        np.testing.assert_array_equal(obs, encode(g, env.learner_seat))
        assert sorted(np.flatnonzero(info["action_mask"]).tolist()) == list(g.legal_actions())

    for seed in range(3):
        rewards, info = run_episode(env, seed, check=check)
        g = env.game
        st = info["episode_stats"]
        assert g.game_over
        assert set(st) >= {"win", "rounds", "points_per_round", "final_points", "busts", "quits", "went_out"}
        won = winners(g.totals)
        assert st["win"] == (1 / len(won) if env.learner_seat in won else 0)
        assert st["rounds"] == g.round_index + 1
        assert st["final_points"] == g.totals[env.learner_seat]
        results = g.result()["rounds"]
        assert st["points_per_round"] == pytest.approx(
            np.mean([r["points"][env.learner_seat] for r in results]))
        assert st["went_out"] == sum(r["went_out"] == env.learner_seat for r in results)
        assert st["busts"] <= sum(r["ended_by"] == "bust" for r in results)
        assert all(r == 0 for r in rewards[:-1])
        if n == 1:
            assert rewards[-1] == 0
        elif len(won) == n:
            assert rewards[-1] == 0
        elif env.learner_seat in won:
            assert rewards[-1] == pytest.approx(1 / len(won))
        else:
            assert rewards[-1] == pytest.approx(-1 / (n - len(won)))
        assert not env.action_masks().any()


def test_points_reward_and_quit_count():
    env = LamaDiceEnv(num_players=3, reward="points")
    quits = 0
    rng = np.random.default_rng(5)
    _obs, info = env.reset(seed=5)
    total = 0.0
    while True:
        a = int(rng.choice(np.flatnonzero(info["action_mask"])))
        quits += a == QUIT
        _obs, r, term, trunc, info = env.step(a)
        total += r
        if term or trunc:
            break
    st = info["episode_stats"]
    assert total == -env.game.totals[env.learner_seat] == -st["final_points"]
    assert st["quits"] == quits


def test_determinism_and_seat_rotation():
    def trace(env, seed):
        out = []
        run_episode(env, seed, check=lambda e, o, i: out.append(o.tobytes()))
        return env.learner_seat, out

    a, b = LamaDiceEnv(num_players=4), LamaDiceEnv(num_players=4)
    assert trace(a, 11) == trace(b, 11)
    env = LamaDiceEnv(num_players=4, episode="round")
    env.reset(seed=3)
    seats = [env.learner_seat]
    for _ in range(3):
        env.reset()
        seats.append(env.learner_seat)
    assert sorted(seats) == [0, 1, 2, 3]
    assert [(s - seats[0]) % 4 for s in seats] == [0, 1, 2, 3]
    env.reset(seed=3)
    assert env.learner_seat == seats[0]
    fixed = LamaDiceEnv(num_players=4, learner_seat=2, episode="round")
    assert {fixed.reset(seed=s)[1]["learner_seat"] for s in range(5)} == {2}
    assert env.reset(options={"learner_seat": 1})[1]["learner_seat"] == 1


def test_opponents_specs_and_policies():
    rec = Recorder()
    env = LamaDiceEnv(num_players=3, opponents=[rec], episode="round")
    run_episode(env, 0)
    assert rec.calls > 0
    env = LamaDiceEnv(num_players=3, opponents=["random", rec], learner_seat=0, episode="round")
    assert isinstance(env.opponents[0], RandomPolicy) and env.opponents[1] is rec
    env.reset(seed=0)
    assert env._policies[2] is rec  # the second opponent sits two seats after the learner
    with pytest.raises(LamaEnvError, match="1 or 2"):
        LamaDiceEnv(num_players=3, opponents=["random"] * 3)
    with pytest.raises(AgentSpecError, match="unknown agent spec 'no-such-agent'"):
        LamaDiceEnv(num_players=2, opponents=["no-such-agent"])
    with pytest.raises(LamaEnvError, match=r"an opponent must be an agent spec or a policy object .*, got 3"):
        LamaDiceEnv(num_players=2, opponents=[3])
    assert LamaDiceEnv(num_players=1, reward="points").opponents == []


def test_illegal_action_lose_and_raise():
    env = LamaDiceEnv(num_players=2)
    _obs, info = env.reset(seed=0)
    bad = int(np.flatnonzero(info["action_mask"] == 0)[0])
    g = env.game
    before = g.result(), g.displays, g.phase
    with pytest.warns(IllegalMoveWarning, match="illegal action"):
        _obs, r, term, trunc, info = env.step(bad)
    assert (r, term, trunc, info["illegal_action"]) == (-1.0, True, False, True)
    assert info["episode_stats"]["win"] == 0 and info["episode_stats"]["illegal"] == 1
    assert (g.result(), g.displays, g.phase) == before
    with pytest.raises(LamaEnvError, match="reset"):
        env.step(ROLL)

    env = LamaDiceEnv(num_players=2, illegal="raise")
    _obs, info = env.reset(seed=0)
    with pytest.raises(IllegalActionError, match="illegal action"):
        env.step(bad)
    env.step(ROLL)  # the episode goes on


def test_episode_round_and_auto_forced():
    env = LamaDiceEnv(num_players=2, episode="round", auto_forced=True)
    forced = 0

    def check(env, obs, info):
        nonlocal forced
        forced += info["action_mask"].sum() == 1

    for seed in range(8):
        _, info = run_episode(env, seed, check=check)
        assert info["episode_stats"]["rounds"] == 1 and env.game.round_index == 0
    assert forced == 0


def test_max_rounds_truncates():
    env = LamaDiceEnv(num_players=2, max_rounds=2, end_threshold=1000)
    rng = np.random.default_rng(0)
    _obs, info = env.reset(seed=0)
    while True:
        _obs, _r, term, trunc, info = env.step(int(rng.choice(np.flatnonzero(info["action_mask"]))))
        if term or trunc:
            break
    assert trunc and not term and info["episode_stats"]["rounds"] == 2


@pytest.mark.parametrize("kwargs, words", [
    ({"num_players": 0}, r"^num_players must be an integer 1\.\.6, got 0$"),
    ({"episode": "set"}, r"^episode must be one of 'game', 'round', got 'set'$"),
    ({"reward": "money"}, r"^reward must be one of 'win', 'points', got 'money'$"),
    ({"illegal": "ignore"}, r"^illegal must be one of 'lose', 'raise', got 'ignore'$"),
    ({"learner_seat": 2}, r"^learner_seat must be None or an integer 0\.\.1, got 2$"),
    ({"render_mode": "rgb"}, r"^render_mode must be one of 'human', 'ansi', 'rgb_array', got 'rgb'$"),
    ({"max_rounds": 0}, r"^max_rounds must be a positive integer or None, got 0$"),
])
def test_bad_options(kwargs, words):
    with pytest.raises(LamaEnvError, match=words):
        LamaDiceEnv(**kwargs)


def test_bad_rules_keywords():
    with pytest.raises(lama_env.RulesError, match=r"^end_threshold must be at least 1, got 0$"):
        LamaDiceEnv(end_threshold=0)
    with pytest.raises(lama_env.RulesError, match=r"^rules must be a RulesConfig or a mapping of rules fields"):
        LamaDiceEnv(rules=3)


def test_render():
    env = LamaDiceEnv(num_players=3, render_mode="ansi", opponents=["random"])
    env.reset(seed=1)
    text = env.render()
    assert "learner*" in text and "llama row" in text


def test_vec_envs_and_maskable_ppo():
    from sb3_contrib import MaskablePPO
    from sb3_contrib.common.maskable.utils import get_action_masks
    from stable_baselines3.common.vec_env import DummyVecEnv, SubprocVecEnv

    fns = [lambda: gymnasium.make("LamaDice-v1", num_players=2, episode="round") for _ in range(2)]
    for vec in (DummyVecEnv(fns), SubprocVecEnv(fns, start_method="fork")):
        vec.seed(0)
        obs = vec.reset()
        assert obs.shape == (2, observation_size(2))
        rng = np.random.default_rng(0)
        for _ in range(30):
            masks = get_action_masks(vec)
            assert masks.shape == (2, 129) and masks.any(axis=1).all()
            obs, _rewards, dones, infos = vec.step(np.array([rng.choice(np.flatnonzero(m)) for m in masks]))
            for done, info in zip(dones, infos, strict=True):
                assert not done or "episode_stats" in info
        vec.close()
    model = MaskablePPO("MlpPolicy", DummyVecEnv(fns), n_steps=32, batch_size=32, n_epochs=1, seed=0)
    model.learn(64)


def test_opponents_resolve_through_the_entry_point_and_objects_pass_through():
    """The env imports no agents: spec strings go through lama_env.opponents, objects are seated as given."""
    from lama_env.opponents import PolicyLike, resolve

    class First:  # no base class: just the protocol
        spec = "first"

        def act(self, game, legal):
            return legal[0]

        def seed(self, seed):
            pass

    assert isinstance(First(), PolicyLike) and resolve("threshold:0.2").spec == "threshold:0.2"
    env = gymnasium.make("LamaDice-v1", opponents=[First()], num_players=2)
    env.reset(seed=0)
    assert isinstance(env.unwrapped.opponents[0], First)
    with pytest.raises(LamaEnvError, match="an opponent must be an agent spec or a policy object"):
        gymnasium.make("LamaDice-v1", opponents=[object()], num_players=2)


def test_no_resolver_is_one_clear_error(monkeypatch):
    from lama_env import opponents

    monkeypatch.setattr(opponents, "_resolvers", [])
    monkeypatch.setattr(opponents, "_entry_points_loaded", True)  # as if lama-dice's agents were not installed
    with pytest.raises(opponents.NoResolverError, match="no resolver of agent specs is installed"):
        gymnasium.make("LamaDice-v1", opponents=["random"], num_players=2)
    opponents.register_resolver(lambda spec: opponents_first())
    env = gymnasium.make("LamaDice-v1", opponents=["anything"], num_players=2)
    assert env.unwrapped.opponents[0].spec == "first"


def opponents_first():
    from lama_dice.agents.base import Policy

    class First(Policy):
        spec = "first"

        def act(self, game, legal):
            return legal[0]

    return First()


@pytest.mark.parametrize("opponents", [["random"], "random", ["random", "random"]])
def test_solo_refuses_opponents_as_any_table_refuses_a_wrong_count(opponents):
    """One player has no opponent seat: an opponent given is refused (as 3 specs for 3 players are), not dropped."""
    from lama_env.options import LamaEnvError
    from lama_env.vector_env import LamaDiceVectorEnv

    for make in (lambda: LamaDiceEnv(num_players=1, reward="points", opponents=opponents),
                 lambda: LamaDiceVectorEnv(num_envs=2, num_players=1, reward="points", opponents=opponents)):
        with pytest.raises(LamaEnvError, match=r"^opponents must be empty \(or None\) for 1 player"):
            make()
    assert LamaDiceEnv(num_players=1, reward="points", opponents=[]).opponents == []
    with pytest.raises(LamaEnvError, match="opponents must list 1 or 2 agents for 3 players, got 3"):
        LamaDiceEnv(num_players=3, opponents=["random"] * 3)
