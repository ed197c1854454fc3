"""Rounds flow on (issue 31 item 3): every state is a decision, a chance node or the end of the game.

``LamaGame(rounds="flow")`` (the default) deals the next round in the step that ends one, at the
point of the random stream where ``next_round()`` drew it; ``rounds="manual"`` is the compatibility
path that stops at ``Phase.ROUND_OVER``.
"""

from __future__ import annotations

import pickle
import random

import pytest

from lama_env import actions as A
from lama_env.engine import GameSetupError, IllegalActionError, LamaGame, Phase
from lama_env.rules import RulesConfig
from lama_env.snapshot import StateFormatError

RULES = [RulesConfig(), RulesConfig(triple_llama="also_match", must_discard=False),
         RulesConfig(end_threshold=15, max_round_turns=6)]


def _play_manual(game: LamaGame, pick: random.Random) -> list[dict]:
    """Random play, ``next_round()`` at once after each round; the round results seen at each round end."""
    ends = []
    while not game.game_over:
        if game.phase is Phase.ROUND_OVER:
            ends.append(game.last_round)
            game.next_round()
        elif game.is_chance_node():
            game.sample_chance()
        else:
            game.step(pick.choice(game.legal_actions()))
    return [*ends, game.last_round]  # the last round ends the game


def _play_flow(game: LamaGame, pick: random.Random) -> list[dict]:
    """Random play of a flowing game, checking that each state is a decision, a chance node or the end."""
    ends = []
    while not game.game_over:
        assert game.phase is not Phase.ROUND_OVER and not game.round_over
        assert bool(game.legal_actions()) != game.is_chance_node()  # exactly one of the two
        finished, rnd = game.rounds_finished, game.round_index
        if game.is_chance_node():
            game.sample_chance()
        else:
            game.step(pick.choice(game.legal_actions()))
        if game.rounds_finished > finished:
            ends.append(game.last_round)
            assert game.last_round == game.round_results()[-1]
            if not game.game_over:  # the next round is dealt (or, explicit, its deal is the chance node)
                assert game.round_index == rnd + 1 and game.turns_in_round == 0
                assert game.is_chance_node() == (game.chance == "explicit")
                assert game.round_points is None and game.ended_by is None
    assert game.legal_actions() == () and not game.is_chance_node()
    return ends


@pytest.mark.parametrize("chance", ["sampled", "explicit"])
@pytest.mark.parametrize("n", range(1, 7))
def test_flowing_rounds_play_the_same_games_as_next_round_at_once(n, chance):
    """Same seed, same actions: the same game, record, results and statistics as the manual path."""
    for s in range(12):
        rules = RULES[s % len(RULES)]
        manual = LamaGame(n, rules, seed=s, chance=chance, rounds="manual")
        flow = LamaGame(n, rules, seed=s, chance=chance)
        assert flow.rounds == "flow" and manual.rounds == "manual"
        ends_m = _play_manual(manual, random.Random(s))
        ends_f = _play_flow(flow, random.Random(s))
        assert ends_f == ends_m and len(ends_f) == flow.rounds_finished >= 1
        assert flow.to_record() == manual.to_record() and flow.result() == manual.result()
        assert flow.statistics() == manual.statistics() and flow.totals == manual.totals
        assert flow.returns() == manual.returns() and flow.returns("points") == manual.returns("points")


def test_last_round_says_how_the_round_ended():
    g = LamaGame(2, hands=[list("111222"), list("333444")], start_points=[3, 7])
    assert g.last_round is None and g.rounds_finished == 0
    g.step(A.QUIT)  # seat 0 quits: seat 1 is the last player in
    g.step(A.ROLL, dice=["1", "5", "1"])  # no 3 or 4: bust, and the next round is dealt
    last = g.last_round
    assert last["ended_by"] == "bust" and last["busted"] == 1 and last["went_out"] is None
    assert last["quit"] == (True, False) and last["totals"] == [3 + last["points"][0], 7 + last["points"][1]]
    assert g.rounds_finished == 1 and g.round_index == 1 and g.start_player == 1 and g.phase is Phase.TURN
    assert g.totals == tuple(last["totals"]) and g.busted is None and g.quit == (False, False)
    last["points"].append(99)  # a copy
    assert len(g.last_round["points"]) == 2


def test_next_round_is_the_manual_paths():
    g = LamaGame(2, seed=0)
    with pytest.raises(IllegalActionError, match="next_round\\(\\) is for rounds='manual'"):
        g.next_round()
    m = LamaGame(2, seed=0, rounds="manual")
    while not m.round_over:
        m.step(A.QUIT)
    assert m.phase is Phase.ROUND_OVER
    m.next_round()
    assert m.round_index == 1
    with pytest.raises(GameSetupError, match="rounds must be one of 'flow', 'manual', got 'auto'"):
        LamaGame(2, rounds="auto")


def test_clone_serialize_and_pickle_keep_the_round_mode():
    m = LamaGame(3, {"end_threshold": 1000}, seed=4, rounds="manual")
    while not m.round_over:
        m.step(A.QUIT)
    for g in (m.copy(), pickle.loads(pickle.dumps(m)), LamaGame.deserialize(m.serialize())):
        assert g.rounds == "manual" and g.phase is Phase.ROUND_OVER
    f = m.clone(rounds="flow")  # a manual game between rounds still deals with next_round() ...
    f.next_round()
    assert f.rounds == "flow" and f.round_index == 1
    while f.rounds_finished < 2:  # ... and then flows on
        f.step(A.QUIT)
    assert f.round_index == 2 and f.phase is Phase.TURN
    for g in (f.copy(), pickle.loads(pickle.dumps(f)), LamaGame.deserialize(f.serialize())):
        assert g.rounds == "flow" and g.serialize() == f.serialize()
    assert m.clone(rounds="manual").rounds == "manual" and f.clone().rounds == "flow"
    with pytest.raises(GameSetupError, match="rounds must be one of"):
        f.clone(rounds="never")


def test_states_from_before_the_round_mode_stop_between_rounds():
    """A state string or pickle without the round mode was written by an engine that stopped between rounds."""
    import json

    g = LamaGame(2, seed=1)
    data = json.loads(g.serialize())
    del data["rounds"]
    old = LamaGame.deserialize(json.dumps(data))
    assert old.rounds == "manual" and old.legal_actions() == g.legal_actions()
    data["rounds"] = "sometimes"
    with pytest.raises(StateFormatError, match="rounds must be one of 'flow', 'manual'"):
        LamaGame.deserialize(json.dumps(data))
    state = g.__getstate__()
    del state["_flow"]
    restored = LamaGame.__new__(LamaGame)
    restored.__setstate__(state)
    assert restored.rounds == "manual"
