"""The PettingZoo AEC environment lama_dice_v1."""

from __future__ import annotations

import pickle
import subprocess
import sys
import warnings

import numpy as np
import pytest
from pettingzoo.test import api_test, seed_test

from lama_env import IllegalActionError, LamaDiceError, lama_dice_v1
from lama_env.actions import NUM_ACTIONS, QUIT, ROLL
from lama_env.gym_env import LamaEnvError
from lama_env.observation import observation_size
from lama_env.roundend import turns


def play(env, seed, rng=None, check=None):
    """Masked random play of one episode; returns the summed reward per agent."""
    rng = rng or np.random.default_rng(seed)
    env.reset(seed=seed)
    returns = dict.fromkeys(env.possible_agents, 0.0)
    for agent in env.agent_iter():
        obs, reward, term, trunc, _info = env.last()
        returns[agent] += reward
        if term or trunc:
            env.step(None)
            continue
        if check:
            check(env, agent, obs)
        env.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
    return returns


@pytest.mark.parametrize("n", range(1, 7))
def test_api_test(n):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        api_test(lama_dice_v1.env(num_players=n), num_cycles=150)


@pytest.mark.parametrize("n", [2, 5])
def test_seed_test(n):
    seed_test(lambda: lama_dice_v1.env(num_players=n), num_cycles=200)


def test_module_surface():
    assert lama_dice_v1.raw_env.metadata["name"] == "lama_dice_v1"
    e = lama_dice_v1.env()
    assert isinstance(e.unwrapped, lama_dice_v1.raw_env)
    from pettingzoo.utils.wrappers import AssertOutOfBoundsWrapper, OrderEnforcingWrapper, TerminateIllegalWrapper

    assert isinstance(e, OrderEnforcingWrapper)
    assert isinstance(e.env, AssertOutOfBoundsWrapper)
    assert isinstance(e.env.env, TerminateIllegalWrapper)


def test_import_lama_env_does_not_import_pettingzoo_or_torch():
    code = "import sys, lama_env; print('pettingzoo' in sys.modules, 'torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["False", "False"]


@pytest.mark.parametrize("n", range(1, 7))
def test_masked_random_play(n):
    space = None

    def check(env, agent, obs):
        nonlocal space
        space = env.observation_space(agent)
        assert space.contains(obs)
        g = env.unwrapped.game
        assert agent == f"player_{g.current_player}"
        assert obs["action_mask"].any()
        assert sorted(np.flatnonzero(obs["action_mask"]).tolist()) == list(g.legal_actions())
        for other in env.agents:
            if other != agent:
                o = env.observe(other)
                assert not o["action_mask"].any() and space.contains(o)

    for seed in range(4 if n > 1 else 8):
        if n == 1:
            with pytest.warns(UserWarning, match="solo"):
                env = lama_dice_v1.env(num_players=n, end_threshold=30)
        else:
            env = lama_dice_v1.env(num_players=n, end_threshold=30)
        returns = play(env, seed, check=check)
        assert not env.agents
        # zero-sum win/loss
        assert abs(sum(returns.values())) < 1e-9
        if n == 1:
            assert returns == {"player_0": 0.0}
    assert space["observation"].shape == (observation_size(n),)


def test_win_rewards_are_shares():
    for seed in range(6):
        env = lama_dice_v1.env(num_players=3, end_threshold=20)
        returns = play(env, seed)
        g = env.unwrapped.game
        assert g.game_over
        winners = g.result()["winners"]
        for p, a in enumerate(env.possible_agents):
            if len(winners) == 3:
                assert returns[a] == 0
            elif p in winners:
                assert returns[a] == pytest.approx(1 / len(winners))
            else:
                assert returns[a] == pytest.approx(-1 / (3 - len(winners)))


def test_points_reward_adds_up_to_minus_the_totals():
    for seed in range(4):
        env = lama_dice_v1.env(num_players=2, reward="points")
        returns = play(env, seed)
        totals = env.unwrapped.game.totals
        assert [returns[a] for a in env.possible_agents] == [-t for t in totals]


