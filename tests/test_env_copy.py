"""Copies of the environments mid-game (``copy.deepcopy`` and a pickle round trip) continue exactly as the original.

Each test plays a few moves, copies the env, then drives the original and the copy with
the same actions to the end of the game and on into the next episode (a ``reset()``
without a seed, which draws from the copied random stream): the observations, masks,
rewards, terminations, infos and the games' records (which hold every deal and die drawn
after the copy) must be identical.
"""

from __future__ import annotations

import copy
import pickle

import gymnasium as gym
import numpy as np
import pytest

import lama_env  # noqa: F401  (registers LamaDice-v1)
from lama_env import lama_dice_v1
from lama_env.aec_wrappers import AssertOutOfBounds, OrderEnforcing, TerminateIllegal
from lama_env.roundend import turns

COPIES = {"deepcopy": copy.deepcopy, "pickle": lambda env: pickle.loads(pickle.dumps(env))}


def _same(a, b) -> None:
    """Equal, arrays included (element by element, same dtype)."""
    if isinstance(a, dict):
        assert isinstance(b, dict) and a.keys() == b.keys()
        for k in a:
            _same(a[k], b[k])
    elif isinstance(a, np.ndarray):
        assert isinstance(b, np.ndarray) and a.dtype == b.dtype
        np.testing.assert_array_equal(a, b)
    elif isinstance(a, (tuple, list)):
        assert type(a) is type(b) and len(a) == len(b)
        for x, y in zip(a, b, strict=True):
            _same(x, y)
    else:
        assert a == b


# ---------------------------------------------------------------------------------- PettingZoo
def _aec_step(env, rng: np.random.Generator, roll: bool = False):
    """One step of the AEC loop (a random legal action, or a roll if ``roll`` and legal; None for a dead agent).

    Returns:
        What ``last()`` gave before the step, and the action.
    """
    last = env.last()
    obs, _, term, trunc, _ = last
    legal = np.flatnonzero(obs["action_mask"])
    action = None if term or trunc else 0 if roll and legal[0] == 0 else int(rng.choice(legal))
    env.step(action)
    return last, action


def _aec_play(env, rng: np.random.Generator, episodes: int) -> list:
    """Play to the end of ``episodes`` episodes (the current one first, then new ones); the trace."""
    trace = []
    for ep in range(episodes):
        if ep:
            env.reset()  # no seed: continues the env's random stream
        while env.agents:
            last, action = _aec_step(env, rng)
            trace.append((env.agent_selection, last, action, dict(env.rewards),
                          {a: env.observe(a) for a in env.agents}))
        trace.append(env.unwrapped.game.to_record())
    return trace


@pytest.mark.parametrize("how", sorted(COPIES))
@pytest.mark.parametrize("num_players", range(1, 7))
@pytest.mark.parametrize("wrapped", [True, False], ids=["env", "raw_env"])
def test_pettingzoo_copy_continues_exactly(how, num_players, wrapped):
    make = lama_dice_v1.env if wrapped else lama_dice_v1.raw_env
    env = make(num_players=num_players, reward="points", record=True)
    env.reset(seed=100 + num_players)
    rng = np.random.default_rng(num_players)
    for _ in range(3 + num_players):  # mid-round, some dice already rolled
        _aec_step(env, rng, roll=True)
    game = env.unwrapped.game
    assert env.agents and not game.game_over and game.rounds_finished == 0 and turns(game) > 0
    twin = COPIES[how](env)
    assert type(twin) is type(env)
    assert twin.unwrapped is not env.unwrapped and twin.unwrapped.game is not env.unwrapped.game
    _same(twin.last(), env.last())
    state = rng.bit_generator.state
    original = _aec_play(env, rng, episodes=2)
    rng.bit_generator.state = state
    copied = _aec_play(twin, rng, episodes=2)
    _same(copied, original)
    assert sum(len(r["turns"]) for r in original[-1]["rounds"]) > 0  # dice were drawn after the copy


