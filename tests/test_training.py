"""Training end to end on configs/smoke.yaml: TensorBoard scalars, checkpoints that play, resume, Ctrl-C, self-play."""

from __future__ import annotations

import io
import json
import os
import shlex
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import numpy as np
import pytest
import yaml

pytest.importorskip("sb3_contrib")
pytest.importorskip("tensorboard")

from stable_baselines3.common.callbacks import BaseCallback
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

from lama_dice.agents.ppo import CheckpointError, PPOPolicy, read_sidecar
from lama_dice.agents.registry import make_agent
from lama_dice.cli.main import main
from lama_dice.evaluation import evaluate
from lama_dice.train import shell
from lama_dice.train.config import ConfigError, load_config, parse_config
from lama_dice.train.runs import RunDirError
from lama_dice.train.selfplay import MixtureOpponent, PoolReader, SnapshotPool, WeightedSpec
from lama_dice.train.trainer import make_vec_env, print_run_files, train
from lama_env.engine import LamaGame

SMOKE = Path(__file__).resolve().parent.parent / "configs" / "smoke.yaml"


def _scalars(tb_dir: Path) -> dict[str, list[int]]:
    ea = EventAccumulator(str(tb_dir), size_guidance={"scalars": 0})
    ea.Reload()
    return {tag: [e.step for e in ea.Scalars(tag)] for tag in ea.Tags()["scalars"]}


@pytest.fixture(scope="module")
def smoke_run(tmp_path_factory):
    """One smoke training run (configs/smoke.yaml), shared by the tests below."""
    out = io.StringIO()
    result = train(SMOKE, run_dir=tmp_path_factory.mktemp("runs") / "smoke", progress_bar=False, out=out)
    return result, out.getvalue()


def test_smoke_run_writes_the_run_folder(smoke_run):
    result, printed = smoke_run
    run = result.run_dir
    cfg = load_config(SMOKE)
    assert not result.interrupted and result.timesteps >= cfg.total_timesteps
    assert result.checkpoint == run / "final.zip"
    for name in ("config.yaml", "final.zip", "final.json", "best.zip", "eval.json", "evaluations.jsonl",
                 "selfplay/pool.json"):
        assert (run / name).is_file(), name
    assert sorted(p.name for p in (run / "checkpoints").glob("step-*.zip")) == [
        "step-000000001024.zip", "step-000000002048.zip"]
    # the saved config is the resolved one: it reproduces the run
    assert parse_config(yaml.safe_load((run / "config.yaml").read_text()), check_agents=False) == cfg
    # the evaluation table was printed and saved
    report = json.loads((run / "eval.json").read_text())
    assert set(report["results"]) == {"random", "threshold:0.2"}
    assert report["results"]["random"]["games"] == cfg.eval.final_games
    assert "learner win rate" in printed and "threshold:0.2" in printed
    # each periodic evaluation printed one line, and the end says where the files are
    evals = [line for line in printed.splitlines() if line.startswith("eval @ ")]
    assert [line.split(" steps")[0] for line in evals] == ["eval @ 1,024", "eval @ 2,048"]
    assert all("vs random " in line and "vs threshold:0.2 " in line and "points/round" in line
               and "| best " in line for line in evals)
    assert f"run folder:         {run}" in printed and f"best checkpoint:    {run / 'best.zip'}" in printed
    assert f"tensorboard --logdir {run / 'tb'}" in printed
    side = read_sidecar(run / "final.zip")
    assert side["num_players"] == 2 and side["config"] == "smoke" and side["timesteps"] == result.timesteps
    # every checkpoint records the wall time of learning so far (for curves against time)
    secs = [read_sidecar(run / "checkpoints" / f"step-{n:012d}.zip")["train_seconds"] for n in (1024, 2048)]
    assert 0 < secs[0] <= secs[1] <= side["train_seconds"] <= result.seconds + 0.05  # (sidecars round to 0.1 s)


def _printed_commands(run: Path) -> dict[str, str]:
    out = io.StringIO()
    print_run_files(run, out)
    lines = dict(line.split(":", 1) for line in out.getvalue().splitlines())
    return {"tensorboard": lines["TensorBoard events"].split("(", 1)[1].rstrip(")").strip(),
            "play": lines["play the best"].strip()}


