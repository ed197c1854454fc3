"""The OpenSpiel game ``python_lama_dice`` (lama_env.openspiel): OpenSpiel's own checks and a differential test.

Skipped, saying so, where OpenSpiel is not installed (``pip install -e ".[openspiel]"``; ``make test``
installs it in ``.venv``).
"""

from __future__ import annotations

import itertools
import math
import pickle
import random

import numpy as np
import pytest

pyspiel = pytest.importorskip("pyspiel", reason="OpenSpiel is not installed (the openspiel extra)")

from lama_env import LamaGame, Phase, RulesConfig  # noqa: E402
from lama_env import actions as A  # noqa: E402
from lama_env import openspiel as LO  # noqa: E402
from lama_env.observation import encode, observation_layout  # noqa: E402
from lama_env.roundend import turns  # noqa: E402
from lama_env.rules import FACES  # noqa: E402

#: Every combination of the rules [choice]s (with a short game and other dice for half of them).
CONFIGS = [
    {"triple_llama": t, "must_discard": m, **({} if k else {"end_threshold": 15, "dice": "LLL123/456L11/22336L"})}
    for (t, m), k in zip(itertools.product(["chip_only", "also_match"], [True, False]), itertools.cycle([0, 1]))
]


def test_the_game_is_registered_on_import():
    assert LO.GAME_NAME in [g.short_name for g in pyspiel.registered_games()]
    game = pyspiel.load_game("python_lama_dice")
    assert game.num_players() == 2 and game.num_distinct_actions() == A.NUM_ACTIONS == 129
    assert game.observation_tensor_shape() == [52] and game.max_game_length() == 3000
    t = game.get_type()
    assert t.chance_mode == pyspiel.GameType.ChanceMode.EXPLICIT_STOCHASTIC
    assert t.information == pyspiel.GameType.Information.PERFECT_INFORMATION
    assert t.utility == pyspiel.GameType.Utility.ZERO_SUM
    assert (game.min_utility(), game.max_utility()) == (-1.0, 1.0)
    points = pyspiel.load_game("python_lama_dice", {"reward": "points", "players": 3})
    assert points.get_type().utility == pyspiel.GameType.Utility.GENERAL_SUM
    assert (points.min_utility(), points.max_utility()) == (-(39 + 31), 0.0)


@pytest.mark.parametrize("players", range(1, 7))
@pytest.mark.parametrize("config", CONFIGS, ids=range(len(CONFIGS)))
def test_random_sim_test_with_serialization(players, config):
    reward = "win" if players % 2 else "points"
    game = pyspiel.load_game("python_lama_dice", {"players": players, "reward": reward, **config})
    pyspiel.random_sim_test(game, num_sims=2, serialize=True, verbose=False)


def test_bad_parameters_are_refused():
    with pytest.raises(pyspiel.SpielError, match="Unknown parameter 'colour'"):
        pyspiel.load_game("python_lama_dice", {"colour": "red"})
    with pytest.raises(ValueError, match=r"players must be 1\.\.6, got 7"):
        LO.LamaDiceGame({"players": 7})
    with pytest.raises(ValueError, match="reward must be one of 'win', 'points', got 'chips'"):
        LO.LamaDiceGame({"reward": "chips"})
    with pytest.raises(ValueError, match="triple_llama must be one of"):
        LO.LamaDiceGame({"triple_llama": "often"})


def test_chance_nodes_are_the_engines_with_exact_odds():
    game = pyspiel.load_game("python_lama_dice")
    state = game.new_initial_state()
    assert state.is_chance_node()
    deal = dict(state.chance_outcomes())
    assert deal == {343 + f: k / 36 for f, k in enumerate((6, 5, 5, 5, 5, 5, 5))}
    for _ in range(12):
        state.apply_action(343 + 2 if 345 in dict(state.chance_outcomes()) else state.chance_outcomes()[0][0])
    assert not state.is_chance_node() and state.legal_actions() == [A.ROLL, A.QUIT]
    state.apply_action(A.ROLL)
    rolls = dict(state.chance_outcomes())
    assert len(rolls) == 125 and math.fsum(rolls.values()) == pytest.approx(1.0, abs=1e-12)
    assert rolls[0] == pytest.approx(1 / 27)  # triple llama: action 49*0 + 7*0 + 0
    assert state.action_to_string(pyspiel.PlayerId.CHANCE, 49 * 1 + 7 * 3 + 5) == "roll 1 3 5"
    assert state.action_to_string(pyspiel.PlayerId.CHANCE, 343) == "deal L"
    assert state.action_to_string(0, A.QUIT) == "quit"


