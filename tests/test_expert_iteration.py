"""Expert iteration (algorithm: expert_iteration): the loop end to end, resuming, targets, the gate, bad configs."""

from __future__ import annotations

import io
import json
import math
import os
import signal
from pathlib import Path

import numpy as np
import pytest
import yaml

from lama_dice.agents.registry import make_agent
from lama_dice.agents.value import load_value
from lama_dice.cli.main import main
from lama_dice.train import expert_iteration as X
from lama_dice.train.expert_config import ExpertIterationConfigError, is_expert_iteration_config, load_expert_config
from lama_env.actions import NUM_ACTIONS

CONFIGS = Path(__file__).resolve().parent.parent / "configs"
SMOKE = CONFIGS / "expert_iteration_smoke.yaml"
STEP_FILES = (X.DATA, X.POLICY, X.VALUE, X.FIT, X.GATE, X.MEASURE, X.REPORT)


def _run(run_dir: Path, **kw):
    return X.run_expert_iteration(SMOKE, run_dir=run_dir, out=io.StringIO(), **kw)


@pytest.fixture(scope="module")
def smoke_run(tmp_path_factory):
    """One uninterrupted smoke run (one tiny iteration), shared by the tests that read it."""
    run, interrupted = _run(tmp_path_factory.mktemp("exit") / "run")
    assert not interrupted
    return run


def test_the_smoke_config_trains_one_iteration_end_to_end(smoke_run):
    it = smoke_run / "iterations" / "0001"
    assert all((it / name).is_file() for name in STEP_FILES)
    assert json.loads((smoke_run / "state.json").read_text())["iterations"] == 1
    # the networks are weights-only files that play and value
    policy = make_agent(f"ppo:{it / X.POLICY}")
    assert policy.num_players == 2 and policy.mlp is not None
    assert load_value(it / X.VALUE).num_players == 2
    report = json.loads((it / X.REPORT).read_text())
    for key in ("search_edge", "new_edge", "share_kept", "value_brier", "positions", "seconds", "gate_games"):
        assert key in report
    assert report["positions"] == 48 and report["gate_games"] in (20, 40) and report["search_games"] == 4
    assert list((smoke_run / "tb").iterdir())  # TensorBoard events
    data = X._load_npz(it / X.DATA)
    assert X.check_targets(data) is None
    assert data["obs"].shape == (48, 52) and data["value"].shape == (48, 2)
    # the per-iteration table of the docs
    assert "| 1 | 48 |" in X.markdown_table(X.reports(smoke_run))


def test_a_stopped_run_resumes_where_it_stopped_and_ends_as_an_uninterrupted_one(smoke_run, tmp_path, monkeypatch):
    gate = X.run_gate

    def stop(*args, **kwargs):  # SIGTERM (as a stop) in the middle of the gate, after the positions and the fit
        os.kill(os.getpid(), signal.SIGTERM)
        return gate(*args, **kwargs)

    monkeypatch.setattr(X, "run_gate", stop)
    run, interrupted = _run(tmp_path / "run")
    assert interrupted
    it = run / "iterations" / "0001"
    assert (it / X.DATA).exists() and (it / X.FIT).exists() and not (it / X.GATE).exists()
    assert not (run / "state.json").exists()
    monkeypatch.setattr(X, "run_gate", gate)
    positions = X.play_positions
    monkeypatch.setattr(X, "play_positions", lambda *a, **k: pytest.fail("the positions were labelled again"))
    run2, interrupted = X.run_expert_iteration(resume=run, out=io.StringIO())
    assert run2 == run and not interrupted
    monkeypatch.setattr(X, "play_positions", positions)
    assert json.loads((run / "state.json").read_text())["iterations"] == 1
    # the same seeds: the same data and networks as without the stop
    from safetensors.numpy import load_file

    a, b = (X._load_npz(r / "iterations" / "0001" / X.DATA) for r in (run, smoke_run))
    assert all(np.array_equal(a[k], b[k], equal_nan=True) for k in a if not k.endswith("seconds"))
    for name in (X.POLICY, X.VALUE):
        a, b = (load_file(str(r / "iterations" / "0001" / name)) for r in (run, smoke_run))
        assert all(np.array_equal(a[k], b[k]) for k in a) and a.keys() == b.keys(), name
    a, b = (json.loads((r / "iterations" / "0001" / X.GATE).read_text()) for r in (run, smoke_run))
    assert {k: v for k, v in a.items() if k != "seconds"} == {k: v for k, v in b.items() if k != "seconds"}
    # more iterations later: --iterations N continues the run up to N
    X.run_expert_iteration(resume=run, iterations=2, out=io.StringIO())
    assert json.loads((run / "state.json").read_text())["iterations"] == 2
    assert load_expert_config(run / "config.yaml").iterations == 2
    with pytest.raises(ExpertIterationConfigError, match="keeps its seed"):
        X.run_expert_iteration(resume=run, seed=5, out=io.StringIO())