def test_the_printed_commands_run_as_printed_in_a_plain_shell(smoke_run, monkeypatch):
    """As in the shell of `make train`: the venv not activated, neither lama-dice nor tensorboard on PATH."""
    run = smoke_run[0].run_dir
    bindir = Path(sys.executable).parent
    plain = os.pathsep.join(d for d in os.environ.get("PATH", "").split(os.pathsep)
                            if d and Path(d).resolve() != bindir.resolve() and not (Path(d) / "lama-dice").exists())
    monkeypatch.setenv("PATH", plain)
    monkeypatch.chdir(run.parent)  # the run folder is then a relative path
    cmds = _printed_commands(run)
    assert cmds["tensorboard"] == f"{bindir / 'tensorboard'} --logdir {run.name}/tb"
    assert cmds["play"] == f"{bindir / 'lama-dice'} play --players 2 --opponents ppo:{run.name}/best.zip"
    env = {**os.environ, "PATH": plain}
    tb = subprocess.run(["bash", "-c", cmds["tensorboard"] + " --version_tb"], env=env, capture_output=True,
                        text=True, timeout=120)
    assert tb.returncode == 0 and tb.stdout.strip(), tb.stderr
    play = subprocess.run(["bash", "-c", cmds["play"] + " --seed 1"], env=env, stdin=subprocess.DEVNULL,
                          capture_output=True, text=True, timeout=120)
    assert play.returncode == 0 and "Game stopped (end of input)" in play.stdout, play.stderr
    # on PATH (an activated venv), the bare names; a venv below the current folder, relative paths
    monkeypatch.setenv("PATH", os.pathsep.join([str(bindir), plain]))
    assert _printed_commands(run)["tensorboard"].startswith("tensorboard --logdir ")
    monkeypatch.setenv("PATH", plain)
    monkeypatch.chdir(bindir.parent.parent)
    assert _printed_commands(run)["play"].startswith(f"{bindir.parent.name}/bin/lama-dice play ")


def test_commands_fall_back_to_python_m(monkeypatch, tmp_path):
    monkeypatch.setattr(sys, "executable", str(tmp_path / "venv" / "bin" / "python"))
    monkeypatch.chdir(tmp_path)
    assert shell.command("lama-dice", "lama_dice") == "venv/bin/python -m lama_dice"
    assert shell.shell_path(tmp_path / "a b" / "c") == "'a b/c'"
    assert shell.near_path("/") == "/"


def test_smoke_run_logs_the_game_scalars(smoke_run):
    result, _ = smoke_run
    tags = _scalars(result.run_dir / "tb")
    for tag in ("game/win_rate", "game/points_per_round", "game/bust_rate", "game/quit_rate",
                "game/went_out_rate", "game/episode_length", "game/rounds_per_episode",
                "eval/random/win_rate", "eval/random/win_rate_ci_low", "eval/random/win_rate_ci_high",
                "eval/random/points_per_round", "eval/threshold_0.2/win_rate", "eval/threshold_0.2/bust_rate",
                "eval/score", "rollout/ep_len_mean", "train/loss", "train/entropy_loss"):
        assert tag in tags, tag
    assert tags["eval/random/win_rate"] == [1024, 2048]


def test_checkpoints_load_and_play(smoke_run):
    run = smoke_run[0].run_dir
    for spec in (f"ppo:{run / 'final.zip'}", f"ppo:{run / 'checkpoints' / 'step-000000001024.zip'}", f"ppo:{run}"):
        agent = make_agent(spec)
        assert isinstance(agent, PPOPolicy)
        res = evaluate([agent, "random"], num_players=2, games=6, seed=1)
        assert res.agents[0].games == 6
    assert make_agent(f"ppo:{run}").path == run / "best.zip"
    # every checkpoint's sidecar describes its actor network, so ppo: never needs SB3's unpickling loader
    assert read_sidecar(run / "final.zip")["network"] == {"kind": "mlp", "inputs": 52, "hidden": [32, 32],
                                                          "activation": "tanh", "outputs": 129}


def test_the_run_folder_reproduces_the_run(smoke_run, tmp_path):
    import zipfile

    run = smoke_run[0].run_dir
    again = train(run / "config.yaml", run_dir=tmp_path / "again", progress_bar=False, out=io.StringIO())
    weights = [zipfile.ZipFile(r / "final.zip").read("policy.pth") for r in (run, again.run_dir)]
    assert weights[0] == weights[1]
    results = [json.loads((r / "eval.json").read_text())["results"] for r in (run, again.run_dir)]
    for res in results:
        for r in res.values():
            r.pop("elapsed_s")
    assert results[0] == results[1]


