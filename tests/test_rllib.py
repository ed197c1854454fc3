"""The Ray RLlib pipeline: config, env wrapper, masking RLModule, tiny training, the rllib:PATH agent.

Tests marked ``needs_ray`` are skipped, with the reason, when the ``rllib``
extra is not installed (``pip install "lama-dice[rllib]"``); the others check
what must work without it (config validation, the one-line missing-extra error).
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import numpy as np
import pytest

from lama_dice.agents.registry import make_agent
from lama_dice.agents.rllib_agent import RLlibCheckpointError, RLlibMissingError
from lama_dice.train.rllib.config import RLlibConfigError, is_rllib_config, load_rllib_config, parse_rllib_config
from lama_dice.train.rllib.metrics import GAME_METRICS, game_scalars
from lama_env.actions import NUM_ACTIONS
from lama_env.rules import winners

ROOT = Path(__file__).resolve().parents[1]
HAVE_RAY = importlib.util.find_spec("ray") is not None and importlib.util.find_spec("ray.rllib") is not None
needs_ray = pytest.mark.skipif(not HAVE_RAY, reason="the rllib extra is not installed: pip install 'lama-dice[rllib]'")


def _cfg(**over):
    data = {"algorithm": "rllib-ppo", "name": "t"}
    data.update(over)
    return data


# ---------------------------------------------------------------------------
# without ray

def test_shipped_config_is_valid_and_detected():
    path = ROOT / "configs" / "rllib_2p.yaml"
    assert is_rllib_config(path)
    cfg = load_rllib_config(path)
    assert cfg.algorithm == "rllib-ppo" and cfg.env.num_players == 2
    assert cfg.ray.num_env_runners >= 1
    # the SB3 configs are not RLlib configs
    assert not any(is_rllib_config(p) for p in (ROOT / "configs").glob("*.yaml") if p.name != path.name)


@pytest.mark.parametrize("data, key", [
    (_cfg(ppo={"lr_typo": 1}), "ppo.lr_typo"),
    (_cfg(ray={"num_env_runners": -1}), "ray.num_env_runners"),
    (_cfg(ppo={"train_batch_size": 64, "minibatch_size": 128}), "ppo.minibatch_size"),
    (_cfg(env={"num_players": 1}, opponents=["random"]), "opponents"),
    (_cfg(opponents=["no-such-agent"]), "opponents[0].agent"),
    (_cfg(env={"rules": {"end_threshold": "x"}}), "env.rules"),
    (_cfg(ray={"address": "auto", "num_cpus": 2}), "ray.num_cpus"),
    ({"name": "t"}, "algorithm"),
    (_cfg(algorithm="maskable-ppo"), "algorithm"),
])
def test_bad_config_names_the_key(data, key):
    with pytest.raises(RLlibConfigError) as e:
        parse_rllib_config(data, source="x.yaml")
    msg = str(e.value)
    assert msg.startswith("x.yaml: ") and key in msg and "\n" not in msg


def test_config_round_trips_through_yaml(tmp_path):
    cfg = parse_rllib_config(_cfg(ppo={"lambda": 0.9}, opponents=["random", {"agent": "optimal", "weight": 2}]))
    p = tmp_path / "c.yaml"
    p.write_text(cfg.to_yaml())
    again = load_rllib_config(p)
    assert again == cfg and again.ppo.lambda_ == 0.9
    env = again.env_config()
    assert env["opponents"] == [["random", 1.0], ["optimal", 2.0]]


def test_shares_the_sb3_schema_sections_and_keeps_its_defaults(tmp_path):
    from lama_dice.train.config import ConfigError, EvalConfig, OpponentConfig, TrainConfig

    assert issubclass(RLlibConfigError, ConfigError)
    cfg = parse_rllib_config(_cfg(opponents=["random"]), check_agents=False)
    assert type(cfg.opponents[0]) is OpponentConfig
    assert (cfg.eval.every, cfg.eval.games, cfg.eval.final_games) == (0, 200, 1000)  # iterations
    assert (cfg.eval.opponents, cfg.eval.workers, cfg.eval.seed) == (["optimal"], 1, 12345)
    sb3 = EvalConfig()
    assert (sb3.every, sb3.games, sb3.final_games) == (50_000, 400, 2000)  # timesteps
    assert cfg.env.rules == TrainConfig(opponents=["random"]).env.rules  # the same normalised defaults
    assert (cfg.env.auto_forced, cfg.env.max_rounds, cfg.checkpoint.every, cfg.name) == (False, None, 10, "t")
    # the shared YAML reader raises the RLlib error type, in one line
    bad = tmp_path / "bad.yaml"
    bad.write_text("algorithm: rllib-ppo\nenv: {num_players: 2\n")
    for path, phrase in ((bad, "invalid YAML at line"), (tmp_path / "missing.yaml", "cannot read config")):
        with pytest.raises(RLlibConfigError, match=phrase) as e:
            load_rllib_config(path)
        assert "\n" not in str(e.value)
        assert not is_rllib_config(path)
    # the run name defaults to the file's stem, made safe
    (tmp_path / "%%%.yaml").write_text("algorithm: rllib-ppo\n")
    assert load_rllib_config(tmp_path / "%%%.yaml").name == "___"


def test_game_scalars_follow_the_sb3_definitions():
    sums = {"episodes": 4.0, "win": 1.5, "rounds": 10.0, "points": 120.0, "final_points": 100.0,
            "busts": 2.0, "quits": 5.0, "went_out": 1.0, "steps": 36.0}
    out = game_scalars({"env_runners": {GAME_METRICS: {"main": sums}}}, num_players=2)
    assert out["win_rate"] == sums["win"] / sums["episodes"]
    assert out["points_per_round"] == sums["points"] / sums["rounds"]
    for key, name in (("busts", "bust_rate"), ("quits", "quit_rate"), ("went_out", "went_out_rate")):
        assert out[name] == sums[key] / sums["rounds"]
    assert out["episode_length"] == sums["steps"] / sums["episodes"]
    assert "win_rate" not in game_scalars({"env_runners": {GAME_METRICS: {"main": sums}}}, num_players=1)
    assert game_scalars({"env_runners": {}}, num_players=2) == {}


def test_missing_extra_is_one_clear_error(monkeypatch):
    from lama_dice.train.rllib.trainer import train

    for name in [m for m in sys.modules if m == "ray" or m.startswith("ray.")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "ray", None)  # `import ray` now fails as if not installed
    with pytest.raises(RLlibMissingError,
                       match=r"rllib:PATH needs the rllib extra; install it with: .*pip install .*\[rllib\]"):
        make_agent("rllib:runs/anything")
    with pytest.raises(RLlibMissingError, match="rllib-ppo needs the rllib extra"):
        train(parse_rllib_config(_cfg()), run_dir="unused")


# ---------------------------------------------------------------------------
# with ray

def _play_random(env, rng, episodes, seed0=0):
    """Random legal play; returns per-episode (final infos, game, learner seats, opponent seats)."""
    out = []
    for ep in range(episodes):
        obs, _ = env.reset(seed=seed0 + ep)
        while True:
            assert len(obs) == 1
            (agent, o), = obs.items()
            assert agent not in env._opponents
            assert o["action_mask"].dtype == np.int8 and o["action_mask"].shape == (NUM_ACTIONS,)
            legal = np.flatnonzero(o["action_mask"])
            assert tuple(legal) == env._raw.game.legal_actions()
            obs, rew, term, trunc, info = env.step({agent: int(rng.choice(legal))})
            assert set(rew) <= env._visible
            if term["__all__"] or trunc["__all__"]:
                out.append((info, env._raw.game, set(env._visible), set(env._opponents)))
                break
    return out


@needs_ray
@pytest.mark.parametrize("env_cfg", [
    {"num_players": 2},
    {"num_players": 3, "opponents": [["threshold:0.2", 1.0], ["random", 1.0]], "selfplay_weight": 0.3},
    {"num_players": 2, "opponents": [["optimal", 1.0]], "selfplay_weight": 0.0, "auto_forced": True},
    {"num_players": 1, "episode": "round", "reward": "points"},
])
def test_env_hides_opponents_and_reports_game_stats(env_cfg):
    from lama_dice.train.rllib.env import LamaDiceRLlibEnv

    env = LamaDiceRLlibEnv(env_cfg)
    rng = np.random.default_rng(1)
    for info, game, visible, opponents in _play_random(env, rng, episodes=6):
        results = [r for r in game.result()["rounds"] if r["finished"]]
        assert set(info) == visible and not visible & opponents
        for agent, inf in info.items():
            seat = int(agent.split("_")[1])
            st = inf["episode_stats"]
            assert st["rounds"] == len(results)
            assert st["points"] == sum(r["points"][seat] for r in results)
            assert st["went_out"] == sum(r["went_out"] == seat for r in results)
            assert st["final_points"] == game.totals[seat]
            won = winners(game.totals)
            assert st["win"] == (1.0 / len(won) if seat in won else 0.0)
            assert 0 <= st["busts"] <= sum(r["ended_by"] == "bust" for r in results)
            assert st["quits"] <= st["steps"]
        # every bust is credited to exactly one seat
        assert sum(i["episode_stats"]["busts"] for i in info.values()) <= sum(r["ended_by"] == "bust" for r in results)
        if not opponents:
            assert (sum(i["episode_stats"]["busts"] for i in info.values())
                    == sum(r["ended_by"] == "bust" for r in results))
    if env_cfg.get("selfplay_weight") == 0.0:
        assert len(env._visible) == 1  # one learner seat, the others played inside the env


@needs_ray
def test_masked_module_never_picks_an_illegal_action():
    import gymnasium as gym
    import torch

    from lama_dice.train.rllib.module import module_spec
    from lama_env.observation import observation_size

    size = observation_size(2)
    space = gym.spaces.Dict({"observation": gym.spaces.Box(0.0, 1.0, (size,), np.float32),
                             "action_mask": gym.spaces.Box(0, 1, (NUM_ACTIONS,), np.int8)})
    spec = module_spec(hidden=[16])
    spec.observation_space, spec.action_space = space, gym.spaces.Discrete(NUM_ACTIONS)
    module = spec.build()
    rng = np.random.default_rng(0)
    mask = (rng.random((64, NUM_ACTIONS)) < 0.05).astype(np.int8)
    mask[np.arange(64), rng.integers(NUM_ACTIONS, size=64)] = 1
    obs = rng.random((64, size)).astype(np.float32)
    batch = {"obs": {"observation": torch.as_tensor(obs), "action_mask": torch.as_tensor(mask)}}
    with torch.no_grad():
        for fwd in (module.forward_inference, module.forward_exploration):
            logits = fwd({"obs": dict(batch["obs"])})["action_dist_inputs"]
            probs = torch.softmax(logits, dim=-1).numpy()
            assert np.all(probs[mask == 0] == 0.0)
            assert np.allclose(probs[mask == 1].sum(), 64, atol=1e-3)
    assert set(batch["obs"]) == {"observation", "action_mask"}  # the input batch is not mutated
    values = module.compute_values({"obs": dict(batch["obs"])})
    assert values.shape == (64,)


@needs_ray
def test_tiny_training_then_evaluate_the_checkpoint(tmp_path, monkeypatch):
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    from lama_dice.agents.rllib_agent import RLlibPolicy
    from lama_dice.evaluation import evaluate
    from lama_dice.train.rllib.trainer import train

    cfg = parse_rllib_config(_cfg(
        iterations=2, env={"num_players": 2},
        opponents=["threshold:0.2"], selfplay={"weight": 0.5},
        ray={"num_cpus": 2, "num_env_runners": 1},
        ppo={"train_batch_size": 200, "minibatch_size": 100, "num_epochs": 1},
        model={"hidden": [16]}, eval={"final_games": 0}, checkpoint={"every": 1},
    ))
    res = train(cfg, run_dir=tmp_path / "run", quiet=True)
    assert res.iterations == 2 and not res.interrupted
    assert res.timesteps >= 2 * 200
    assert (res.checkpoint / "lama_dice.json").is_file()
    assert (tmp_path / "run" / "checkpoints" / "iter-000001").is_dir()

    # TensorBoard has the SB3 pipeline's game scalars
    acc = EventAccumulator(str(tmp_path / "run" / "tb"))
    acc.Reload()
    tags = set(acc.Tags()["scalars"])
    for tag in ("game/win_rate", "game/points_per_round", "game/bust_rate", "game/quit_rate", "game/went_out_rate"):
        assert tag in tags
        assert all(0.0 <= e.value <= (31.0 if "points" in tag else 1.0) for e in acc.Scalars(tag))
    assert "rllib/entropy" in tags

    # Ray unpickles checkpoints: without the opt-in, rllib:PATH is one line saying so and how to export
    from lama_dice.agents.trust import ENV_VAR, UntrustedFileError

    monkeypatch.delenv(ENV_VAR, raising=False)
    with pytest.raises(UntrustedFileError, match=r"unpickles.*lama-dice export rllib:.*--allow-pickle") as e:
        make_agent(f"rllib:{tmp_path / 'run'}")
    assert "\n" not in str(e.value)
    monkeypatch.setenv(ENV_VAR, "1")

    # the checkpoint plays through the evaluation harness as rllib:PATH (the run folder means final/)
    result = evaluate([f"rllib:{tmp_path / 'run'}", "random"], games=6, seed=0)
    assert result.agents[0].games == 6 and result.agents[0].spec == f"rllib:{tmp_path / 'run'}"
    agent = make_agent(f"rllib:{tmp_path / 'run' / 'checkpoints' / 'iter-000001'}", seed=0)
    assert isinstance(agent, RLlibPolicy) and agent.num_players == 2
    with pytest.raises(RLlibCheckpointError, match="trained for 2 players"):
        agent.check_compatible(3)

    # exported once, it is a weights-only agent file that makes the same moves on the same games
    from lama_dice.agents.ppo import PPOPolicy
    from lama_dice.cli.main import main
    from lama_env.engine import LamaGame

    out = tmp_path / "rl.safetensors"
    assert main(["export", f"rllib:{tmp_path / 'run'}", str(out)]) == 0
    monkeypatch.delenv(ENV_VAR)  # the exported file needs no opt-in
    exported = PPOPolicy(out)
    monkeypatch.setenv(ENV_VAR, "1")
    source = make_agent(f"rllib:{tmp_path / 'run'}")
    assert exported.sidecar["training"]["algorithm"] == "PPO (Ray RLlib)"
    for seed in range(10):
        games = [LamaGame(2, seed=seed, record=False), LamaGame(2, seed=seed, record=False)]
        while not games[0].game_over:
            a, b = (p.act(g, g.legal_actions()) for p, g in zip((source, exported), games, strict=True))
            assert a == b
            for g in games:
                g.step(a)


@needs_ray
def test_run_folder_is_never_overwritten(tmp_path):
    from lama_dice.train.rllib.trainer import train
    from lama_dice.train.runs import RunDirError

    run = tmp_path / "run"
    run.mkdir()
    (run / "notes.txt").write_text("mine")
    with pytest.raises(RunDirError, match="not empty") as e:
        train(parse_rllib_config(_cfg(iterations=1)), run_dir=run, quiet=True)
    assert "\n" not in str(e.value)
    assert [p.name for p in run.iterdir()] == ["notes.txt"]


@needs_ray
@pytest.mark.parametrize("make_path", [
    lambda tmp: tmp / "missing",
    lambda tmp: tmp,  # an empty folder
    lambda tmp: (tmp / "f.txt").write_text("x") and tmp / "f.txt",
])
def test_bad_checkpoint_is_one_line(tmp_path, make_path):
    path = make_path(tmp_path)
    with pytest.raises(RLlibCheckpointError) as e:
        make_agent(f"rllib:{path}")
    assert "\n" not in str(e.value) and str(path) in str(e.value)