def test_policy_targets_are_distributions_over_the_legal_actions():
    rng = np.random.default_rng(0)
    b = 200
    mask = rng.random((b, NUM_ACTIONS)) < 0.05
    mask[np.arange(b), rng.integers(NUM_ACTIONS, size=b)] = True
    mask[:, 0] = True
    mask[:, 1] = True  # at least two legal actions
    logits = np.where(mask, rng.normal(size=(b, NUM_ACTIONS)), -np.inf)
    searched = mask & (rng.random((b, NUM_ACTIONS)) < 0.7)
    searched[:, 0] = True
    searched[np.arange(b), np.argmax(logits, axis=1)] = True  # as the rollout search: the prior's likeliest always
    q = np.where(searched, rng.random((b, NUM_ACTIONS)), np.nan)
    p = X.policy_targets(logits, q, rollouts=16)
    assert p.dtype == np.float32 and np.all(p >= 0) and np.all(p[~mask] == 0)
    assert np.allclose(p.sum(axis=1), 1.0, atol=1e-6)
    # by hand for one row: softmax(logits + (50 + 16) * 0.1 * completed Q), v_mix for the actions not searched
    i = 3
    legal = np.flatnonzero(mask[i])
    prior = np.exp(logits[i, legal] - logits[i, legal].max())
    prior /= prior.sum()
    s = searched[i, legal]
    v_mix = (prior[s] * q[i, legal][s]).sum() / prior[s].sum()
    completed = np.where(s, q[i, legal], v_mix)
    z = logits[i, legal] + 6.6 * completed
    want = np.exp(z - z.max()) / np.exp(z - z.max()).sum()
    assert np.allclose(p[i, legal], want, atol=1e-6)
    # the search's estimates move the prior: a better Q, a larger share; no search, the prior itself
    flat = np.where(mask, 0.0, -np.inf)[:1]
    q1 = np.where(mask[:1], 0.5, np.nan)
    q1[0, 1] = 0.6
    t = X.policy_targets(flat, q1, rollouts=16)
    assert t[0, 1] > t[0, 0] and np.isclose(t[0, 0], t[0, np.flatnonzero(mask[0])[-1]])
    same = X.policy_targets(logits, np.where(mask, 0.5, np.nan), rollouts=16)
    prior_all = np.exp(logits - logits.max(axis=1, keepdims=True))
    assert np.allclose(same, prior_all / prior_all.sum(axis=1, keepdims=True), atol=1e-6)
    # z: each difference with the prior's likeliest action shrunk by z standard errors
    se = np.where(searched, 0.05, np.nan)
    assert np.allclose(X.policy_targets(logits, q, 16, se=se, z=100.0), same, atol=1e-6)  # nothing sure: the prior
    shrunk = X.policy_targets(logits, q, 16, se=se, z=1.0)
    top = np.argmax(logits[i])
    d = np.where(s, q[i, legal] - q[i, top], 0.0)
    qz = q[i, top] + np.sign(d) * np.maximum(np.abs(d) - 0.05, 0.0)
    v_mix = (prior[s] * qz[s]).sum() / prior[s].sum()
    z = logits[i, legal] + 6.6 * np.where(s, qz, v_mix)
    assert np.allclose(shrunk[i, legal], np.exp(z - z.max()) / np.exp(z - z.max()).sum(), atol=1e-6)
    assert X.check_targets({"policy": p, "mask": mask, "value": np.full((b, 2), 0.5)}) is None
    bad = p.copy()
    bad[~mask] = 0.01
    assert "illegal" in X.check_targets({"policy": bad, "mask": mask, "value": np.full((b, 2), 0.5)})


def test_the_expert_labels_real_positions_with_its_own_estimates():
    from lama_dice.agents.ppo import resolve_checkpoint
    from lama_dice.agents.value import resolve_value

    expert = X.ExpertSearch(resolve_checkpoint("2p"), resolve_value("2p"), rollouts=2, top=0, seed=1)
    data = X.play_positions(expert, 20, envs=4, keep=0.5, batch=8, seed=3)
    assert X.check_targets(data) is None and len(data["obs"]) == 20
    searched = ~np.isnan(data["q"])
    assert np.array_equal(searched, data["mask"])  # top=0: every legal action searched, nothing else
    assert np.all((data["q"][searched] >= 0) & (data["q"][searched] <= 1))
    assert set(np.unique(data["value"])) <= {0.0, 0.5, 1.0}  # win shares of finished games
    again = X.play_positions(X.ExpertSearch(resolve_checkpoint("2p"), resolve_value("2p"), rollouts=2, top=0, seed=1),
                             20, envs=4, keep=0.5, batch=8, seed=3)
    assert all(np.array_equal(data[k], again[k], equal_nan=True) for k in ("obs", "q", "policy", "value", "game"))


def _wilson(p: float, n: int, z: float = 1.959963984540054) -> tuple[float, float]:
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z / (1 + z * z / n) * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return centre - half, centre + half