def test_self_play_pool(smoke_run):
    run = smoke_run[0].run_dir
    members = json.loads((run / "selfplay" / "pool.json").read_text())["members"]
    assert len(members) == 2  # pool_size
    assert all(Path(m).is_file() for m in members)
    # a seat with a pool-only mixture plays the snapshots
    seat = MixtureOpponent([], PoolReader(run / "selfplay" / "pool.json"), seed=0)
    for seed in range(4):
        g = LamaGame(2, seed=seed)
        assert seat.act(g, g.legal_actions()) in g.legal_actions()
        assert isinstance(seat.current, PPOPolicy) and seat.current_name in members


def test_mixture_redraws_per_episode_and_follows_weights():
    seat = MixtureOpponent([WeightedSpec("random", 3.0), WeightedSpec("always-roll", 1.0)], seed=1)
    names = []
    for seed in range(400):
        g = LamaGame(2, seed=seed)
        seat.act(g, g.legal_actions())
        first = seat.current_name
        seat.act(g, g.legal_actions())  # same game: same opponent
        assert seat.current_name == first
        names.append(first)
    share = names.count("random") / len(names)
    assert 0.65 < share < 0.85  # 3:1 weights (expected 0.75, sd 0.022)


def test_pool_reader_follows_the_pool_file(tmp_path, smoke_run):
    run = smoke_run[0].run_dir
    pool = SnapshotPool(tmp_path, pool_size=1, initial=[str(run / "final.zip")])
    reader = PoolReader(pool.file)
    assert reader.members() == []  # no pool file yet: an empty pool
    pool.write_pool_file()
    assert reader.members() == [str((run / "final.zip").resolve())]
    assert isinstance(reader.get(reader.members()[0]), PPOPolicy)
    assert reader.get(str(tmp_path / "gone.zip")) is None  # an unloadable member is skipped


def test_action_mask_cache_matches_the_envs():
    cfg = parse_config({"opponents": ["random"], "env": {"n_envs": 3, "vec_env": "dummy"}}, check_agents=False)
    vec = make_vec_env(cfg)
    rng = np.random.default_rng(0)
    vec.reset()
    try:
        for _ in range(200):
            cached = np.stack(vec.env_method("action_masks"))
            direct = np.stack([e.unwrapped.action_masks() for e in vec.unwrapped.envs]).astype(bool)
            assert np.array_equal(cached, direct)
            vec.step(np.array([rng.choice(np.flatnonzero(m)) for m in cached]))
    finally:
        vec.close()


class _InterruptAt(BaseCallback):
    """Raise KeyboardInterrupt (as Ctrl-C would) once ``steps`` have been trained."""

    def __init__(self, steps: int) -> None:
        super().__init__()
        self.steps = steps

    def _on_step(self) -> bool:
        if self.num_timesteps >= self.steps:
            raise KeyboardInterrupt
        return True


def _as_printed(line: str) -> list[str]:
    """The arguments of a printed ``lama-dice ...`` command line (without the program: a path, or python -m)."""
    words = shlex.split(line)
    return words[3:] if words[1:3] == ["-m", "lama_dice"] else words[1:]


