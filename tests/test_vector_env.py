"""The vector env of LamaDice-v1 plays the scalar env's episodes, and the SB3 VecEnv over it trains MaskablePPO.

Differential tests: the vector env (``gymnasium.make_vec(..., vectorization_mode="vector_entry_point")``)
plays random learners against opponents; every finished game's record (deals, dice, every seat's
moves) then feeds a scalar ``LamaDice-v1`` env (its generator scripted to draw those deals and dice,
the opponents the real Python agents, or replaying the record for ``random``), which is given the
same learner actions: observations, rewards, terminations, truncations and infos must be equal,
step for step.  So the native opponents in the kernel decide as the Python agents, the batched and
Python opponents see the right states, and the autoreset, statistics and options are the scalar
env's.  Speed is measured by ``python -m lama_dice.bench.vector_speed``, never here.
"""

from __future__ import annotations

import io
import warnings
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.vector import AutoresetMode

import lama_env  # registers LamaDice-v1
from lama_env import actions as A
from lama_env.engine import IllegalActionError, LamaGame
from lama_env.gym_env import IllegalMoveWarning, LamaEnvError
from lama_env.observation import encode
from lama_env.record import replay
from lama_env.streams import Streams
from lama_env.vector import VectorGame, VectorIllegalActionError
from lama_env.vector_env import LamaDiceVectorEnv

CONFIGS = Path(__file__).resolve().parent.parent / "configs"