@pytest.mark.parametrize(("wins", "games", "players", "decided", "accepted"), [
    (1100, 2000, 2, True, True),     # 55.0% [52.8, 57.2]
    (1030, 2000, 2, False, False),   # 51.5% [49.3, 53.7]: not decided
    (900, 2000, 2, True, False),     # 45.0%: decided against
    (560, 2000, 4, True, True),      # 28.0% [26.1, 30.0] > 25%
    (520, 2000, 4, False, False),
])
def test_gate_statistics(wins, games, players, decided, accepted):
    g = X.gate_decision(wins, games, players)
    lo, hi = _wilson(wins / games, games)
    assert g["ci"] == pytest.approx([lo, hi], abs=1e-12)
    assert g["win_rate"] == wins / games and g["edge"] == pytest.approx(wins / games - 1 / players)
    assert (g["decided"], g["accepted"]) == (decided, accepted)


def test_the_gate_plays_blocks_until_the_interval_decides():
    seeds = []

    def play(rate):
        def f(games, seed):
            seeds.append(seed)
            return rate * games
        return f

    g = X.run_gate(play(0.6), 2, 20_000, 2_000, iter(range(100)))
    assert g["games"] == 2_000 and g["accepted"] and g["blocks"] == [1200.0]
    g = X.run_gate(play(0.5), 2, 5_000, 2_000, iter(range(100, 200)))
    assert g["games"] == 5_000 and g["blocks"] == [1000.0, 1000.0, 500.0] and not g["decided"] and not g["accepted"]
    assert len(set(seeds)) == len(seeds)  # every block on new games
    g = X.run_gate(play(0.51), 2, 40_000, 2_000, iter(range(200, 300)))  # a small edge needs more games
    assert g["accepted"] and 2_000 < g["games"] < 40_000


@pytest.mark.parametrize("name", ["expert_iteration_2p", "expert_iteration_4p", "expert_iteration_smoke"])
def test_shipped_expert_configs_validate(name):
    path = CONFIGS / f"{name}.yaml"
    assert is_expert_iteration_config(path)
    cfg = load_expert_config(path)
    assert cfg.name == name and cfg.algorithm == "expert_iteration"
    assert load_expert_config(path, check_agents=False) == X.parse_expert_config(yaml.safe_load(cfg.to_yaml()))


BAD = [
    ("search: {rollouts: 0}", "search.rollouts", "greater than or equal to 1"),
    ("search: {rolouts: 8}", "search.rolouts", "unknown key"),
    ("selfplay: {keep: 0}", "selfplay.keep", "greater than 0"),
    ("iterations: true", "iterations", "not a boolean"),
    ("gate: {games: 100, block: 200}", "gate.block", "more than gate.games"),
    ("fit: {holdout: 1.5}", "fit.holdout", "less than 1"),
    ("env: {num_players: 1}", "env.num_players", "greater than or equal to 2"),
    ("start: {policy: ppo:no/such/file.safetensors}", "start.policy", ""),
    ("start: {value: 4p}", "start.value", "is for 4 players"),
    ("start: {policy: ppo:4p}", "start.policy", "4 players"),
    ("measure: {search: 'rollouts=0'}", "measure.search", "rollouts must be an integer"),
    ("measure: {search: 'rollouts=8,value=4p'}", "measure.search", "its value network is the run's"),
]


@pytest.mark.parametrize(("text", "key", "words"), BAD)
def test_bad_configs_are_refused_in_one_line(tmp_path, text, key, words):
    path = tmp_path / "bad.yaml"
    path.write_text(f"algorithm: expert_iteration\n{text}\n")
    with pytest.raises(ExpertIterationConfigError) as e:
        load_expert_config(path)
    msg = str(e.value)
    assert key in msg and words in msg and "\n" not in msg


def test_the_measured_search_is_the_strongest_over_the_best_pair_by_default(smoke_run):
    from lama_dice.agents.rollout import RolloutPolicy

    cfg = load_expert_config(CONFIGS / "expert_iteration_2p.yaml", check_agents=False)
    best = X._best(smoke_run)
    search = X._measured_search(cfg, best)
    assert isinstance(search, RolloutPolicy) and not isinstance(search, X.ExpertSearch)
    assert (search.rollouts, search.rounds, search.z) == (128, 1, 2.0) and search.value_net.path == best["value"]
    expert = X._measured_search(cfg.model_copy(update={"measure": cfg.measure.model_copy(update={"search": "expert"})}),
                                best)
    assert isinstance(expert, X.ExpertSearch) and expert.rollouts == cfg.search.rollouts


def test_the_command_line_dispatches_and_refuses_what_does_not_apply(tmp_path, capsys):
    assert main(["train", str(SMOKE), "--check"]) == 0
    assert "algorithm: expert_iteration" in capsys.readouterr().out
    assert main(["train", str(SMOKE), "--total-timesteps", "100"]) != 0
    assert "--total-timesteps is not an option of algorithm: expert_iteration" in capsys.readouterr().err
    assert main(["train", "smoke", "--iterations", "3", "--check"]) != 0
    assert "--iterations is an option of algorithm: expert_iteration" in capsys.readouterr().err
    bad = tmp_path / "bad.yaml"
    bad.write_text("algorithm: expert_iteration\nsearch: {top: -1}\n")
    assert main(["train", str(bad)]) != 0
    err = capsys.readouterr().err.strip()
    assert "search.top" in err and len(err.splitlines()) == 1