def test_ctrl_c_saves_and_resume_continues_as_printed(tmp_path, capsys):
    """A run started with --total-timesteps, interrupted and resumed as printed, still aims at that total."""
    out = io.StringIO()
    run = tmp_path / "run"
    # smoke.yaml says 2,048 steps; this run is started for 1,200, which whole rollouts of 512 make 1,536
    first = train(SMOKE, run_dir=run, total_timesteps=1200, progress_bar=False, callbacks=[_InterruptAt(600)], out=out)
    printed = out.getvalue()
    assert first.interrupted and first.checkpoint == run / "interrupted.zip"
    assert 600 <= first.timesteps < 1024
    assert ("total_timesteps is 1,200: will train 1,536, because training runs whole rollouts of ppo.n_steps x "
            "env.n_envs = 256 x 2 = 512 steps") in printed
    resume = next(line for line in printed.splitlines() if line.startswith("resume with: "))
    assert resume.endswith(f" train --resume {run}")  # the run folder alone: no config path to get wrong
    assert not (run / "final.zip").exists()
    # what the resumed run would use: its own config, the first session's --total-timesteps included
    assert main(["train", "--resume", str(run), "--check"]) == 0
    assert yaml.safe_load(capsys.readouterr().out)["total_timesteps"] == 1200
    # naming the config it was started from as well changes nothing, and says so
    assert main(["train", str(SMOKE), "--resume", str(run), "--check"]) == 0
    captured = capsys.readouterr()
    assert yaml.safe_load(captured.out)["total_timesteps"] == 1200
    assert "resuming with the run's total_timesteps 1,200 (config.yaml), not 2,048" in captured.err
    assert main(["train", str(SMOKE), "--resume", str(run), "--check", "--total-timesteps", "1300"]) == 0
    captured = capsys.readouterr()  # the command line's total: nothing to say about the config's
    assert yaml.safe_load(captured.out)["total_timesteps"] == 1300 and "resuming with" not in captured.err
    # resumed as printed: it continues counting steps and logging, and stops at 1,200 (not smoke.yaml's 2,048)
    before = read_sidecar(run / "interrupted.zip")
    assert main(_as_printed(resume.removeprefix("resume with: "))) == 0
    second = capsys.readouterr().out
    done = read_sidecar(run / "final.zip")["timesteps"]
    assert done == first.timesteps + 1024 and done < 2048
    assert (f"total_timesteps is 1,200: will train 1,024 more to {done:,} in all" in second
            and f"trained 1,024 steps ({done:,} in all)" in second), second
    # the training clock goes on from the interrupted checkpoint's
    assert read_sidecar(run / "final.zip")["train_seconds"] > before["train_seconds"]
    assert len(list((run / "tb").glob("events.out.tfevents.*"))) == 2
    fps_steps = _scalars(run / "tb")["time/fps"]
    assert fps_steps == sorted(fps_steps) and fps_steps[-1] >= 1200 and min(fps_steps) < first.timesteps
    # a longer total on the command line: saved beside config.yaml, and the run's config from then on
    third = train(resume=run, total_timesteps=done + 1, progress_bar=False, out=io.StringIO())
    assert third.timesteps == done + 512 and not third.interrupted
    assert yaml.safe_load((run / "config.yaml").read_text())["total_timesteps"] == 1200
    [resumed] = run.glob("config.resumed-*.yaml")
    assert yaml.safe_load(resumed.read_text())["total_timesteps"] == done + 1
    assert main(["train", "--resume", str(run), "--check"]) == 0
    assert yaml.safe_load(capsys.readouterr().out)["total_timesteps"] == done + 1


def _tree(folder: Path) -> dict[str, tuple[int, int]]:
    """Every file and folder under ``folder`` with its size and modification time."""
    return {str(p.relative_to(folder)): (p.stat().st_size, p.stat().st_mtime_ns) for p in folder.rglob("*")}


def test_resume_of_a_folder_that_does_not_exist_says_so(tmp_path, capsys):
    """Not a list of the shipped agents (a run is never resumed from one): the folder is not there."""
    missing = tmp_path / "runs" / "nonexistent"
    assert main(["train", "--resume", str(missing)]) == 2
    err = capsys.readouterr().err
    assert f"cannot resume {missing}: there is no such run folder or checkpoint file" in err, err
    assert "shipped" not in err and len(err.strip().splitlines()) == 1


