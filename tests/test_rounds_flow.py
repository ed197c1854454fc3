"""Rounds flow on (issue 31 item 3): every state is a decision, a chance node or the end of the game.

The step that ends a round deals the next one (with ``chance="explicit"``: the next deal is a chance
node), and ``LamaGame.last_round`` describes the round it ended.  What lama-dice 0.2.0 retired with
that (``rounds="manual"``, ``next_round()``, a NumPy generator as ``rng``, and the readers of 0.1.0's
pickles and state strings) each answers with a one-line error naming its replacement.
"""

from __future__ import annotations

import json
import pickle
import random

import numpy as np
import pytest

from lama_env import actions as A
from lama_env.engine import GameSetupError, LamaGame, Phase, RetiredMemberError
from lama_env.errors import LAST_WITH, RETIRED_IN
from lama_env.record import replay, replay_game
from lama_env.roundend import ended, turns
from lama_env.rules import RulesConfig
from lama_env.snapshot import StateFormatError, from_state, to_state
from lama_env.streams import Streams

RULES = [RulesConfig(), RulesConfig(triple_llama="also_match", must_discard=False),
         RulesConfig(end_threshold=15, max_round_turns=6)]
#: What every retired thing's message says (``lama_env.errors.retired``).
RETIRED = f"was retired in {RETIRED_IN} \\({LAST_WITH} was the last version with it\\): "
RETIRED_0_4 = "was retired in 0.4.0 \\(0.3.0 was the last version with it\\): "


def _play_flow(game: LamaGame, pick: random.Random) -> list[dict]:
    """Random play of a flowing game, checking that each state is a decision, a chance node or the end."""
    ends = []
    while not game.game_over:
        assert game.phase in (Phase.TURN, Phase.DISCARD, Phase.TAKE)
        assert bool(game.legal_actions()) != game.is_chance_node()  # exactly one of the two
        finished, rnd = game.rounds_finished, game.round_index
        if game.is_chance_node():
            game.sample_chance()
        else:
            game.step(pick.choice(game.legal_actions()))
        if game.rounds_finished > finished:
            ends.append(game.last_round)
            assert game.last_round == game._history()[-1]
            if not game.game_over:  # the next round is dealt (or, explicit, its deal is the chance node)
                assert game.round_index == rnd + 1 and turns(game) == 0
                assert game.is_chance_node() == game._explicit
                assert ended(game) is None  # (a round's end shows only at the game's end)
    assert game.legal_actions() == () and not game.is_chance_node()
    return ends


@pytest.mark.parametrize("chance", ["sampled", "explicit"])
@pytest.mark.parametrize("n", range(1, 7))
def test_flowing_rounds_play_the_games_their_records_replay(n, chance):
    """Each round end seen as it happens is the game's round result, and its record replays the same game.

    The replay deals each round at its deal's chance node from the record (the path that dealt rounds
    apart from the step that ended one): the same record, results, statistics and returns.
    """
    for s in range(12):
        rules = RULES[s % len(RULES)]
        flow = LamaGame(n, rules, seed=s, chance=chance)
        ends = _play_flow(flow, random.Random(s))
        assert ends == flow._history() and len(ends) == flow.rounds_finished >= 1
        assert ends[-1] == flow.last_round == ended(flow)
        record = flow.to_record()
        assert len(record["rounds"]) == len(ends)
        again = replay_game(record)
        assert replay(record) == flow.result() == again.result()
        assert again.to_record() == record and again._history() == ends
        assert again.statistics() == flow.statistics() and again.totals == flow.totals
        assert again.returns() == flow.returns() and again.returns("points") == flow.returns("points")


def test_last_round_says_how_the_round_ended():
    g = LamaGame(2, hands=[list("111222"), list("333444")], start_points=[3, 7])
    assert g.last_round is None and g.rounds_finished == 0
    g.step(A.QUIT)  # seat 0 quits: seat 1 is the last player in
    g.step(A.ROLL, dice=["1", "5", "1"])  # no 3 or 4: bust, and the next round is dealt
    last = g.last_round
    assert last["ended_by"] == "bust" and last["busted"] == 1 and last["went_out"] is None
    assert last["quit"] == (True, False) and last["totals"] == [3 + last["points"][0], 7 + last["points"][1]]
    assert g.rounds_finished == 1 and g.round_index == 1 and g.start_player == 1 and g.phase is Phase.TURN
    assert g.totals == tuple(last["totals"]) and ended(g) is None and g.quit == (False, False)
    last["points"].append(99)  # a copy
    assert len(g.last_round["points"]) == 2