def _spiel_chance(state, outcome) -> None:
    assert state.is_chance_node()
    action = LO.chance_action(state.lama_game, outcome)
    assert action in dict(state.chance_outcomes())
    state.apply_action(action)


@pytest.mark.parametrize("players", range(1, 7))
@pytest.mark.parametrize("reward", ["win", "points"])
def test_same_chance_and_actions_give_the_same_game_as_lama_game(players, reward):
    """A seeded LamaGame and the OpenSpiel game fed its deals, dice and actions agree at every decision."""
    rules = RulesConfig(triple_llama="also_match") if players % 2 else RulesConfig()
    lama = LamaGame(players, rules, seed=players)
    spiel = LO.load(players, rules, reward=reward)
    state = spiel.new_initial_state()
    pick = random.Random(players)
    decisions = 0
    while not lama.game_over:  # rounds flow on in both
        assert lama.phase in (Phase.TURN, Phase.DISCARD, Phase.TAKE)
        if turns(lama) == 0 and lama.phase is Phase.TURN and state.is_chance_node():
            for hand in lama.to_record()["rounds"][-1]["hands"]:
                for card in hand:
                    _spiel_chance(state, FACES.index(card))
        assert not state.is_chance_node() and not state.is_terminal()
        p = lama.current_player
        assert state.current_player() == p and state.legal_actions() == list(lama.legal_actions())
        for seat in range(players):
            np.testing.assert_array_equal(state.observation_tensor(seat), encode(lama, seat))
        legal = lama.legal_actions()
        action = A.ROLL if legal == (A.ROLL, A.QUIT) and pick.random() < 0.8 else pick.choice(legal)
        lama.step(action)
        state.apply_action(action)
        decisions += 1
        if action == A.ROLL:
            _spiel_chance(state, lama.dice if lama.dice is not None else _last_dice(lama))
        assert state.returns() == [0.0] * players or lama.game_over
    assert state.is_terminal() and state.current_player() == pyspiel.PlayerId.TERMINAL
    assert state.returns() == list(lama.returns(reward))
    assert state.lama_game.totals == lama.totals and decisions > 10


def _last_dice(lama: LamaGame) -> tuple[int, ...]:
    """The dice of the last roll (a triple llama or a bust leaves no pending dice; a bust deals the next round)."""
    turns = [t for r in lama.to_record()["rounds"] for t in r["turns"]]
    return tuple(FACES.index(f) for f in turns[-1]["dice"])


def test_a_state_pickles_and_clones_mid_game():
    game = pyspiel.load_game("python_lama_dice", {"players": 3})
    state = game.new_initial_state()
    rng = np.random.default_rng(0)
    for _ in range(40):
        if state.is_chance_node():
            actions, probs = zip(*state.chance_outcomes(), strict=True)
            state.apply_action(int(rng.choice(actions, p=probs)))
        else:
            state.apply_action(int(rng.choice(state.legal_actions())))
    for twin in (state.clone(), pickle.loads(pickle.dumps(state)),
                 pyspiel.deserialize_game_and_state(pyspiel.serialize_game_and_state(game, state))[1]):
        assert str(twin) == str(state) and twin.history() == state.history()
        assert twin.lama_game.serialize() == state.lama_game.serialize()


def test_state_from_game_searches_from_any_position():
    lama = LamaGame(2, seed=3)
    lama.step(A.ROLL)
    before = lama.serialize()
    state = LO.state_from_game(lama)
    assert state.current_player() == lama.current_player and state.legal_actions() == list(lama.legal_actions())
    assert state.lama_game is not lama and not lama._explicit
    state.apply_action(state.legal_actions()[0])
    assert lama.serialize() == before  # the engine's game is untouched
    with pytest.raises(ValueError, match="must have the game's player count and rules"):
        LO.state_from_game(LamaGame(3), LO.load(2))


def test_the_game_is_cut_off_at_max_game_length():
    game = pyspiel.load_game("python_lama_dice", {"max_game_length": 5, "reward": "points"})
    state = game.new_initial_state()
    moves = 0
    while not state.is_terminal():
        if state.is_chance_node():
            state.apply_action(state.chance_outcomes()[-1][0])
        else:
            state.apply_action(A.ROLL if A.ROLL in state.legal_actions() else state.legal_actions()[0])
            moves += 1
    assert moves == 5 and not state.lama_game.game_over
    assert state.returns() == list(state.lama_game.returns("points"))