def test_resume_refusals(smoke_run, tmp_path, capsys):
    run = smoke_run[0].run_dir
    before = _tree(run)
    with pytest.raises(ConfigError, match="already trained"):
        train(SMOKE, resume=run / "final.zip", progress_bar=False, out=io.StringIO())
    with pytest.raises(ConfigError, match="already trained"):
        train(resume=run, progress_bar=False, out=io.StringIO())
    # a changed config that is refused leaves no config.resumed-*.yaml and no events file behind
    with pytest.raises(ConfigError, match="already trained"):
        train(SMOKE, resume=run / "final.zip", seed=123, progress_bar=False, out=io.StringIO())
    assert _tree(run) == before
    # another config than the run's is refused, naming what differs and how to resume the run as it was started
    three = tmp_path / "three.yaml"
    three.write_text(SMOKE.read_text().replace("num_players: 2", "num_players: 3").replace("n_epochs: 2",
                                                                                           "n_epochs: 3"))
    with pytest.raises(ConfigError, match=r"differs from the run's config.yaml in env.num_players, ppo.n_epochs; "
                                          r"resume the run as it was started \(train --resume "):
        train(three, resume=run / "final.zip", progress_bar=False, out=io.StringIO())
    assert main(["train", str(three), "--resume", str(run), "--total-timesteps", "99999"]) == 2
    assert "differs from the run's config.yaml" in capsys.readouterr().err
    with pytest.raises(CheckpointError, match="no such run folder or checkpoint file"):
        train(SMOKE, resume=tmp_path / "nothing.zip", progress_bar=False, out=io.StringIO())
    # a checkpoint outside a run folder needs the config it was trained with
    alone = tmp_path / "alone"
    alone.mkdir()
    shutil.copy(run / "final.zip", alone / "final.zip")
    shutil.copy(run / "final.json", alone / "final.json")
    with pytest.raises(ConfigError, match=r"not in a run folder with a config\.yaml; give the config"):
        train(resume=alone / "final.zip", progress_bar=False, out=io.StringIO())
    with pytest.raises(CheckpointError, match="trained for 2 players"):
        train(three, resume=alone / "final.zip", progress_bar=False, out=io.StringIO())
    # a checkpoint of an older version (no network in its sidecar) is checked with SB3's loader: resuming
    # unpickles anyway, so it needs no --allow-pickle
    legacy = tmp_path / "legacy"
    legacy.mkdir()
    shutil.copy(run / "final.zip", legacy / "final.zip")
    side = read_sidecar(run / "final.zip")
    side.pop("network")
    (legacy / "final.json").write_text(json.dumps(side))
    with pytest.raises(CheckpointError, match="trained for 2 players"):
        train(three, resume=legacy / "final.zip", progress_bar=False, out=io.StringIO())
    # a checkpoint whose weights load but whose model does not (no SB3 data): refused, nothing written
    broken = tmp_path / "broken"
    shutil.copytree(run, broken)
    with zipfile.ZipFile(run / "final.zip") as src, zipfile.ZipFile(broken / "final.zip", "w") as dst:
        for item in src.infolist():
            if item.filename != "data":
                dst.writestr(item, src.read(item))
    os.utime(broken / "final.zip", (1e9, 1e9))  # (not the newest checkpoint of the folder: name it)
    kept = _tree(broken)
    with pytest.raises(CheckpointError, match="cannot resume"):
        train(resume=broken / "final.zip", total_timesteps=99_999, progress_bar=False, out=io.StringIO())
    assert _tree(broken) == kept
    # nothing to train at all; a run folder given as the config
    assert main(["train"]) == 2
    assert "give a CONFIG to train" in capsys.readouterr().err
    assert main(["train", str(run)]) == 2
    assert f"is a folder, not a config file (a run folder: continue it with --resume {run}" in capsys.readouterr().err
    assert _tree(run) == before


def test_a_run_folder_is_never_reused(smoke_run):
    run = smoke_run[0].run_dir
    before = sorted(p.name for p in run.iterdir())
    with pytest.raises(RunDirError, match="not empty"):
        train(SMOKE, run_dir=run, progress_bar=False, out=io.StringIO())
    assert sorted(p.name for p in run.iterdir()) == before


def test_solo_training_and_baselines(tmp_path):
    cfg = parse_config({
        "name": "solo-smoke", "total_timesteps": 512,
        "env": {"num_players": 1, "episode": "round", "reward": "points", "reward_scale": 0.05,
                "n_envs": 2, "vec_env": "dummy"},
        "ppo": {"n_steps": 128, "batch_size": 64, "n_epochs": 1}, "policy": {"net_arch": [16]},
        "eval": {"every": 256, "games": 4, "final_games": 4, "opponents": ["optimal"]},
        "checkpoint": {"every": 0},
    })
    out = io.StringIO()
    result = train(cfg, runs_root=tmp_path, progress_bar=False, out=out)
    assert result.run_dir.parent == tmp_path and result.run_dir.name.startswith("solo-smoke-")
    report = json.loads((result.run_dir / "eval.json").read_text())
    assert set(report["results"]) == {"solo", "optimal"}
    printed = out.getvalue()
    assert "points/round" in printed and "learner" in printed and "optimal" in printed
    tags = _scalars(result.run_dir / "tb")
    assert "eval/solo/points_per_round" in tags and "eval/baseline_optimal/points_per_round" in tags
    assert make_agent(f"ppo:{result.run_dir}").num_players == 1
    assert not list((result.run_dir / "checkpoints").glob("*.zip"))  # checkpoint.every: 0


def test_python_m_train_is_the_train_command(tmp_path):
    import subprocess
    import sys

    bad = tmp_path / "bad.yaml"
    bad.write_text("opponents: [random]\nenv: {n_envs: 0}\n")
    proc = subprocess.run([sys.executable, "-m", "train", str(bad)], capture_output=True, text=True,
                          cwd=Path(__file__).resolve().parent.parent)
    assert proc.returncode == 2
    assert proc.stderr.strip() == (f"lama-dice train: error: {bad}: env.n_envs: "
                                   "Input should be greater than or equal to 1 (got 0)")
    shutil.rmtree(tmp_path, ignore_errors=True)