# ------------------------------------------------------------------ what 0.2.0 retired
def _one_line(e: pytest.ExceptionInfo) -> str:
    text = str(e.value)
    assert "\n" not in text and len(text) < 300, text
    return text


def test_manual_rounds_are_retired():
    g = LamaGame(2, seed=0)
    for make in (lambda: LamaGame(2, rounds="manual"), lambda: g.clone(rounds="manual"),
                 lambda: from_state(to_state(g), 2, rounds="manual")):
        with pytest.raises(GameSetupError, match="rounds='manual' " + RETIRED + "rounds always flow") as e:
            make()
        _one_line(e)
    for make in (lambda: LamaGame(2, rounds="auto"), lambda: g.clone(rounds="never")):
        with pytest.raises(GameSetupError, match=r"rounds must be 'flow', got '(auto|never)'"):
            make()
    assert g.clone(rounds="flow").serialize() == g.serialize()
    assert [int(p) for p in Phase] == [0, 1, 2, 4]  # (3 was the round-over phase)


def test_next_round_is_retired():
    g = LamaGame(2, seed=0, chance="explicit")
    while g.is_chance_node():
        g.sample_chance()
    while not g.rounds_finished:  # between rounds now is the next deal's chance node
        g.step(A.QUIT)
    for game in (LamaGame(2, seed=0), g):
        before = game.serialize()
        with pytest.raises(RetiredMemberError, match=r"^LamaGame\.next_round\(\) " + RETIRED + "rounds flow") as e:
            game.next_round()
        _one_line(e)
        assert not hasattr(game, "next_round")
        with pytest.raises(RetiredMemberError, match="retired"):
            game.next_round(hands=[list("L12345"), list("L12345")])
        assert game.serialize() == before


def test_a_numpy_generator_as_rng_is_retired():
    for rng in (np.random.default_rng(0), np.random.Generator(np.random.MT19937(1))):
        with pytest.raises(GameSetupError, match="a game drawing from a numpy.random.Generator " + RETIRED +
                           "pass seed= and game_id=, or rng=lama_env.streams.Streams") as e:
            LamaGame(2, rng=rng)
        _one_line(e)
        with pytest.raises(GameSetupError, match="numpy.random.Generator " + RETIRED):
            LamaGame(2, seed=0).clone(rng=rng)
    LamaGame(2, rng=Streams.of_game(0, 0))  # the streams are the one source of randomness


def test_an_old_pickle_is_retired():
    """A pickle of 0.1.0's engine (its round mode ``_flow``, no ``_max_rounds``) is refused in one line."""
    g = LamaGame(2, seed=1)
    for change in ({"_flow": False}, {"_flow": True}, {"_max_rounds": None}, {"format": "lama-dice-state/1"}):
        state = g.__getstate__()
        for key, value in change.items():
            if value is None:
                del state[key]
            else:
                state[key] = value
        with pytest.raises(GameSetupError, match="unpickling a LamaGame pickled by an earlier engine " + RETIRED_0_4 +
                           "load it with lama-dice 0.3.0 .*or pickle games again") as e:
            LamaGame.__new__(LamaGame).__setstate__(state)
        _one_line(e)
    assert pickle.loads(pickle.dumps(g)).serialize() == g.serialize()  # this version's pickles load


def test_an_old_state_string_is_retired():
    """A ``lama-dice-state/1`` string (0.3.0 and earlier: the table field by field) is refused in one line."""
    g = LamaGame(2, seed=1)
    g.step(A.ROLL)
    data = json.loads(g.serialize())
    data["format"] = "lama-dice-state/1"
    with pytest.raises(StateFormatError, match="^a lama-dice-state/1 string " + RETIRED_0_4 +
                       r"load it with lama-dice 0.3.0 and save the game with to_record\(\)") as e:
        LamaGame.deserialize(json.dumps(data))
    _one_line(e)
