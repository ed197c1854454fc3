"""The lookahead agent: legal and deterministic play, sensible choices on hand-built states."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from lama_dice.agents.lookahead import LookaheadPolicy, chip_value, lowest_highest_pmf
from lama_dice.agents.registry import AgentSpecError, make_agent
from lama_env import LamaGame, Phase
from lama_env import actions as A
from lama_env.record import replay
from lama_env.rules import RulesConfig, winners


def play(specs, seed, rules=None, record=True) -> LamaGame:
    agents = [make_agent(s, seed=seed + i) for i, s in enumerate(specs)]
    g = LamaGame(len(specs), rules=rules, seed=seed, record=record)
    while not g.game_over:
        legal = g.legal_actions()
        a = agents[g.current_player].act(g, legal)
        assert a in legal
        g.step(a)
    return g


@pytest.mark.parametrize("rules", [
    RulesConfig(),
    RulesConfig(triple_llama="also_match", must_discard=False, end_threshold=25),
], ids=["default", "variant"])
@pytest.mark.parametrize("specs", [
    ("lookahead",),
    ("lookahead", "optimal"),
    ("random", "lookahead", "threshold:0.2"),
    ("lookahead", "lookahead:points", "always-roll", "lookahead"),
])
def test_plays_legal_actions_to_the_end(specs, rules):
    for seed in range(2):
        g = play(specs, seed, rules)  # asserts every action is legal
        # the game ended by the rules (a total reached the threshold), and its record replays to the same result
        assert max(g.totals) >= rules.end_threshold and g.result()["winners"] == winners(g.totals)
        assert replay(g.to_record()) == g.result()


def test_deterministic_given_seed():
    specs = ("lookahead", "random", "lookahead")
    a = play(specs, 3).to_record()
    b = play(specs, 3).to_record()
    assert a == b


# ------------------------------------------------------------ hand-built states
P0 = ["1", "2", "3", "4", "5", "6"]
P1 = ["L", "L", "6", "6", "5", "5"]


def down_to_one(start_points=None) -> LamaGame:
    """Player 0 ends with the display {1} at a turn; player 1 is still in the round."""
    g = LamaGame(2, hands=[P0, P1], start_points=start_points, seed=0)
    g.step(A.ROLL, dice=["2", "3", "5"])
    g.step(A.discard_action((0, 0, 1, 1, 0, 1, 0)))  # 2 3 5 -> {1 4 6}
    g.step(A.ROLL, dice=["1", "5", "1"])
    g.step(A.discard_action((0, 0, 0, 0, 0, 1, 0)))  # player 1 drops a 5
    g.step(A.ROLL, dice=["4", "6", "L"])
    g.step(A.discard_action((0, 0, 0, 0, 1, 0, 1)))  # 4 6 -> {1}
    g.step(A.ROLL, dice=["2", "5", "2"])
    g.step(A.discard_action((0, 0, 0, 0, 0, 1, 0)))
    assert g.phase == Phase.TURN and g.current_player == 0 and g.displays[0] == (0, 1, 0, 0, 0, 0, 0)
    return g


def test_quits_with_a_one_point_display():
    g = down_to_one()
    assert make_agent("lookahead").act(g, g.legal_actions()) == A.QUIT
    assert make_agent("lookahead:points").act(g, g.legal_actions()) == A.QUIT


def test_goes_out_when_it_can():
    g = LamaGame(2, hands=[P0, P1], seed=0)
    g.step(A.ROLL, dice=["2", "3", "5"])
    g.step(A.discard_action((0, 0, 1, 1, 0, 1, 0)))
    g.step(A.ROLL, dice=["1", "5", "1"])
    g.step(A.discard_action((0, 0, 0, 0, 0, 1, 0)))
    g.step(A.ROLL, dice=["4", "6", "1"])  # player 0 holds {1 4 6}: all three match
    assert g.phase == Phase.DISCARD
    a = make_agent("lookahead").act(g, g.legal_actions())
    assert A.discard_counts(a) == (0, 1, 0, 0, 1, 0, 1)


def test_rolls_for_the_going_out_chip_with_a_lone_llama():
    # {L} scores 10; most rolls show a llama, and going out returns a 10-point chip
    g = LamaGame(2, hands=[["L", "1", "2", "3", "4", "5"], P1], start_points=[25, 20], seed=0)
    g.step(A.ROLL, dice=["1", "3", "5"])
    g.step(A.discard_action((0, 1, 0, 1, 0, 1, 0)))  # -> {L 2 4}
    g.step(A.ROLL, dice=["1", "5", "1"])
    g.step(A.discard_action((0, 0, 0, 0, 0, 1, 0)))
    g.step(A.ROLL, dice=["2", "4", "6"])
    g.step(A.discard_action((0, 0, 1, 0, 1, 0, 0)))  # -> {L}
    g.step(A.ROLL, dice=["2", "5", "2"])
    g.step(A.discard_action((0, 0, 0, 0, 0, 1, 0)))
    assert g.displays[0] == (1, 0, 0, 0, 0, 0, 0) and g.phase == Phase.TURN and g.current_player == 0
    assert make_agent("lookahead").act(g, g.legal_actions()) == A.ROLL


def test_take_agrees_with_the_solo_values():
    # player 0 holds {1 1 2 2 3 4}; dice L 5 6 match nothing.  Taking the llama costs 10
    # points now but makes most rolls match (each die has two llamas): its solo value is the
    # least of the three, and both the optimal and the lookahead agents take it.
    from lama_dice.agents.solver import solver_for

    g = LamaGame(2, hands=[["1", "1", "2", "2", "3", "4"], P1], seed=0)
    g.step(A.ROLL, dice=["L", "5", "6"])
    assert g.phase == Phase.TAKE
    s = solver_for(g.rules)
    d = g.displays[0]
    after = {f: s.value(tuple(c + (i == f) for i, c in enumerate(d))) for f in (0, 5, 6)}
    assert min(after, key=after.get) == 0
    assert make_agent("optimal").act(g, g.legal_actions()) == A.take_action(0)
    assert make_agent("lookahead").act(g, g.legal_actions()) == A.take_action(0)


def test_chip_value():
    assert [chip_value(t) for t in (0, 1, 9, 10, 37)] == [0, 1, 1, 10, 10]


def test_lowest_highest_pmf_matches_brute_force():
    rng = np.random.default_rng(0)
    pmfs = [rng.dirichlet(np.ones(5)) for _ in range(3)]
    joint = lowest_highest_pmf(pmfs)
    brute = np.zeros((5, 5))
    for xs in itertools.product(range(5), repeat=3):
        brute[min(xs), max(xs)] += np.prod([pmfs[i][x] for i, x in enumerate(xs)])
    assert np.allclose(joint, brute, atol=1e-12)


@pytest.mark.parametrize("spec", ["lookahead:3", "lookahead:x", "lookahead:"])
def test_bad_specs_raise(spec):
    with pytest.raises(AgentSpecError):
        make_agent(spec)


def test_specs():
    assert make_agent("lookahead").objective == "win"
    assert make_agent("lookahead:points").objective == "points"
    assert isinstance(make_agent("lookahead"), LookaheadPolicy)


@pytest.mark.parametrize("spec", ["lookahead", "lookahead:points", "optimal"])
@pytest.mark.parametrize("total", [0, 12])
def test_free_rerolls_do_not_loop_forever(spec, total):
    # must_discard=False and a display that every roll matches (die 1 shows 3, 4, 5, 6 or L):
    # discarding nothing is a free re-roll, but the round must still end.
    rules = RulesConfig(must_discard=False)
    g = LamaGame(2, rules=rules, hands=[["L", "3", "4", "5", "6", "6"], P1], start_player=1,
                 start_points=[total, 0], seed=4)
    g.step(A.QUIT)  # player 1 quits: player 0 is the last player
    agent = make_agent(spec)
    for _ in range(5000):
        if g.game_over or g.rounds_finished:
            break
        g.step(agent.act(g, g.legal_actions()))
    assert g.game_over or g.rounds_finished == 1  # the round ended (rounds flow on: the next is dealt)