def test_pretrain_warm_start_imitates_the_teacher(tmp_path):
    """A behaviour-cloning warm start makes the fresh policy agree with its teacher before PPO runs."""
    cfg = parse_config({
        "name": "bc-smoke", "total_timesteps": 128,
        "env": {"num_players": 1, "episode": "round", "reward": "points", "reward_scale": 0.05,
                "n_envs": 1, "vec_env": "dummy"},
        "pretrain": {"teacher": "threshold:0.2", "episodes": 300, "epochs": 30, "batch_size": 128,
                     "learning_rate": 3e-3},
        "ppo": {"n_steps": 128, "batch_size": 64, "n_epochs": 1, "learning_rate": 1e-9},
        "policy": {"net_arch": [32, 32]},
        "eval": {"every": 0, "games": 4, "final_games": 0, "opponents": ["optimal"]},
        "checkpoint": {"every": 0},
    })
    out = io.StringIO()
    result = train(cfg, runs_root=tmp_path, progress_bar=False, out=out)
    assert "warm start:" in out.getvalue()
    tags = _scalars(result.run_dir / "tb")
    assert "pretrain/teacher_agreement" in tags and "pretrain/policy_loss" in tags
    # the learner now plays like its teacher on states it has not seen
    learner = make_agent(f"ppo:{result.run_dir / 'final.zip'}")
    teacher = make_agent("threshold:0.2")
    same = total = 0
    for seed in range(40):
        game = LamaGame(1, seed=10_000 + seed, record=False)
        while not game.game_over and game.rounds_finished == 0:  # the first round
            legal = game.legal_actions()
            a = teacher.act(game, legal)
            same += learner.act(game, legal) == a
            total += 1
            game.step(a)
    assert same / total > 0.9


def test_pretrain_teacher_is_checked(tmp_path):
    with pytest.raises(ConfigError, match=r"pretrain.teacher"):
        parse_config({"opponents": ["random"], "pretrain": {"teacher": "nonsense"}})
    solo_env = {"num_players": 1, "episode": "round", "reward": "points"}
    with pytest.raises(ConfigError, match=r"pretrain.states: 'solo' is for the solo variant"):
        parse_config({"opponents": ["random"], "pretrain": {"teacher": "optimal", "states": "solo"}})
    with pytest.raises(ConfigError, match=r"pretrain.teacher: lookahead is not a rule-based agent"):
        parse_config({"env": solo_env, "pretrain": {"teacher": "lookahead", "states": "solo"}})
    with pytest.raises(ConfigError, match=r"pretrain.states"):
        parse_config({"env": solo_env, "pretrain": {"teacher": "optimal", "states": "every"}})


def test_solo_states_cover_the_round_at_every_total():
    """pretrain.states: solo -- every solo decision, labelled by the teacher, weighted by its visits."""
    from lama_dice.agents.solo_exact import solo_observation
    from lama_dice.agents.solver import solver_for
    from lama_dice.train.pretrain import collect_solo_states
    from lama_env.engine import Phase
    from lama_env.observation import observation_layout
    from lama_env.rules import RulesConfig

    rules = RulesConfig()
    data = collect_solo_states("optimal", rules, reward_scale=0.05, seed=0, totals_per_state=2)
    n = len(data.actions)
    assert data.obs.shape == (n, 37) and data.masks.shape == (n, 129) and data.episodes == 0
    assert data.weights is not None and data.weights.sum() == pytest.approx(1.0) and data.weights.min() > 0
    assert data.masks[np.arange(n), data.actions].all()  # every label is legal
    blocks = {e.name: e for e in observation_layout(1)}
    turn = data.obs[:, blocks["decision"].start] == 1.0
    totals = np.rint(data.obs[turn, blocks["total"].start] * 40).astype(int)
    assert set(totals.tolist()) == set(range(40))  # each turn state at every total
    # a deal's display at a turn: the optimal decision, the exact value as the value target
    solver = solver_for(rules)
    d = (0, 1, 1, 0, 2, 1, 1)
    x = solo_observation(rules, d, 0, Phase.TURN)
    i = int(np.flatnonzero((data.obs == x).all(axis=1))[0])
    assert data.actions[i] == (1 if solver.quits(d) else 0)
    assert data.returns[i] == pytest.approx(-0.05 * solver.value(d), rel=1e-6)
    # the weights: 90% by how often optimal play meets a state, 10% spread evenly over the states
    turns, discards = solver.visits(make_agent("optimal"))
    share = sum(turns.values()) / (sum(turns.values()) + sum(discards.values()))
    turn_states = len(set(map(tuple, data.obs[turn][:, :7])))
    all_states = turn_states + len(set(map(tuple, data.obs[~turn][:, list(range(7)) + list(range(26, 33))])))
    assert data.weights[turn].sum() == pytest.approx(0.9 * share + 0.1 * turn_states / all_states, rel=1e-6)