def test_points_reward_given_at_round_ends_only():
    env = lama_dice_v1.env(num_players=2, reward="points")
    env.reset(seed=1)
    rng = np.random.default_rng(1)
    for _agent in env.agent_iter():
        obs, _reward, term, trunc, _info = env.last()
        if term or trunc:
            env.step(None)
            continue
        g = env.unwrapped.game
        rounds_before = g.round_index
        env.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
        if any(env.rewards.values()):
            assert g.round_index > rounds_before or g.game_over


def test_determinism_under_seed():
    def trace(seed):
        env = lama_dice_v1.env(num_players=3)
        out = []
        play(env, seed, check=lambda e, a, o: out.append((a, o["observation"].tobytes())))
        return out

    assert trace(7) == trace(7)
    assert trace(7) != trace(8)


def test_reset_without_seed_continues_the_stream():
    env = lama_dice_v1.env(num_players=2)
    env.reset(seed=3)
    first = env.observe("player_0")["observation"]
    env.reset()
    assert not np.array_equal(first, env.observe("player_0")["observation"])


def test_illegal_action_through_env_terminates_with_a_warning():
    from pettingzoo.utils.env_logger import EnvLogger

    env = lama_dice_v1.env(num_players=3)
    env.reset(seed=0)
    agent = env.agent_selection
    obs, *_ = env.last()
    bad = int(np.flatnonzero(obs["action_mask"] == 0)[0])
    g = env.unwrapped.game
    before = g.result(), g.displays, g.phase, g.current_player
    EnvLogger.flush()
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # reported through PettingZoo's EnvLogger, not as a Python warning
        env.step(bad)
    assert any("Illegal move made" in m and f"illegal action {bad} (" in m and f"by {agent}" in m
               for m in EnvLogger.mqueue)
    EnvLogger.flush()
    assert (g.result(), g.displays, g.phase, g.current_player) == before  # the game is not corrupted
    assert all(env.terminations.values())
    rewards = {}
    for a in env.agent_iter():
        _, r, term, trunc, _ = env.last()
        assert term or trunc
        assert not env.observe(a)["action_mask"].any()
        rewards[a] = r
        env.step(None)
    assert rewards[agent] == -1
    assert all(r == 0 for a, r in rewards.items() if a != agent)
    assert not env.agents


def test_wrappers_short_cuts_behave_as_pettingzoos_wrappers():
    """num_agents, terminations, agent_iter and reset over env()'s chain: as PettingZoo's stock wrappers."""
    from pettingzoo.utils import wrappers
    from pettingzoo.utils.env_logger import EnvLogger

    ours = lama_dice_v1.env(num_players=2)
    stock = wrappers.OrderEnforcingWrapper(wrappers.AssertOutOfBoundsWrapper(
        wrappers.TerminateIllegalWrapper(lama_dice_v1.raw_env(num_players=2), illegal_reward=-1)))
    for name in ("num_agents", "agents", "terminations", "truncations"):
        errors = []
        for env in (ours, stock):
            with pytest.raises(AttributeError) as e:
                getattr(env, name)
            errors.append(str(e.value))
        assert errors[0] == errors[1] == f"{name} cannot be accessed before reset"
    EnvLogger.suppress_output()
    try:
        for env in (ours, stock):
            env.reset(seed=3)
            assert env.num_agents == 2
            it = iter(env.agent_iter())
            next(it)
            with pytest.raises(AssertionError, match="need to call step"):
                next(it)  # no step() since the last agent
            obs, *_ = env.last()
            env.step(int(np.flatnonzero(obs["action_mask"] == 0)[0]))  # illegal: the episode ends
            assert all(env.terminations.values()) and env.num_agents == 2
            env.reset(seed=3)  # and a reset starts a new one (the illegal-move state cleared)
            assert not any(env.terminations.values()) and not any(env.truncations.values())
            obs, *_ = env.last()
            env.step(int(np.flatnonzero(obs["action_mask"])[0]))
            assert not any(env.terminations.values())
        assert ours.unwrapped.game.result() == stock.unwrapped.game.result()
        assert ours.unwrapped.game.displays == stock.unwrapped.game.displays
    finally:
        EnvLogger.unsuppress_output()


