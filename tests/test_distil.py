"""``python -m lama_dice.train.distil``: a rollout search's choices, imitated by its policy network."""

from __future__ import annotations

import json

import numpy as np
import pytest

from lama_dice.agents.registry import make_agent
from lama_dice.train import distil
from lama_env import LamaGame
from lama_env.observation import encode
from lama_env.snapshot import from_state

# a quick, noisy search (few rollouts, no threshold) that often leaves the network: labels that differ
SPEC = "search:ppo:2p,rollouts=4,rounds=1,z=0"


@pytest.fixture(scope="module")
def labelled():
    search = distil._search_agent(SPEC, seed=3)
    return distil.search_positions(search, 48, envs=16, keep=0.5, batch=48, seed=3)


def test_the_labels_are_the_searchs_choices_at_the_positions(labelled):
    d = labelled
    assert len(d.obs) == len(d.mask) == len(d.search) == len(d.prior) == len(d.game) == len(d.states) == 48
    assert (d.mask.sum(axis=1) > 1).all()  # only decisions with a choice
    games = [from_state(s, 2) for s in d.states]
    # the same search (same seed), asked the same positions in one batch, chooses the same
    again = [a for a, _ in distil._search_agent(SPEC, seed=3).search_many(games)]
    assert d.search.tolist() == again
    net = make_agent("ppo:2p")
    for g, obs, mask, prior in zip(games, d.obs, d.mask, d.prior, strict=True):
        assert np.array_equal(obs, encode(g, g.current_player))  # the vector game's view is the agent's
        assert sorted(np.flatnonzero(mask).tolist()) == sorted(g.legal_actions())
        assert prior == net.act(g, g.legal_actions())
    assert (d.search != d.prior).any()  # this noisy search leaves the network somewhere


def test_fit_learns_the_labels_and_keeps_the_network_elsewhere(labelled):
    from safetensors.numpy import load_file

    from lama_dice.agents.mlp import MLP
    from lama_dice.agents.ppo import resolve_checkpoint

    d = labelled
    path = resolve_checkpoint("2p")
    base = load_file(str(path))
    net = {"kind": "mlp", "inputs": 52, "hidden": [128, 128], "activation": "tanh", "outputs": 129}
    new = distil.fit(base, "tanh", d.obs, d.mask, d.search, epochs=60, batch=48, lr=3e-3, seed=0)
    choice = np.where(d.mask, MLP(net, new)(d.obs), -np.inf).argmax(axis=1)
    before = distil.agreement(d.prior, d.search, d.prior)
    after = distil.agreement(choice, d.search, d.prior)
    assert before["agree_where_search_differs"] == 0.0
    assert after["agree_where_search_differs"] > 0.5 and after["agree"] > before["agree"]
    assert (np.where(d.mask, MLP(net, new)(d.obs), -np.inf).argmax(axis=1) == choice).all()  # deterministic


def test_distil_command_writes_an_agent_file_that_plays(tmp_path):
    out, report, data = tmp_path / "d.safetensors", tmp_path / "r.json", tmp_path / "d.npz"
    args = ["--search", SPEC, "--positions", "40", "--envs", "8", "--batch", "40", "--epochs", "1",
            "--data", str(data), "--out", str(out), "--report", str(report)]
    assert distil.main(args) == 0
    training = json.loads(report.read_text())["training"]
    agent = make_agent(f"ppo:{out}")
    assert agent.num_players == 2
    assert training["init_from"] == "ppo:2p" and training["search"] == SPEC
    game = LamaGame(2, seed=1)
    while not game.game_over:
        game.step(agent.act(game, game.legal_actions()))
    # a second run reads the saved positions instead of searching again, and fits the same network
    out2 = tmp_path / "d2.safetensors"
    assert distil.main([*args[:-4], "--out", str(out2)]) == 0
    assert out.read_bytes() != b"" and make_agent(f"ppo:{out2}").mlp is not None
    from safetensors.numpy import load_file

    a, b = load_file(str(out)), load_file(str(out2))
    assert all(np.array_equal(a[k], b[k]) for k in a)


@pytest.mark.parametrize(("args", "words"), [
    (["--search", "lookahead"], "distil needs a rollout search"),
    (["--search", "search:ppo:2p,depth=1"], "distil needs a rollout search"),
    (["--positions", "0"], "--positions must be a positive integer"),
    (["--keep", "0"], "--keep must lie in (0, 1]"),
])
def test_bad_input_is_a_one_line_error(tmp_path, capsys, args, words):
    with pytest.raises(SystemExit) as e:
        distil.main([*args, "--out", str(tmp_path / "x.safetensors")])
    assert e.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert words in err[-1] and "Traceback" not in "".join(err)


def test_a_data_file_that_is_not_one_is_refused(tmp_path, capsys):
    bad = tmp_path / "bad.npz"
    np.savez(bad, obs=np.zeros((3, 7), dtype=np.float32))
    with pytest.raises(SystemExit):
        distil.main(["--search", SPEC, "--data", str(bad), "--out", str(tmp_path / "x.safetensors")])
    assert "is not a file of labelled positions" in capsys.readouterr().err


def _saved(path, **change):
    rng = np.random.default_rng(0)
    mask = np.zeros((6, 129), dtype=bool)
    mask[:, [0, 1]] = True
    arrays = {"obs": rng.random((6, 52), dtype=np.float32), "mask": mask, "search": np.zeros(6, dtype=np.int64),
              "prior": np.ones(6, dtype=np.int64), "game": np.arange(6), "games": 6, "seconds": 1.0}
    arrays.update(change)
    np.savez(path, **arrays)
    return path


@pytest.mark.parametrize(("change", "words"), [
    ({"obs": np.zeros((6, 7), dtype=np.float32)}, "observations of shape (6, 7)"),
    ({"mask": np.ones((6, 129), dtype=np.int64)}, "not 6 x 129 booleans"),
    ({"search": np.zeros(5, dtype=np.int64)}, "search of shape (5,)"),
    ({"search": np.full(6, 7, dtype=np.int64)}, "a search action that is not legal"),
    ({"prior": np.full(6, 500, dtype=np.int64)}, "a prior action that is not legal"),
    ({"game": np.zeros(6, dtype=np.int64)}, "cannot be split into trained and held-out games"),
])
def test_saved_positions_that_do_not_fit_are_one_line_errors(tmp_path, capsys, change, words):
    data = _saved(tmp_path / "d.npz", **change)
    with pytest.raises(SystemExit) as e:
        distil.main(["--search", SPEC, "--data", str(data), "--out", str(tmp_path / "x.safetensors")])
    assert e.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert words in err[-1] and "Traceback" not in "".join(err)
    assert not (tmp_path / "x.safetensors").exists()


def test_fitting_saved_positions_writes_the_agent(tmp_path):
    data = _saved(tmp_path / "d.npz")
    out = tmp_path / "x.safetensors"
    assert distil.main(["--search", SPEC, "--data", str(data), "--epochs", "1", "--out", str(out)]) == 0
    assert make_agent(f"ppo:{out}").num_players == 2