def test_curves_plot_a_run(smoke_run, tmp_path):
    from lama_dice.cli.curves import CurvesError, plot_curves, read_scalars
    from lama_dice.cli.main import main

    result, _ = smoke_run
    scalars = read_scalars(result.run_dir)
    assert "eval/random/win_rate" in scalars and "game/win_rate" in scalars
    steps, _ = scalars["eval/random/win_rate"]
    assert steps == sorted(steps) and len(steps) >= 2
    out = plot_curves(result.run_dir, tmp_path / "c.png", title="smoke")
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    with pytest.raises(CurvesError, match="no TensorBoard events"):
        plot_curves(tmp_path, tmp_path / "d.png")
    assert main(["curves", str(tmp_path / "nothing"), "--out", str(tmp_path / "e.png")]) == 2


def _events(run: Path, evals: bool) -> None:
    """TensorBoard events as a run of a config logs them (eval/NAME/... only where it evaluates while it trains)."""
    from torch.utils.tensorboard import SummaryWriter

    w = SummaryWriter(str(run / "tb"))
    for i, step in enumerate(range(0, 4_000_000, 500_000)):
        w.add_scalar("game/win_rate", 0.3 + i / 100, step)
        for name in ("random", "threshold_0.2") if evals else ():
            w.add_scalar(f"eval/{name}/win_rate", 0.5, step)
            w.add_scalar(f"eval/{name}/win_rate_ci_low", 0.4, step)
            w.add_scalar(f"eval/{name}/win_rate_ci_high", 0.6, step)
    w.close()
    (run / "config.yaml").write_text("eval:\n  opponents: [random, threshold:0.2]\n")


def test_curves_say_what_a_panel_lacks_name_opponents_by_spec_and_never_overwrite(tmp_path, capsys):
    from lama_dice.cli.curves import curves_figure

    quiet, evaluated = tmp_path / "quiet", tmp_path / "evaluated"
    _events(quiet, evals=False)  # the default config: eval.every: 0
    _events(evaluated, evals=True)
    ev, games = curves_figure(quiet).axes
    assert not ev.lines and "no evaluation in this run's events" in ev.texts[0].get_text()
    assert "--evaluate" in ev.texts[0].get_text() and games.lines and not games.texts
    ev, games = curves_figure(evaluated).axes
    assert [t.get_text() for t in ev.get_legend().get_texts()] == ["vs random", "vs threshold:0.2"]
    assert ev.get_xlabel() == games.get_xlabel() == "training steps (millions)"
    assert max(ev.lines[0].get_xdata()) == 3.5 and not ev.texts  # in millions: no "1e6" beside the label
    png = tmp_path / "c.png"
    assert main(["curves", str(quiet), "--out", str(png)]) == 0
    first = png.read_bytes()
    assert main(["curves", str(evaluated), "--out", str(png)]) == 2
    assert "the file exists; give another name, or --force to overwrite it" in capsys.readouterr().err
    assert png.read_bytes() == first
    assert main(["curves", str(evaluated), "--out", str(png), "--force"]) == 0
    assert png.read_bytes() != first