def test_illegal_action_on_raw_env_raises_and_keeps_the_state():
    env = lama_dice_v1.raw_env(num_players=2)
    env.reset(seed=0)
    g = env.game
    before = g.result(), g.displays, g.phase
    with pytest.raises(IllegalActionError, match="illegal action 5"):
        env.step(5)
    with pytest.raises(IllegalActionError):
        env.step(NUM_ACTIONS + 3)
    assert (g.result(), g.displays, g.phase) == before
    env.step(ROLL)  # the game goes on


def test_out_of_range_action_asserts_like_pettingzoo():
    env = lama_dice_v1.env(num_players=2)
    env.reset(seed=0)
    with pytest.raises(AssertionError):
        env.step(NUM_ACTIONS)


def test_numpy_integer_actions():
    env = lama_dice_v1.env(num_players=2)
    env.reset(seed=0)
    env.step(np.int32(ROLL))
    assert turns(env.unwrapped.game) == 1


def test_episode_round_ends_after_one_round():
    for seed in range(5):
        env = lama_dice_v1.env(num_players=4, episode="round")
        returns = play(env, seed)
        g = env.unwrapped.game
        assert g.round_index == 0 and g.game_over and g.rounds_finished == 1  # the game ends with the episode
        assert abs(sum(returns.values())) < 1e-9


def test_everyone_quits_ends_the_round():
    env = lama_dice_v1.env(num_players=3, episode="round", reward="points")
    env.reset(seed=4)
    g = env.unwrapped.game
    for _ in range(3):
        env.step(QUIT)
    assert all(env.terminations.values())
    assert {a: env._cumulative_rewards[a] for a in env.agents} == {
        f"player_{p}": -g.last_round["points"][p] for p in range(3)}
    assert env.infos == {a: {} for a in env.agents}  # the result is read from the game (g.totals, g.result())


def test_auto_forced():
    def count_forced(auto):
        forced = 0

        def check(env, agent, obs):
            nonlocal forced
            forced += obs["action_mask"].sum() == 1

        for seed in range(6):
            play(lama_dice_v1.env(num_players=2, auto_forced=auto), seed, check=check)
        return forced

    assert count_forced(False) > 0
    assert count_forced(True) == 0


def test_max_rounds_truncates():
    env = lama_dice_v1.env(num_players=2, max_rounds=1, end_threshold=1000)
    play(env, 0)
    g = env.unwrapped.game  # the env's game ends with the episode's last round, its totals far from the threshold
    assert g.round_index == 0 and g.rounds_finished == 1 and max(g.totals) < 1000
    assert all(env.truncations.values()) and not any(env.terminations.values())


def test_rules_keywords_and_options():
    env = lama_dice_v1.raw_env(num_players=2, end_threshold=15, triple_llama="also_match", must_discard=False)
    assert env.rules.end_threshold == 15 and env.rules.triple_llama == "also_match" and not env.rules.must_discard
    with pytest.raises(TypeError, match="unexpected keyword argument 'treshold'"):
        lama_dice_v1.env(treshold=3)
    with pytest.raises(LamaDiceError, match="unknown rules field 'treshold'"):
        lama_dice_v1.env(rules={"treshold": 3})
    for kwargs, words in (({"num_players": 7}, r"^num_players must be an integer 1\.\.6, got 7$"),
                          ({"episode": "match"}, r"^episode must be one of 'game', 'round', got 'match'$"),
                          ({"reward": "score"}, r"^reward must be one of 'win', 'points', got 'score'$"),
                          ({"render_mode": "rgb"}, r"^render_mode must be one of .*, got 'rgb'$"),
                          ({"max_rounds": 0}, r"^max_rounds must be a positive integer or None, got 0$")):
        with pytest.raises(LamaEnvError, match=words):
            lama_dice_v1.env(**kwargs)


def test_pickles():
    env = lama_dice_v1.raw_env(num_players=3, end_threshold=20)
    clone = pickle.loads(pickle.dumps(env))
    assert clone.rules == env.rules and clone.num_players == 3


