"""Training configs: the shipped ones validate; bad ones fail before anything starts, naming the key."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from lama_dice.cli.main import main
from lama_dice.train.config import ConfigError, TrainConfig, describe_keys, load_config, parse_config
from lama_env.rules import RulesConfig

CONFIGS = Path(__file__).resolve().parent.parent / "configs"
#: Every shipped config (configs/*.yaml); RLlib's is checked by tests/test_rllib.py in its own venv, expert
#: iteration's (expert_iteration_*) by tests/test_expert_iteration.py.
SHIPPED = sorted(p.stem for p in CONFIGS.glob("*.yaml"))


def test_every_config_file_is_tested_here_and_listed_by_train_help(capsys):
    assert len(SHIPPED) >= 12 and "ppo_4p_fast" in SHIPPED
    with pytest.raises(SystemExit):
        main(["train", "--help"])
    shown = " ".join(capsys.readouterr().out.split())  # argparse wraps the help
    for name in SHIPPED:
        assert f" {name}," in shown or f" {name})" in shown or f" {name} " in shown, name


@pytest.mark.parametrize("name", [n for n in SHIPPED if n != "rllib_2p" and not n.startswith("expert_iteration")])
def test_shipped_configs_validate(name):
    cfg = load_config(CONFIGS / f"{name}.yaml")
    assert cfg.name == name
    # the resolved config reads back to the same config (what a run folder's config.yaml relies on)
    again = parse_config(yaml.safe_load(cfg.to_yaml()), check_agents=False)
    assert again == cfg


def test_defaults_fill_in_and_name_comes_from_the_file(tmp_path):
    path = tmp_path / "my-run.yaml"
    path.write_text("opponents: [random]\n")
    cfg = load_config(path)
    assert cfg.name == "my-run"
    assert cfg.env.num_players == 2 and cfg.env.vec_env == "subproc"
    assert cfg.opponents[0].agent == "random" and cfg.opponents[0].weight == 1.0
    assert cfg.env.rules == RulesConfig() and cfg.rules is cfg.env.rules  # parsed once, at load
    assert cfg.to_dict()["env"]["rules"] == {"triple_llama": "chip_only", "must_discard": True, "end_threshold": 40}
    assert cfg.ppo.gamma == 1.0
    keys = [k for k, _, _ in describe_keys()]
    assert "ppo.learning_rate" in keys and "selfplay.pool_size" in keys and "env.rules" in keys


BAD = [
    # (YAML text, the key the message must name, a phrase of the message)
    ("opponents: [random]\nppo: {learing_rate: 0.001}\n", "ppo.learing_rate", "unknown key"),
    ("opponents: [random]\nfoo: 1\n", "foo", "unknown key"),
    ("opponents: [random]\nenv: {num_player: 2}\n", "env.num_player", "unknown key"),
    ("opponents: [random]\nppo: {n_steps: lots}\n", "ppo.n_steps", "valid integer"),
    ("opponents: [random]\nppo: {n_steps: 10.5}\n", "ppo.n_steps", "integer"),
    ("opponents: [random]\nppo: {gamma: 1.5}\n", "ppo.gamma", "less than or equal to 1"),
    ("opponents: [random]\nenv: {num_players: 7}\n", "env.num_players", "less than or equal to 6"),
    ("opponents: [random]\nenv: {episode: match}\n", "env.episode", "'game' or 'round'"),
    ("opponents: [random]\nenv: {vec_env: threads}\n", "env.vec_env", "'subproc' or 'dummy'"),
    ("opponents: [random]\nenv: {rules: {end_threshold: x}}\n", "env.rules", "end_threshold must be an integer"),
    ("opponents: [random]\nenv: {rules: {llamas: 3}}\n", "env.rules", "unknown rules field 'llamas'"),
    ("opponents: [{agent: random, weight: -1}]\n", "opponents[0].weight", "greater than 0"),
    ("opponents: [{weight: 2}]\n", "opponents[0].agent", "required key is missing"),
    ("opponents: [random]\npolicy: {net_arch: [64, 0]}\n", "policy.net_arch", "positive"),
    ("opponents: [random]\npolicy: {net_arch: {pi: [64]}}\n", "policy.net_arch.vf", "missing"),
    ("opponents: []\n", "opponents", "list at least one opponent or enable selfplay"),
    ("env: {num_players: 1, reward: points}\nopponents: [random]\n", "opponents", "must be empty for the solo"),
    ("env: {num_players: 1}\n", "env.reward", "always 0 in the solo variant"),
    ("opponents: [random]\nppo: {batch_size: 100000}\n", "ppo.batch_size", "exceeds the rollout size"),
    ("opponents: [random]\nname: two words\n", "name", "pattern"),
    ("opponents: [random]\ntotal_timesteps: 0\n", "total_timesteps", "greater than or equal to 1"),
    ("opponents: [random]\neval: {opponents: []}\n", "eval.opponents", "at least one"),
    ("- just\n- a list\n", "", "must be a mapping"),
    # booleans are not numbers; non-finite floats are refused; network sizes are bounded before anything is built
    ("opponents: [random]\nenv: {num_players: true}\n", "env.num_players", "must be an integer, not a boolean"),
    ("opponents: [random]\nppo: {n_epochs: false}\n", "ppo.n_epochs", "must be an integer, not a boolean"),
    ("opponents: [random]\nppo: {clip_range: true}\n", "ppo.clip_range", "must be a number, not a boolean"),
    ("opponents: [random]\npolicy: {net_arch: [64, true]}\n", "policy.net_arch", "not a boolean"),
    ("opponents: [random]\ntotal_timesteps: 2.5e-3\n", "total_timesteps", "fractional part"),
    ("opponents: [random]\npolicy: {net_arch: [100000000, 100000000]}\n", "policy.net_arch",
     "too large: a network here has at most 64 hidden layers of 1 to 65,536 units and 33,554,432 parameters"),
    ("opponents: [random]\npolicy: {net_arch: {pi: [64], vf: [70000]}}\n", "policy.net_arch", "too large"),
    ("opponents: [random]\npolicy: {net_arch: [8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, "
     "8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, "
     "8, 8, 8, 8, 8, 8]}\n", "policy.net_arch", "at most 64 hidden layers"),
    ("opponents: [random]\npolicy: {net_arch: [60000, 60000]}\n", "policy.net_arch",
     "the policy network of [60000, 60000] has 3,610,980,129 parameters, more than 33,554,432"),
    ("opponents: [random]\npolicy: {net_arch: {pi: [64], vf: [6000, 6000]}}\n", "policy.net_arch",
     "the value network of [6000, 6000] has"),
    # agent specs are built once to check them
    ("opponents: [threshhold:0.2]\n", "opponents[0].agent", "unknown agent spec 'threshhold:0.2'"),
    ("opponents: [random, threshold:abc]\n", "opponents[1].agent", "threshold:T"),
    ("opponents: [random]\neval: {opponents: [optimal, nobody]}\n", "eval.opponents[1]", "unknown agent spec"),
    ("opponents: ['ppo:/no/such/file.zip']\n", "opponents[0].agent", "does not exist"),
    ("opponents: [random]\nselfplay: {enabled: true, initial: [/no/such/run]}\n", "selfplay.initial[0]",
     "does not exist"),
]


@pytest.mark.parametrize("text", ["opponents: [random]\nppo: {clip_range: .inf}\n",
                                  "opponents: [random]\nppo: {learning_rate: .nan}\n",
                                  "opponents: [{agent: random, weight: -.inf}]\n",
                                  "opponents: [random]\ntotal_timesteps: 1e400\n"])
def test_a_number_that_is_not_finite_is_refused_where_it_stands(tmp_path, text):
    """The bounded YAML reader (lama_env.reader) refuses .inf and .nan at their line, before any key is checked."""
    path = tmp_path / "bad.yaml"
    path.write_text(text)
    with pytest.raises(ConfigError, match=r"^\S+bad.yaml: invalid YAML at line \d+ column \d+: "
                                          r"'(-?\.inf|\.nan|1e400)' is not a finite number$"):
        load_config(path)


@pytest.mark.parametrize("text,key,phrase", BAD)
def test_bad_configs_name_the_key(tmp_path, text, key, phrase):
    path = tmp_path / "bad.yaml"
    path.write_text(text)
    with pytest.raises(ConfigError) as info:
        load_config(path)
    msg = str(info.value)
    assert "\n" not in msg
    assert msg.startswith(f"{path}: {key}")
    assert phrase in msg


def test_integers_in_scientific_notation(tmp_path):
    """`1e6` is a number (PyYAML alone reads it as a string); a whole one is accepted where an integer is expected."""
    path = tmp_path / "sci.yaml"
    path.write_text("opponents: [random]\ntotal_timesteps: 1e6\nppo: {n_steps: 2.5e2, learning_rate: 3e-4, "
                    "batch_size: 1.28E+2}\neval: {every: 5e4}\n")
    cfg = load_config(path)
    assert cfg.total_timesteps == 1_000_000 and type(cfg.total_timesteps) is int
    assert cfg.ppo.n_steps == 250 and cfg.ppo.batch_size == 128 and cfg.eval.every == 50_000
    assert cfg.ppo.learning_rate == 3e-4
    # what is not a number stays text: names, agent specs
    path.write_text("name: r1e6\nopponents: ['threshold:2e-1']\n")
    assert load_config(path).opponents[0].agent == "threshold:2e-1"


def test_the_command_line_takes_scientific_notation_too(capsys):
    assert main(["train", "smoke", "--check", "--total-timesteps", "1e6"]) == 0
    assert yaml.safe_load(capsys.readouterr().out)["total_timesteps"] == 1_000_000
    with pytest.raises(SystemExit):
        main(["train", "smoke", "--check", "--total-timesteps", "1.5e0"])
    assert "not an integer: '1.5e0'" in capsys.readouterr().err


@pytest.mark.parametrize("text,key,line,first", [
    ("opponents: [random]\nppo:\n  n_steps: 64\n  gamma: 1.0\n  n_steps: 128\n", "n_steps", 5, 3),
    ("total_timesteps: 100\nopponents: [random]\ntotal_timesteps: 4000\n", "total_timesteps", 3, 1),
    ("opponents: [{agent: random, agent: optimal}]\n", "agent", 1, 1),
])
def test_duplicate_keys_are_refused(tmp_path, capsys, text, key, line, first):
    path = tmp_path / "dup.yaml"
    path.write_text(text)
    with pytest.raises(ConfigError) as info:
        load_config(path)
    msg = str(info.value)
    assert f"invalid YAML at line {line}" in msg and f"duplicate key '{key}' (first at line {first}" in msg, msg
    assert main(["train", str(path), "--check"]) == 2
    err = capsys.readouterr().err
    assert "duplicate key" in err and len(err.strip().splitlines()) == 1


def test_merge_keys_may_still_be_overridden(tmp_path):
    """A key that a merge (`<<: *base`) brings in may be given again: YAML allows it, it is no duplicate."""
    from lama_dice.train.config import read_yaml

    path = tmp_path / "merge.yaml"
    path.write_text("a: &b {x: 1, y: 2}\nc:\n  <<: *b\n  x: 3\n")
    assert read_yaml(path) == {"a": {"x": 1, "y": 2}, "c": {"x": 3, "y": 2}}


def test_a_refused_network_size_makes_no_run_folder(tmp_path, capsys):
    """`policy.net_arch` far too large: refused by --check and by train before the run folder or torch."""
    path = tmp_path / "huge.yaml"
    path.write_text("opponents: [random]\npolicy: {net_arch: [100000000, 100000000]}\n")
    root = tmp_path / "runs"
    for extra in (["--check"], ["--runs-root", str(root)]):
        assert main(["train", str(path), *extra]) == 2
        err = capsys.readouterr().err
        assert "policy.net_arch" in err and "65,536 units" in err and len(err.strip().splitlines()) == 1
    assert not root.exists()


def test_every_network_a_config_allows_exports():
    """The config's bounds are the agent files' (lama_dice.agents.agentfile): a trained network always exports."""
    from lama_dice.agents.agentfile import MAX_PARAMETERS, CheckpointError, check_network
    from lama_env.actions import NUM_ACTIONS
    from lama_env.observation import observation_size

    largest = [4096, 4096]  # about 17.5 million parameters; a third layer of 4,096 passes the limit
    cfg = parse_config({"opponents": ["random"], "policy": {"net_arch": largest}}, check_agents=False)
    net = {"kind": "mlp", "inputs": observation_size(2), "hidden": list(cfg.policy.net_arch), "activation": "tanh",
           "outputs": NUM_ACTIONS}
    assert check_network(net, "x")["hidden"] == largest
    with pytest.raises(ConfigError, match=f"more than {MAX_PARAMETERS:,}"):
        parse_config({"opponents": ["random"], "policy": {"net_arch": [*largest, 4096]}}, check_agents=False)
    with pytest.raises(CheckpointError, match=f"more than {MAX_PARAMETERS:,}"):
        check_network({**net, "hidden": [*largest, 4096]}, "x")


def test_rounding_of_the_step_budget_is_said_by_check(capsys):
    """The smoke config trains rollouts of 256 x 2 = 512 steps: 600 steps asked are 1,024, and --check says so."""
    assert main(["train", "smoke", "--check", "--total-timesteps", "600"]) == 0
    err = capsys.readouterr().err
    assert ("note: total_timesteps is 600: will train 1,024, because training runs whole rollouts of ppo.n_steps x "
            "env.n_envs = 256 x 2 = 512 steps") in err
    assert main(["train", "smoke", "--check", "--total-timesteps", "1024"]) == 0
    assert capsys.readouterr().err == ""


def test_unknown_key_lists_the_valid_ones(tmp_path):
    path = tmp_path / "bad.yaml"
    path.write_text("opponents: [random]\nselfplay: {pool: 3}\n")
    with pytest.raises(ConfigError, match=r"valid keys of selfplay: enabled, weight, pool_size"):
        load_config(path)


def test_unreadable_files(tmp_path):
    with pytest.raises(ConfigError, match="cannot read config"):
        load_config(tmp_path / "missing.yaml")
    path = tmp_path / "broken.yaml"
    path.write_text("env: {num_players: 2\nopponents: [random]\n")
    with pytest.raises(ConfigError, match="invalid YAML at line"):
        load_config(path)


def test_checkpoint_for_another_player_count_is_refused(tmp_path):
    gym = pytest.importorskip("gymnasium")
    from sb3_contrib import MaskablePPO

    import lama_env  # (registers LamaDice-v1)
    from lama_dice.agents.ppo import write_sidecar

    env = gym.make("LamaDice-v1", num_players=3, opponents=["random"])
    model = MaskablePPO("MlpPolicy", env, n_steps=32, batch_size=32, policy_kwargs={"net_arch": [8]})
    model.save(tmp_path / "p3.zip")
    write_sidecar(tmp_path / "p3.zip", num_players=3, rules=lama_env.RulesConfig().to_dict(), config="t",
                  timesteps=0, policy=model.policy)
    with pytest.raises(ConfigError, match=r"opponents\[0\].agent: checkpoint .* trained for 3 players, the game has 2"):
        parse_config({"opponents": [f"ppo:{tmp_path / 'p3.zip'}"]}, source="x")


def test_cli_prints_one_line_and_exits_2(tmp_path, capsys):
    path = tmp_path / "bad.yaml"
    path.write_text("opponents: [random]\nppo: {clip: 0.1}\n")
    assert main(["train", str(path)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0
    assert err.startswith("lama-dice train: error:") and "ppo.clip: unknown key" in err


def test_docs_document_every_key():
    docs = (CONFIGS.parent / "docs" / "training.md").read_text(encoding="utf-8")
    for key, _, _ in describe_keys():
        assert f"| `{key}` |" in docs, key


def test_cli_check_prints_the_resolved_config(capsys):
    assert main(["train", str(CONFIGS / "smoke.yaml"), "--check"]) == 0
    resolved = yaml.safe_load(capsys.readouterr().out)
    assert TrainConfig.model_validate(resolved).name == "smoke"
    assert resolved["ppo"]["clip_range"] == 0.2  # defaults are filled in


def test_shipped_configs_resolve_by_name(tmp_path, monkeypatch):
    """`lama-dice train default` works from anywhere: the configs ship as package data."""
    from lama_dice.train.config import resolve_config, shipped_configs

    names = set(shipped_configs())
    assert {"default", "solo", "ppo_2p", "ppo_4p", "smoke", "rllib_2p"} <= names
    monkeypatch.chdir(tmp_path)  # no configs/ folder here
    assert resolve_config("default") == shipped_configs()["default"]
    assert resolve_config("smoke.yaml").name == "smoke.yaml"
    load_config(resolve_config("default"))  # valid
    (tmp_path / "default").write_text("seed: 1\n")  # a file of that name wins
    assert resolve_config("default") == Path("default")
    with pytest.raises(ConfigError, match=r"no shipped config of that name.*shipped: .*default"):
        resolve_config("nonesuch")
    with pytest.raises(ConfigError, match="no config file"):
        resolve_config("some/dir/default.yaml")


@pytest.mark.parametrize("name", SHIPPED)
def test_every_shipped_config_resolves_with_check(name, tmp_path, monkeypatch, capsys):
    """``lama-dice train NAME --check``: found by name from any folder, validated, printed resolved."""
    monkeypatch.chdir(tmp_path)  # no configs/ folder here: the shipped copy is found by name
    assert main(["train", name, "--check"]) == 0
    resolved = yaml.safe_load(capsys.readouterr().out)
    assert resolved["name"] == name
    assert resolved["env"]["rules"]["end_threshold"] >= 1  # the rules resolved into every field
    again = yaml.safe_load((CONFIGS / f"{name}.yaml").read_text(encoding="utf-8"))
    for key in again:  # every key of the file is in the resolved config
        assert key in resolved, key


def test_train_check_by_name_from_another_folder(tmp_path, monkeypatch, capsys):
    from lama_dice.cli.main import main

    monkeypatch.chdir(tmp_path)
    assert main(["train", "default", "--check"]) == 0
    assert "total_timesteps" in capsys.readouterr().out
    assert main(["train", "nonesuch"]) == 2
    assert "no shipped config of that name" in capsys.readouterr().err


def test_run_folders_are_new_or_empty_never_overwritten(tmp_path, monkeypatch):
    """Both trainers make their run folders with lama_dice.train.runs."""
    import datetime as _dt

    from lama_dice.train import runs
    from lama_dice.train.runs import RunDirError, claim_run_dir, make_run_dir, new_run_dir

    class _Frozen(_dt.datetime):
        @classmethod
        def now(cls, tz=None):
            return cls(2025, 1, 2, 3, 4, 5)

    monkeypatch.setattr(runs, "datetime", _Frozen)
    root = tmp_path / "runs"
    made = [new_run_dir(root, "x") for _ in range(3)]
    assert [d.name for d in made] == ["x-20250102-030405", "x-20250102-030405-2", "x-20250102-030405-3"]
    assert all(d.is_dir() and d.parent == root for d in made)
    assert make_run_dir(None, root, "x").name == "x-20250102-030405-4"

    # a named folder: new (parents made) or existing and empty
    assert claim_run_dir(tmp_path / "a" / "b").is_dir()
    empty = tmp_path / "empty"
    empty.mkdir()
    assert make_run_dir(empty, root, "x") == empty
    # anything in it (not only a config.yaml) refuses it, in one line naming the folder
    (empty / "notes.txt").write_text("mine")
    for call in (lambda: claim_run_dir(empty), lambda: make_run_dir(empty, root, "x")):
        with pytest.raises(RunDirError, match="not empty") as e:
            call()
        assert "\n" not in str(e.value) and str(empty) in str(e.value) and "--run-dir" in str(e.value)
    with pytest.raises(RunDirError, match="--resume"):
        claim_run_dir(empty, hint="continue that run with --resume")
    assert (empty / "notes.txt").read_text() == "mine"
    with pytest.raises(RunDirError, match="is a file"):
        claim_run_dir(empty / "notes.txt")


def test_check_prints_the_config_the_run_would_use(capsys):
    """`lama-dice train --check` applies --total-timesteps and --seed (both pipelines), refuses bad values."""
    assert main(["train", "smoke", "--check", "--total-timesteps", "77", "--seed", "4"]) == 0
    printed = yaml.safe_load(capsys.readouterr().out)
    assert printed["total_timesteps"] == 77 and printed["seed"] == 4
    assert main(["train", "rllib_2p", "--check", "--seed", "5"]) == 0
    assert yaml.safe_load(capsys.readouterr().out)["seed"] == 5
    for bad in (["--total-timesteps", "-5"], ["--total-timesteps", "0"], ["--seed", "-1"], ["--seed", "x"]):
        with pytest.raises(SystemExit) as e:
            main(["train", "smoke", "--check", *bad])
        assert e.value.code == 2
        err = capsys.readouterr().err
        assert f"argument {bad[0]}" in err and err.strip().splitlines()[-1].startswith("lama-dice train: error")


def test_the_rllib_config_has_the_same_bounds(tmp_path, capsys):
    """RLlib's `model.hidden` is bounded as `policy.net_arch` is; its YAML is read by the same reader."""
    path = tmp_path / "r.yaml"
    for text, phrase in (
        ("algorithm: rllib-ppo\nopponents: [random]\nmodel: {hidden: [100000000, 100000000]}\n", "65,536 units"),
        ("algorithm: rllib-ppo\nopponents: [random]\nmodel: {hidden: [60000, 60000]}\n", "more than 33,554,432"),
        ("algorithm: rllib-ppo\nopponents: [random]\nseed: 1\nseed: 2\n", "duplicate key 'seed'"),
        ("algorithm: rllib-ppo\nopponents: [random]\nenv: {num_players: true}\n", "not a boolean"),
        ("algorithm: rllib-ppo\nopponents: [random]\nppo: {clip_param: .inf}\n", "finite number"),
    ):
        path.write_text(text)
        assert main(["train", str(path), "--check"]) == 2
        err = capsys.readouterr().err
        assert phrase in err and len(err.strip().splitlines()) == 1, err
    path.write_text("algorithm: rllib-ppo\nopponents: [random]\niterations: 1e3\n")
    assert main(["train", str(path), "--check"]) == 0
    assert yaml.safe_load(capsys.readouterr().out)["iterations"] == 1000