def test_curves_evaluate_the_checkpoints(smoke_run, tmp_path):
    """Curves --evaluate: every checkpoint against an opponent, against wall time and steps, as PNG and JSON."""
    from lama_dice.cli.curves import CurvesError, checkpoint_curve
    from lama_dice.cli.main import main

    run = smoke_run[0].run_dir
    data = checkpoint_curve(run, ["random"], games=8, seed=3)
    assert [p["checkpoint"] for p in data["points"]] == ["step-000000001024.zip", "step-000000002048.zip",
                                                         "final.zip"]
    assert [p["timesteps"] for p in data["points"]] == [1024, 2048, smoke_run[0].timesteps]
    secs = [p["train_seconds"] for p in data["points"]]
    assert secs == sorted(secs) and secs[0] > 0
    # the same games for each checkpoint as one evaluate() call gives
    direct = evaluate([f"ppo:{run / 'final.zip'}", "random"], num_players=2, games=8, seed=3).agents[0]
    assert data["points"][-1]["results"]["random"]["win_rate"] == direct.win_rate
    png, js = tmp_path / "t.png", tmp_path / "t.json"
    assert main(["curves", str(run), "--evaluate", "random", "--games", "4", "--out", str(png),
                 "--json", str(js), "--goal", "0.5"]) == 0
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert len(json.loads(js.read_text())["points"]) == 3
    with pytest.raises(CurvesError, match="no checkpoints"):
        checkpoint_curve(tmp_path, ["random"], games=4)
    # refused before any evaluation: an output folder that does not exist
    assert main(["curves", str(run), "--evaluate", "random", "--json", str(tmp_path / "no" / "x.json")]) == 2


def test_the_steps_announced_are_the_steps_run(tmp_path):
    """SB3 runs whole rollouts: the run announces (and its progress bar counts) the rounded-up total."""
    out = io.StringIO()
    result = train(SMOKE, run_dir=tmp_path / "r", total_timesteps=600, progress_bar=False, out=out)
    rollout = 256 * 2  # ppo.n_steps x env.n_envs of configs/smoke.yaml
    assert result.timesteps == 2 * rollout
    assert f"{2 * rollout:,} steps to go" in out.getvalue()
    assert f"trained {2 * rollout:,} steps" in out.getvalue()


def test_progress_line_solo_and_duel():
    from lama_dice.train.callbacks import progress_line

    solo = {"solo": {"mean_points_per_round": 10.5, "points_per_round_ci95": [10.1, 10.9]},
            "optimal": {"mean_points_per_round": 10.18}}
    assert progress_line(4096, solo, 1, -10.5, True) == (
        "eval @ 4,096 steps | points/round 10.50 [10.10, 10.90] | optimal 10.18 | best 10.50 (new)")
    duel = {"random": {"win_rate": 0.9, "win_rate_ci95": [0.85, 0.94], "mean_points_per_round": 8.0, "rounds": 30},
            "optimal": {"win_rate": 0.5, "win_rate_ci95": [0.4, 0.6], "mean_points_per_round": 11.0, "rounds": 10}}
    assert progress_line(512, duel, 2, 0.75, False) == (
        "eval @ 512 steps | vs random 90.0% [85.0, 94.0] | vs optimal 50.0% [40.0, 60.0] | points/round 8.75 "
        "| best 0.750")


def test_warm_start_from_a_trainer_checkpoint_copies_actor_and_value(smoke_run):
    """policy.init_from a .zip: policy.pth read weights-only gives every tensor, the value network included."""
    import torch
    from sb3_contrib import MaskablePPO

    from lama_dice.agents.ppo import read_policy_state
    from lama_dice.train.masked_distribution import LamaMaskablePolicy
    from lama_dice.train.trainer import init_weights, ppo_kwargs

    final = smoke_run[0].run_dir / "final.zip"
    cfg = load_config(SMOKE)
    cfg = cfg.model_copy(update={"policy": cfg.policy.model_copy(update={"init_from": str(final)})})
    env = make_vec_env(cfg)
    try:
        model = MaskablePPO(LamaMaskablePolicy, env, **ppo_kwargs(cfg), seed=1)
        init_weights(model, cfg)
        src = read_policy_state(final)
        mine = model.policy.state_dict()
        assert set(src) == set(mine) and any(k.startswith("value_net.") for k in src)
        assert all(torch.equal(mine[k], v) for k, v in src.items())
    finally:
        env.close()


def test_refusals_come_before_the_run_folder(tmp_path, capsys):
    """What the config check cannot see (no CUDA device) is refused before the run folder exists too."""
    import torch

    if torch.cuda.is_available():
        pytest.skip("this machine has a CUDA device")
    cfg = tmp_path / "cuda.yaml"
    cfg.write_text(SMOKE.read_text() + "device: cuda\n")
    root = tmp_path / "runs"
    assert main(["train", str(cfg), "--runs-root", str(root)]) == 2
    err = capsys.readouterr().err
    assert "device: cuda, but this torch finds no CUDA device" in err and len(err.strip().splitlines()) == 1
    assert not root.exists()