# ---------------------------------------------------------------------------- helpers
class LinearNet:
    """A batched opponent (``act_observations``): the best legal action of a fixed linear score of the observation.

    Its ``act(game, legal)`` encodes the game from the seat to act: so the scalar env plays it on
    the observations encode gives, and the vector env on those it hands to act_observations.
    """

    spec = "linear-net"

    def __init__(self, obs_size: int, seed: int = 0) -> None:
        self.w = np.random.default_rng(seed).normal(size=(obs_size, A.NUM_ACTIONS))
        self.calls: list[int] = []

    def seed(self, seed: int | None) -> None:
        pass

    def act_observations(self, obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        self.calls.append(len(obs))
        assert obs.dtype == np.float32 and mask.dtype == np.bool_ and mask.any(axis=1).all()
        return np.argmax(np.where(mask, obs.astype(np.float64) @ self.w, -np.inf), axis=1)

    def act(self, game: LamaGame, legal: Any) -> int:
        mask = np.zeros((1, A.NUM_ACTIONS), dtype=bool)
        mask[0, list(legal)] = True
        return int(np.argmax(np.where(mask, encode(game, game.current_player)[None].astype(np.float64) @ self.w,
                                      -np.inf), axis=1)[0])


def _legal_random(rng: np.random.Generator, mask: np.ndarray, p_roll: float = 0.85) -> np.ndarray:
    """A random legal action per row of an int8/bool mask (at a turn, roll with probability ``p_roll``)."""
    m = mask.astype(bool)
    a = np.argmax(rng.random(m.shape) + m, axis=1)
    turn = m[:, A.ROLL] & m[:, A.QUIT]
    a[turn] = np.where(rng.random(int(turn.sum())) < p_roll, A.ROLL, A.QUIT)
    return a


def _slot_info(info: dict, g: int) -> dict:
    return {"action_mask": info["action_mask"][g], "learner_seat": int(info["learner_seat"][g]),
            "illegal_action": bool(info["illegal_action"][g]),
            "episode_stats": {k: v[g] for k, v in info["episode_stats"].items() if not k.startswith("_")}}


def _same_info(scalar: dict, vec: dict) -> None:
    assert np.array_equal(scalar["action_mask"], vec["action_mask"])
    assert scalar["learner_seat"] == vec["learner_seat"]
    assert scalar["illegal_action"] == vec["illegal_action"]
    assert scalar["episode_stats"] == pytest.approx(vec["episode_stats"], abs=0), (scalar, vec)


def play_vector(env: LamaDiceVectorEnv, steps: int, seed: int) -> list[list[dict]]:
    """Random learners for ``steps`` steps; per slot, its finished episodes (reset obs/info and steps)."""
    rng = np.random.default_rng(seed)
    obs, info = env.reset(seed=seed)
    same = env.autoreset_mode == AutoresetMode.SAME_STEP
    current = [{"obs": obs[g], "info": _slot_info(info, g), "steps": []} for g in range(env.num_envs)]
    episodes: list[list[dict]] = [[] for _ in range(env.num_envs)]
    waiting = np.zeros(env.num_envs, dtype=bool)
    for _ in range(steps):
        actions = _legal_random(rng, np.where(waiting[:, None], 1, info["action_mask"]))
        obs, rew, term, trunc, info = env.step(actions)
        for g in range(env.num_envs):
            if waiting[g]:  # NEXT_STEP: the action was ignored; this is the new episode's reset
                assert rew[g] == 0 and not term[g] and not trunc[g]
                current[g] = {"obs": obs[g], "info": _slot_info(info, g), "steps": []}
                continue
            done = bool(term[g] or trunc[g])
            if same and done:
                assert info["_final_obs"][g] and info["_final_info"][g]
                step_obs, step_info = info["final_obs"][g], _slot_info(info["final_info"], g)
            else:
                step_obs, step_info = obs[g], _slot_info(info, g)
            current[g]["steps"].append((int(actions[g]), step_obs, float(rew[g]), bool(term[g]), bool(trunc[g]),
                                        step_info))
            if done:
                episodes[g].append(current[g])
                if same:
                    current[g] = {"obs": obs[g], "info": _slot_info(info, g), "steps": []}
        waiting = (term | trunc) & (not same)
    return episodes


def check_against_scalar(kwargs: dict, num_envs: int = 6, steps: int = 300, seed: int = 0,
                         autoreset_mode: Any = AutoresetMode.NEXT_STEP, scalar_opponents: Any = None,
                         min_episodes: int = 3) -> int:
    """Play the vector env, then replay every finished episode in a scalar env; return the episodes checked."""
    env = LamaDiceVectorEnv(num_envs, record=True, autoreset_mode=autoreset_mode, **kwargs)
    episodes = play_vector(env, steps, seed)
    records: dict[int, list[dict]] = {g: [] for g in range(num_envs)}
    for g, rec in env.records():
        assert replay(rec)["valid"]
        records[g].append(rec)
    scalar_kwargs = {k: v for k, v in kwargs.items() if k != "opponents"}
    if scalar_opponents is None:  # the specs themselves: the scalar "random" draws as the kernel's does
        scalar_opponents = kwargs.get("opponents") or (["random"] if kwargs.get("num_players", 2) > 1 else None)
    scalar = gym.make("LamaDice-v1", opponents=scalar_opponents, disable_env_checker=True, **scalar_kwargs).unwrapped
    scalar.reset(seed=seed)
    checked = 0
    for g in range(num_envs):
        assert len(records[g]) == len(episodes[g])
        scalar._streams = Streams.of_game(seed, g)  # slot g's streams, along which its episodes go on
        for ep, rec in zip(episodes[g], records[g], strict=True):
            obs, info = scalar.reset(options={"learner_seat": ep["info"]["learner_seat"]})
            assert np.array_equal(obs, ep["obs"])
            _same_info(info, ep["info"])
            for action, v_obs, v_rew, v_term, v_trunc, v_info in ep["steps"]:
                obs, rew, term, trunc, info = scalar.step(action)
                assert np.array_equal(obs, v_obs)
                assert (rew, term, trunc) == (v_rew, v_term, v_trunc)
                _same_info(info, v_info)
            assert term or trunc
            assert scalar.game.round_index + 1 == len(rec["rounds"])
            checked += 1
    assert checked >= min_episodes
    return checked


# ------------------------------------------------------------------ the differential tests
@pytest.mark.parametrize("kwargs", [
    {"num_players": 2, "opponents": ["threshold:0.2"]},
    {"num_players": 3, "opponents": ["points:8", "always-roll"], "end_threshold": 25},
    {"num_players": 4, "opponents": ["random"], "end_threshold": 20},  # the kernel's draws: replayed
    {"num_players": 2, "opponents": ["threshold:0.3"], "reward": "points", "episode": "round"},
    {"num_players": 3, "opponents": ["threshold:0.25"], "max_rounds": 2, "end_threshold": 200,
     "triple_llama": "also_match", "must_discard": False},
    {"num_players": 2, "opponents": ["points:5"], "auto_forced": True, "reward": "points"},
    {"num_players": 2, "opponents": ["optimal"], "end_threshold": 20},  # a Python opponent: game views
    {"num_players": 2, "learner_seat": 1, "opponents": ["threshold:0.2"], "end_threshold": 15},
])
def test_vector_env_plays_the_scalar_envs_episodes(kwargs):
    check_against_scalar(kwargs)


def test_same_step_autoreset_plays_the_scalar_envs_episodes():
    check_against_scalar({"num_players": 3, "opponents": ["threshold:0.2", "points:7"], "end_threshold": 20,
                          "max_rounds": 3}, autoreset_mode="SameStep")


def test_batched_opponent_sees_its_own_observation():
    """act_observations gets (B, O) observations from the opponent's seat, one call per wave."""
    env_obs = LamaDiceVectorEnv(1, num_players=3).observation_space.shape[1]
    nets = [LinearNet(env_obs, 1), LinearNet(env_obs, 2)]
    check_against_scalar({"num_players": 3, "opponents": nets, "end_threshold": 25}, num_envs=8, steps=200)
    assert max(nets[0].calls) > 1  # several games in one call


def test_one_batched_opponent_outside_a_list_fills_every_seat():
    """As a spec or a policy does (``opponents=net``, not ``[net]``): the same object at every opponent seat."""
    net = LinearNet(LamaDiceVectorEnv(1, num_players=3).observation_space.shape[1])
    envs = LamaDiceVectorEnv(4, num_players=3, opponents=net)
    assert envs.opponents == [net, net]
    envs.reset(seed=0)
    envs.step(envs.action_masks().argmax(axis=1))
    assert net.calls


def test_solo_and_six_players():
    check_against_scalar({"num_players": 1, "reward": "points", "end_threshold": 30}, num_envs=4, steps=200)
    check_against_scalar({"num_players": 6, "opponents": ["threshold:0.2", "points:6", "always-roll", "random",
                                                          "threshold:0.4"], "end_threshold": 15},
                         num_envs=4, steps=150, min_episodes=2)


# ------------------------------------------------------------------ gymnasium's vector API
def test_make_vec_builds_the_native_vector_env():
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no missing-autoreset-mode warning
        envs = gym.make_vec("LamaDice-v1", num_envs=8, vectorization_mode="vector_entry_point",
                            opponents=["threshold:0.2"], num_players=3)
    assert isinstance(envs, LamaDiceVectorEnv)
    assert envs.metadata["autoreset_mode"] == AutoresetMode.NEXT_STEP
    assert envs.spec.id == "LamaDice-v1" and envs.spec.kwargs["vectorization_mode"] == "vector_entry_point"
    assert envs.observation_space.shape == (8, 15 * 3 + 22) and envs.single_action_space.n == A.NUM_ACTIONS
    obs, info = envs.reset(seed=3)
    assert obs.shape == (8, 67) and obs.dtype == np.float32 and envs.observation_space.contains(obs)
    masks = envs.action_masks()
    assert masks.shape == (8, A.NUM_ACTIONS) and masks.dtype == np.bool_
    assert np.array_equal(masks, info["action_mask"].astype(bool))
    same = gym.make_vec("LamaDice-v1", num_envs=2, vectorization_mode="vector_entry_point",
                        autoreset_mode=AutoresetMode.SAME_STEP)
    assert same.metadata["autoreset_mode"] == AutoresetMode.SAME_STEP
    with pytest.raises(TypeError, match="unexpected keyword argument 'frameskip'"):
        gym.make_vec("LamaDice-v1", num_envs=2, vectorization_mode="vector_entry_point", frameskip=4)


def _signature(info: dict) -> dict:
    return {k: _signature(v) if isinstance(v, dict) else (v.dtype.str, v.shape) for k, v in info.items()}


def test_infos_are_those_of_sync_vector_env_over_the_scalar_env():
    kw = {"num_players": 2, "opponents": ["threshold:0.2"], "end_threshold": 10}
    native = gym.make_vec("LamaDice-v1", num_envs=4, vectorization_mode="vector_entry_point", **kw)
    sync = gym.make_vec("LamaDice-v1", num_envs=4, vectorization_mode="sync", **kw)
    sigs: dict[str, set] = {"native": set(), "sync": set()}
    for name, envs in (("native", native), ("sync", sync)):
        rng = np.random.default_rng(0)
        _obs, info = envs.reset(seed=0)
        sigs[name].add(repr(_signature(info)))
        for _ in range(60):
            _obs, _r, _t, _tr, info = envs.step(_legal_random(rng, info["action_mask"]))
            sigs[name].add(repr(_signature(info)))
    assert sigs["native"] == sigs["sync"] and len(sigs["native"]) == 1


def test_same_step_infos_hold_the_final_observation_and_info():
    envs = LamaDiceVectorEnv(16, opponents=["threshold:0.2"], end_threshold=8, autoreset_mode="SameStep")
    rng = np.random.default_rng(1)
    _obs, info = envs.reset(seed=1)
    ended = 0
    for _ in range(80):
        obs, _r, term, trunc, info = envs.step(_legal_random(rng, info["action_mask"]))
        done = term | trunc
        assert np.array_equal(info["_final_obs"], done) and info["final_obs"].shape == obs.shape
        assert not info["final_obs"][~done].any()
        assert info["action_mask"].any(axis=1).all()  # every sub-env waits on a decision of its new episode
        if done.any():
            ended += int(done.sum())
            assert np.array_equal(info["_final_info"], done)
            assert (info["final_info"]["episode_stats"]["rounds"][done] > 0).all()
            assert not info["final_info"]["action_mask"][done].any()
            assert (info["episode_stats"]["rounds"] == 0).all()  # the new episodes' reset infos
    assert ended > 5


def test_next_step_autoreset_ignores_the_action_and_masks_the_ended_episode():
    envs = LamaDiceVectorEnv(8, opponents=["random"], end_threshold=5)
    rng = np.random.default_rng(2)
    _obs, info = envs.reset(seed=2)
    seen = 0
    for _ in range(100):
        masks = envs.action_masks()
        _obs, _r, term, trunc, info = envs.step(_legal_random(rng, np.maximum(masks, info["action_mask"])))
        done = term | trunc
        assert not envs.action_masks()[done].any() and not info["action_mask"][done].any()
        if done.any():
            seen += 1
            g = int(np.flatnonzero(done)[0])
            seat = info["learner_seat"][g]
            _obs2, r2, t2, tr2, info2 = envs.step(np.full(8, 200))  # any action: ignored for the ended ones
            # (the others get an illegal 200: they end with -1)
            assert r2[g] == 0 and not t2[g] and not tr2[g] and info2["action_mask"][g].any()
            assert info2["learner_seat"][g] == (seat + 1) % 2  # the seat rotates
            info = info2
            break
    assert seen


def test_illegal_actions_lose_or_raise():
    envs = LamaDiceVectorEnv(4, opponents=["threshold:0.2"])
    obs, info = envs.reset(seed=0)
    acts = np.argmax(info["action_mask"], axis=1)
    acts[1] = 100 if not info["action_mask"][1, 100] else 130
    with pytest.warns(IllegalMoveWarning, match="illegal action in sub-env 1"):
        obs2, r, term, _trunc, info2 = envs.step(acts)
    assert r[1] == -1.0 and term[1] and info2["illegal_action"][1] and info2["episode_stats"]["illegal"][1] == 1
    assert np.array_equal(obs2[1], obs[1])  # the game unchanged, seen from the learner
    assert not info2["illegal_action"][[0, 2, 3]].any()
    raising = LamaDiceVectorEnv(4, opponents=["threshold:0.2"], illegal="raise")
    obs, info = raising.reset(seed=0)
    before = raising.vector_game.observation.copy()
    with pytest.raises(VectorIllegalActionError, match="game 2"):
        raising.step(np.where(np.arange(4) == 2, 128 if not info["action_mask"][2, 128] else 127,
                              np.argmax(info["action_mask"], axis=1)))
    assert np.array_equal(raising.vector_game.observation, before)
    with pytest.raises(LamaEnvError, match="actions must be integers of shape"):
        raising.step(np.zeros(3, dtype=np.int64))


def test_opponents_illegal_action_raises():
    class Bad:
        spec = "bad"

        def seed(self, seed):
            pass

        def act_observations(self, obs, mask):
            return np.full(len(obs), 128)

    envs = LamaDiceVectorEnv(4, opponents=[Bad()], learner_seat=1)
    with pytest.raises(IllegalActionError, match="opponent 'bad' at seat 0"):
        envs.reset(seed=0)


def test_per_episode_opponents_draw_every_episode():
    class Pool:
        """episode_policy(): threshold or the linear net, alternately."""

        def __init__(self, obs_size):
            self.members = [lama_env.opponents.resolve("threshold:0.2"), LinearNet(obs_size)]
            self.draws = 0

        def seed(self, seed):
            pass

        def episode_policy(self):
            self.draws += 1
            return self.members[self.draws % 2]

    pool = Pool(52)
    envs = LamaDiceVectorEnv(8, opponents=[pool], end_threshold=10)
    assert not envs.vector_game.record  # no game views needed: no log
    rng = np.random.default_rng(0)
    _obs, info = envs.reset(seed=0)
    episodes = 8
    for _ in range(200):
        _obs, _r, term, trunc, info = envs.step(_legal_random(rng, info["action_mask"]))
        episodes += int((term | trunc).sum())
    assert episodes - 8 <= pool.draws <= episodes  # one draw per started episode (the last ones still wait)
    assert pool.members[1].calls


def test_reset_options_and_seeds():
    envs = LamaDiceVectorEnv(6, num_players=3, opponents=["threshold:0.2"])
    o1, i1 = envs.reset(seed=5)
    o2, i2 = envs.reset(seed=5)
    assert np.array_equal(o1, o2) and np.array_equal(i1["learner_seat"], i2["learner_seat"])
    _o, info = envs.reset(options={"learner_seat": 2})
    assert (info["learner_seat"] == 2).all()
    mask = np.zeros(6, dtype=bool)
    mask[[1, 4]] = True
    _o, info = envs.reset(options={"reset_mask": mask})
    assert np.array_equal(info["_learner_seat"], mask)
    with pytest.raises(LamaEnvError, match="reset_mask"):
        envs.reset(options={"reset_mask": np.zeros(6, dtype=bool)})
    with pytest.raises(LamaEnvError, match="render_mode must be None"):
        LamaDiceVectorEnv(2, render_mode="rgb_array")


def test_vector_game_max_rounds_truncates_and_game_views_are_the_state():
    vg = VectorGame(32, 3, seed=4, record=True, max_rounds=2, end_threshold=500)
    vg.reset()
    rng = np.random.default_rng(0)
    truncs = 0
    for step in range(400):
        if step % 7 == 0:
            for g in (0, 5, 31):
                game = vg.game(g)
                assert game.current_player == vg.current_player[g]
                assert np.array_equal(encode(game, game.current_player), vg.observation[g])
                assert set(game.legal_actions()) == set(np.flatnonzero(vg.action_mask[g]))
        vg.step(_legal_random(rng, vg.action_mask))
        truncs += int(vg.truncated.sum())
        assert not vg.terminated.any()
        assert not vg.final_observation[~vg.truncated].any()
    recs = vg.records()
    assert truncs == len(recs) > 0
    assert all(len(r["rounds"]) == 2 and replay(r)["valid"] for r in recs)


# ------------------------------------------------------------------ the SB3 VecEnv and MaskablePPO
def test_sb3_vec_env_follows_the_vec_env_conventions():
    pytest.importorskip("sb3_contrib")
    from sb3_contrib.common.maskable.utils import get_action_masks, is_masking_supported
    from stable_baselines3.common.vec_env import VecEnv, VecMonitor

    from lama_dice.train.native_vec_env import NativeVecEnv

    venv = NativeVecEnv(16, num_players=2, opponents=["threshold:0.2"], end_threshold=10)
    assert isinstance(venv, VecEnv)
    env = VecMonitor(venv)
    assert is_masking_supported(env)
    env.seed(0)
    obs = env.reset()
    assert obs.shape == (16, 52) and env.observation_space.contains(obs[0])
    rng = np.random.default_rng(0)
    dones_seen = 0
    for _ in range(100):
        masks = get_action_masks(env)
        assert masks.shape == (16, A.NUM_ACTIONS) and masks.any(axis=1).all()
        obs, rew, dones, infos = env.step(_legal_random(rng, masks))
        assert rew.dtype == np.float32 and dones.dtype == np.bool_ and len(infos) == 16
        for i in np.flatnonzero(dones):
            dones_seen += 1
            info = infos[i]
            assert info["terminal_observation"].shape == (52,) and "episode" in info
            assert info["episode_stats"]["rounds"] > 0 and info["TimeLimit.truncated"] is False
            assert not np.array_equal(info["terminal_observation"], obs[i])  # obs is the new episode's
    assert dones_seen > 5
    assert env.get_attr("render_mode") == [None] * 16
    assert env.env_is_wrapped(gym.Wrapper) == [False] * 16
    env.close()


def test_maskable_ppo_trains_with_vec_env_native(tmp_path):
    pytest.importorskip("sb3_contrib")
    import yaml

    from lama_dice.train.config import parse_config
    from lama_dice.train.trainer import train

    data = yaml.safe_load((CONFIGS / "smoke.yaml").read_text())
    data["env"].update(vec_env="native", n_envs=8)
    data["ppo"].update(n_steps=128)
    cfg = parse_config(data)
    out = io.StringIO()
    result = train(cfg, run_dir=tmp_path / "native", progress_bar=False, out=out)
    printed = out.getvalue()
    assert not result.interrupted and result.timesteps >= cfg.total_timesteps
    assert "8 envs (native)" in printed and "learner win rate" in printed
    assert (result.run_dir / "selfplay" / "pool.json").is_file()
    assert result.evaluation is not None and set(result.evaluation["results"]) == {"random", "threshold:0.2"}
    again = train(cfg, run_dir=tmp_path / "again", progress_bar=False, out=io.StringIO())
    import zipfile

    weights = [zipfile.ZipFile(r / "final.zip").read("policy.pth") for r in (result.run_dir, again.run_dir)]
    assert weights[0] == weights[1]  # seeded: the same run twice


def test_maskable_ppo_learns_against_random_on_the_native_vec_env():
    """A short MaskablePPO run on the native VecEnv beats random clearly (an untrained policy does not)."""
    pytest.importorskip("sb3_contrib")
    import torch
    from sb3_contrib import MaskablePPO
    from stable_baselines3.common.vec_env import VecMonitor

    from lama_dice.agents.ppo import PPOPolicy
    from lama_dice.evaluation import evaluate
    from lama_dice.train.native_vec_env import NativeVecEnv

    torch.set_num_threads(1)
    env = VecMonitor(NativeVecEnv(32, num_players=2, opponents=["random"], reward="points"))
    env.seed(0)
    model = MaskablePPO("MlpPolicy", env, n_steps=64, batch_size=512, n_epochs=4, learning_rate=1e-3, gamma=1.0,
                        policy_kwargs={"net_arch": [64, 64]}, seed=0, device="cpu")

    def points_per_round() -> float:
        learner = PPOPolicy.from_sb3(model.policy, 2)
        res = evaluate([learner, "random"], num_players=2, games=150, seed=7)
        return res.agents[0].mean_points_per_round

    before = points_per_round()
    model.learn(total_timesteps=32 * 64 * 12)
    after = points_per_round()
    assert after < before - 2.0, (before, after)  # untrained (argmax): ~24 points a round; trained: ~14


def test_learned_policies_act_on_observations_as_on_games():
    """`ppo:` agents have act_observations, so vector envs give them one forward pass per wave of games."""
    from lama_dice.agents.registry import make_agent
    from lama_env import LamaGame
    from lama_env.observation import encode

    agent = make_agent("ppo:2p")
    games = [LamaGame(2, seed=s) for s in range(6)]
    for g in games[::2]:
        g.step(0)  # a roll: some games wait on a discard or take
    games = [g for g in games if not g.game_over]
    legals = [g.legal_actions() for g in games]
    obs = np.stack([encode(g, g.current_player) for g in games])
    mask = np.zeros((len(games), 129), dtype=bool)
    for i, legal in enumerate(legals):
        mask[i, legal] = True
    agent.seed(3)
    by_games = agent.act_batch(games, legals)
    agent.seed(3)
    assert agent.act_observations(obs, mask).tolist() == by_games
    with pytest.raises(Exception, match="trained for 2 players"):
        agent.act_observations(np.zeros((1, obs.shape[1] + 15), np.float32), mask[:1])
