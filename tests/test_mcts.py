"""The ``mcts:N`` agent (OpenSpiel's MCTSBot over python_lama_dice) in every tool, and its spec."""

from __future__ import annotations

import json
import sys

import gymnasium as gym
import numpy as np
import pytest

from lama_dice.agents.registry import AgentSpecError, make_agent
from lama_env import LamaGame
from lama_env import actions as A

pytest.importorskip("pyspiel", reason="OpenSpiel is not installed (the openspiel extra)")

from lama_dice.agents.mcts import EngineRolloutEvaluator, MCTSPolicy, parse_options
from lama_dice.cli.main import main


def test_spec_options():
    assert parse_options("200") == {"simulations": 200}
    assert parse_options("50, rollouts=3,uct=1.4,rollout=threshold:0.2,reward=points,seed=7") == {
        "simulations": 50, "rollouts": 3, "uct": 1.4, "rollout": "threshold:0.2", "reward": "points", "seed": 7}
    agent = make_agent("mcts:20,rollouts=2,uct=0.5,seed=3")
    assert isinstance(agent, MCTSPolicy) and (agent.simulations, agent.rollouts, agent.uct) == (20, 2, 0.5)
    assert agent.spec == "mcts:20,rollouts=2,uct=0.5,seed=3"


@pytest.mark.parametrize(("spec", "words"), [
    ("mcts", "mcts needs a number of simulations: mcts:N"),
    ("mcts:0", "mcts option N (simulations) must be an integer >= 1, got '0'"),
    ("mcts:ten", "must be an integer >= 1, got 'ten'"),
    ("mcts:10,uct=-1", "mcts option uct must be a number >= 0.0, got '-1'"),
    ("mcts:10,uct=nan", "mcts option uct must be a number"),
    ("mcts:10,depth=3", "bad mcts option 'depth=3'; the options are rollouts=R"),
    ("mcts:10,seed=1,seed=2", "mcts option 'seed' given twice"),
    ("mcts:10,reward=chips", "mcts option reward must be win or points, got 'chips'"),
    ("mcts:10,rollout=nobody", "unknown agent spec 'nobody'"),
])
def test_bad_specs_are_one_line_errors(spec, words):
    with pytest.raises(AgentSpecError) as e:
        make_agent(spec)
    assert words in str(e.value) and "\n" not in str(e.value)


def test_without_openspiel_the_spec_says_what_to_install(monkeypatch):
    for mod in ("pyspiel", "open_spiel", "open_spiel.python", "open_spiel.python.algorithms",
                "open_spiel.python.algorithms.mcts"):
        monkeypatch.setitem(sys.modules, mod, None)
    from lama_env.extras import MissingExtraError

    with pytest.raises(MissingExtraError, match=r"mcts:N \(OpenSpiel's MCTS\) needs the openspiel extra \(open-spiel "
                                                r"is not installed\); install it with: .*pip install .*\[openspiel\]"):
        make_agent("mcts:10")


def _decisions(spec: str, players: int, seed: int) -> list[int]:
    agent = make_agent(spec, seed=seed)
    game = LamaGame(players, seed=seed)
    out = []
    while not game.game_over and game.rounds_finished == 0 and len(out) < 12:  # the first round's
        legal = game.legal_actions()
        a = agent.act(game, legal)
        assert a in legal
        before = game.serialize()
        game.step(a)
        assert before != game.serialize()
        out.append(a)
    return out


@pytest.mark.parametrize("players", [1, 2, 3, 6])
def test_plays_legal_moves_seeded_and_leaves_the_game_alone(players):
    first = _decisions("mcts:16", players, seed=players)
    assert first == _decisions("mcts:16", players, seed=players)  # the same seed, the same search
    game = LamaGame(players, seed=0)
    text = game.serialize()
    make_agent("mcts:8", seed=0).act(game, game.legal_actions())
    assert game.serialize() == text  # the search works on a copy


def test_the_rollout_options_play_too():
    for spec in ("mcts:8,rollout=openspiel", "mcts:8,rollout=threshold:0.2,rollouts=2", "mcts:8,reward=points"):
        assert _decisions(spec, 2, seed=1)


def test_engine_playouts_value_the_end_exactly():
    """A finished game's playout returns its result; a quit-or-lose choice is seen by the search."""
    import lama_env.openspiel as LO

    game = LamaGame(2, seed=0, start_points=[39, 0])  # seat 0 ends the game whatever it scores
    state = LO.state_from_game(game)
    ev = EngineRolloutEvaluator(4, None, "win", np.random.default_rng(0))
    values = ev.evaluate(state)
    assert values.shape == (2,) and values[0] == -values[1] and -1 <= values[0] <= 1
    prior = ev.prior(state)
    assert [a for a, _ in prior] == [A.ROLL, A.QUIT] and sum(p for _, p in prior) == pytest.approx(1)


def test_mcts_beats_random():
    agent, other = make_agent("mcts:40", seed=1), make_agent("random", seed=2)
    wins = 0
    for g in range(6):
        game = LamaGame(2, seed=g, start_player=g % 2)
        while not game.game_over:
            p = agent if game.current_player == 0 else other
            game.step(p.act(game, game.legal_actions()))
        wins += game.totals[0] < game.totals[1]
    assert wins >= 5


def test_in_evaluate_and_score(tmp_path, capsys):
    out = tmp_path / "e.json"
    assert main(["evaluate", "--agents", "mcts:6", "threshold:0.2", "--games", "2", "--no-progress",
                 "--json", str(out)]) == 0
    data = json.loads(out.read_text())
    assert [a["spec"] for a in data["agents"]] == ["mcts:6", "threshold:0.2"] and data["games"] == 2
    card = tmp_path / "s.json"
    assert main(["score", "mcts:4", "--tasks", "duel-also-match", "--games", "2", "--no-progress",
                 "--json", str(card)]) == 0
    assert json.loads(card.read_text())["agent"] == "mcts:4"


def test_as_an_env_opponent_and_in_play():
    env = gym.make("LamaDice-v1", num_players=3, opponents=["mcts:6"])
    _, info = env.reset(seed=0)
    done = False
    while not done:
        _, _, term, trunc, info = env.step(int(np.flatnonzero(info["action_mask"])[-1]))
        done = term or trunc
    from lama_dice.cli.play import make_opponents, resolve_seats

    _, seats = resolve_seats(2, ["mcts:6"], 0)
    assert isinstance(make_opponents(seats, 0)[1], MCTSPolicy)