def test_pettingzoo_copy_keeps_every_wrapper_and_option():
    env = lama_dice_v1.env(num_players=3, auto_forced=True, episode="round", max_rounds=2, triple_llama="also_match")
    env.reset(seed=0)
    twin = copy.deepcopy(env)

    def layers(e) -> list[type]:
        out = []
        while hasattr(e, "env"):
            out.append(type(e))
            e = e.env
        return out

    assert layers(twin) == layers(env) == [OrderEnforcing, AssertOutOfBounds, TerminateIllegal]
    raw = twin.unwrapped
    assert (raw.auto_forced, raw.episode, raw.max_rounds, raw.rules) == (True, "round", 2, env.unwrapped.rules)
    # the wrappers of the copy point at the copy's raw env, not the original's
    assert twin._raw is raw and twin.env._raw is raw and twin.env.env._raw is raw


def test_pettingzoo_copy_of_an_env_never_reset_is_fresh():
    twin = pickle.loads(pickle.dumps(lama_dice_v1.env(num_players=2)))
    with pytest.raises(AttributeError):
        twin.agent_selection  # noqa: B018  (the order-enforcing error, as for the original)
    twin.reset(seed=1)
    assert twin.agents == ["player_0", "player_1"]


# ----------------------------------------------------------------------------------- Gymnasium
def _gym_play(env, rng: np.random.Generator, info: dict, episodes: int) -> list:
    trace = []
    for ep in range(episodes):
        if ep:
            obs, info = env.reset()  # no seed: the seat rotation and deals continue the copied stream
            trace.append((obs, info))
        done = False
        while not done:
            action = int(rng.choice(np.flatnonzero(info["action_mask"])))
            obs, reward, term, trunc, info = env.step(action)
            trace.append((action, obs, reward, term, trunc, info))
            done = term or trunc
        trace.append(env.unwrapped.game.serialize())  # every deal and die of the episode, the random stream
    return trace


def _gym_compare(env, copies: list, info: dict, episodes: int) -> None:
    rng = np.random.default_rng(0)
    original = _gym_play(env, rng, info, episodes)
    assert len(original) > episodes
    for twin in copies:
        rng = np.random.default_rng(0)
        _same(_gym_play(twin, rng, info, episodes), original)


HEURISTICS = ["threshold:0.2", "points:10", "always-roll", "random", "optimal"]


@pytest.mark.parametrize("num_players", range(1, 7))
def test_gymnasium_copy_continues_exactly(num_players):
    opponents = [HEURISTICS[i % len(HEURISTICS)] for i in range(num_players - 1)]
    env = gym.make("LamaDice-v1", num_players=num_players, opponents=opponents, reward="points", max_rounds=4)
    _, info = env.reset(seed=7 + num_players)
    for _ in range(2):
        _, _, term, trunc, info = env.step(int(np.flatnonzero(info["action_mask"])[0]))  # rolls, takes, discards
        assert not (term or trunc)
    twins = [make(env) for make in COPIES.values()]
    for twin in twins:
        assert twin.unwrapped is not env.unwrapped and twin.unwrapped.game is not env.unwrapped.game
        assert twin.unwrapped.game.serialize() == env.unwrapped.game.serialize()
    _gym_compare(env, twins, info, episodes=3)


@pytest.mark.parametrize("opponent", ["lookahead", "ppo:2p", "mcts:8"])
def test_gymnasium_copy_with_search_and_learned_opponents(opponent):
    if opponent.startswith("mcts"):
        pytest.importorskip("pyspiel", reason="OpenSpiel is not installed (the openspiel extra)")
    env = gym.make("LamaDice-v1", num_players=2, opponents=[opponent])
    _, info = env.reset(seed=3)
    _, _, _, _, info = env.step(int(np.flatnonzero(info["action_mask"])[0]))
    twins = [make(env) for make in COPIES.values()]
    for twin in twins:
        assert twin.unwrapped.opponents[0] is not env.unwrapped.opponents[0]
        # the env's streams and its game's are one object, in the copy too, apart from the original's
        assert twin.unwrapped.game._rng is twin.unwrapped._streams
        assert twin.unwrapped._streams is not env.unwrapped._streams
    _gym_compare(env, twins, info, episodes=2)