# ------------------------------------------------------------------ information state and the cut-off look
def _random_history(game, seed: int, stop_after: int | None = None):
    state = game.new_initial_state()
    rng = random.Random(seed)
    while not state.is_terminal() and (stop_after is None or len(state.history()) < stop_after):
        if state.is_chance_node():
            actions, probs = zip(*state.chance_outcomes(), strict=True)
            state.apply_action(rng.choices(actions, probs)[0])
        else:
            state.apply_action(rng.choice(state.legal_actions()))
    return state


def test_the_information_state_is_the_history_with_perfect_recall():
    from open_spiel.python.observation import make_observation

    game = pyspiel.load_game("python_lama_dice")
    t = game.get_type()
    assert t.provides_information_state_string and not t.provides_information_state_tensor
    info_obs = make_observation(game, pyspiel.IIGObservationType(perfect_recall=True))
    assert info_obs.tensor is None
    seen: dict[str, tuple[int, ...]] = {}
    for seed in range(40):
        state = _random_history(game, seed, stop_after=30 + seed)
        for p in range(2):
            info = state.information_state_string(p)
            assert info == state.history_str() == info_obs.string_from(state, p)
        history = tuple(state.history())
        assert seen.setdefault(state.information_state_string(0), history) == history
    # two histories that reach the same table have the same observation but different information states
    a, b = _same_table_two_histories(game)
    assert a.observation_string(0) == b.observation_string(0) and a.observation_tensor(0) == b.observation_tensor(0)
    assert a.information_state_string(0) != b.information_state_string(0)
    # the observation stays the project's encoding
    obs = make_observation(game)
    obs.set_from(a, 1)
    assert np.array_equal(obs.tensor, encode(a.lama_game, 1))


def _same_table_two_histories(game):
    """Two histories to one table: the same deal, seat 0's six cards dealt in two different orders."""
    hands = [[343 + f for f in (1, 2, 3, 4, 5, 6)], [343 + f for f in (0, 0, 1, 1, 2, 2)]]
    a, b = game.new_initial_state(), game.new_initial_state()
    for card in hands[0] + hands[1]:
        a.apply_action(card)
    for card in list(reversed(hands[0])) + hands[1]:
        b.apply_action(card)
    assert not a.is_chance_node() and not b.is_chance_node()
    return a, b


def test_a_state_cut_off_at_max_game_length_looks_terminal():
    game = pyspiel.load_game("python_lama_dice", {"max_game_length": 3})
    for seed in range(10):
        state = _random_history(game, seed)
        assert state.is_terminal() and state.cut_off() and not state.lama_game.game_over
        assert state.current_player() == pyspiel.PlayerId.TERMINAL
        text = str(state)
        assert "game cut off at max_game_length (3 decisions)" in text.splitlines()[0]
        assert not any(line.startswith(">") for line in text.splitlines()) and "chance:" not in text
        assert "to roll" not in text and "to discard" not in text and "to take" not in text
        assert state.observation_string(0) == state.observation_string(1) == "\n".join(text.splitlines()[:-1])
        for p in range(2):
            x = np.array(state.observation_tensor(p))
            layout = {e.name: e for e in observation_layout(2)}
            to_act, decision, dice = (x[layout[k].start:layout[k].start + layout[k].length]
                                      for k in ("to_act", "decision", "dice"))
            assert not to_act.any() and decision.tolist() == [0, 0, 0, 1] and not dice.any()
    # a state that ended normally is unaffected
    full = _random_history(pyspiel.load_game("python_lama_dice", {"end_threshold": 5}), 0)
    assert full.is_terminal() and not full.cut_off() and "game over" in str(full)


def test_openspiel_playthrough_and_sim_test_with_the_information_state():
    from open_spiel.python.algorithms import generate_playthrough

    text = generate_playthrough.playthrough("python_lama_dice(max_game_length=40)", action_sequence=None,
                                            alsologtostdout=False)
    assert "InformationStateString(0) = " in text and "InformationStateTensorShape" not in text
    assert "ObservationTensorShape() = [52]" in text
    for params in ({"max_round_turns": 3}, {"max_game_length": 25}):
        pyspiel.random_sim_test(pyspiel.load_game("python_lama_dice", params), num_sims=3, serialize=True,
                                verbose=False)