def test_render_ansi_and_human(capsys):
    env = lama_dice_v1.env(num_players=3, render_mode="ansi")
    env.reset(seed=2)
    env.step(ROLL)
    text = env.render()
    g = env.unwrapped.game
    assert isinstance(text, str)
    for name in ("player_0", "player_1", "player_2", "llama row", "Round 1"):
        assert name in text
    assert f"player_{g.current_player}" in text.splitlines()[0]
    human = lama_dice_v1.env(num_players=2, render_mode="human")
    human.reset(seed=2)
    human.step(QUIT)
    assert "player_0" in capsys.readouterr().out
    quiet = lama_dice_v1.env(num_players=2)
    quiet.reset(seed=0)
    with pytest.warns(UserWarning, match="render_mode|render mode"):
        assert quiet.render() is None


def test_render_at_game_end():
    env = lama_dice_v1.env(num_players=2, render_mode="ansi", end_threshold=15)
    play(env, 3)
    g = env.unwrapped.game
    text = env.render()
    won = g.result()["winners"]
    assert "game over" in text and f"player_{won[0]}" in text.splitlines()[0]


def test_readme_quick_starts_run():
    import re
    from pathlib import Path

    text = (Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8")
    assert "<!-- section:envs -->" in text and "<!-- /section:envs -->" in text, "README lost its env quick starts"
    section = text[text.index("<!-- section:envs -->"):text.index("<!-- /section:envs -->")]
    blocks = re.findall(r"```python\n(.*?)```", section, re.S)
    assert len(blocks) == 2
    for code in blocks:
        exec(compile(code, "README.md", "exec"), {})


def _digest(games_per_setting: int) -> str:
    """SHA-256 over everything the wrapped env returns in many seeded games of random (and a few illegal) moves."""
    import hashlib
    import random

    from pettingzoo.utils.env_logger import EnvLogger

    h = hashlib.sha256()
    settings = [{"num_players": n} for n in range(1, 7)] + [
        {"num_players": 3, "auto_forced": True}, {"num_players": 2, "episode": "round", "reward": "points"},
        {"num_players": 4, "reward": "points", "max_rounds": 2},
        {"num_players": 2, "end_threshold": 15, "triple_llama": "also_match"}]
    EnvLogger.suppress_output()
    try:
        for k, kw in enumerate(settings):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                env = lama_dice_v1.env(**kw)
            pick = random.Random(k)
            for g in range(games_per_setting):
                env.reset(seed=1000 * k + g) if (g % 3 or g == 0) else env.reset()
                illegal_at = pick.randrange(200) if g % 7 == 0 else -1
                for t, agent in enumerate(env.agent_iter()):
                    obs, rew, term, trunc, info = env.last()
                    h.update(agent.encode() + obs["observation"].tobytes() + obs["action_mask"].tobytes())
                    h.update(repr((rew, term, trunc, info)).encode())
                    other = env.agents[(env.agents.index(agent) + 1) % len(env.agents)]
                    o2 = env.observe(other)
                    h.update(o2["observation"].tobytes() + o2["action_mask"].tobytes())
                    if term or trunc:
                        a = None
                    elif t == illegal_at:
                        a = int(np.flatnonzero(obs["action_mask"] == 0)[0])
                    else:
                        a = pick.choice(np.flatnonzero(obs["action_mask"]).tolist())
                    env.step(a)
                    h.update(repr((sorted(env.rewards.items()), sorted(env._cumulative_rewards.items()))).encode())
                h.update(repr(env.unwrapped.game.totals).encode())
    finally:
        EnvLogger.unsuppress_output()
    return h.hexdigest()


def test_what_the_env_returns_is_unchanged_by_the_speed_ups():
    """Observations, masks, rewards, terminations and infos over 400 seeded games of 10 settings, hashed.

    The digest was taken from the env before the speed-ups of its per-step path (encode's caches, the
    wrappers' short cuts), and taken again for v1, whose seeds draw from the compiled engine's streams
    (v0's digest: f819df45...): any change to what it returns changes it.
    """
    assert _digest(40) == "c0424dbe99a604a2c88c67b021b70341136173751c1e544bb41306c41ec5b3a7"
