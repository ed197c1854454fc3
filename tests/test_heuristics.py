"""The rule-based agents: exact decisions on hand-built states, spec parsing, legal play."""

from __future__ import annotations

import pytest

from lama_dice.agents.heuristics import (
    AlwaysRollPolicy,
    PointsPolicy,
    ThresholdPolicy,
    cheapest_take,
    maximal_discard,
)
from lama_dice.agents.registry import AgentSpecError, make_agent
from lama_env import LamaGame, Phase
from lama_env import actions as A
from lama_env.odds import p_no_match
from lama_env.rules import FACE_INDEX, RulesConfig, score_display
from lama_env.transitions import match_limits

OTHER = ["L", "L", "6", "6", "5", "5"]


def game_with(hand, dice=None, rules=None, players=2) -> LamaGame:
    """Player 0 holds ``hand``; with ``dice``, player 0 has rolled them."""
    hands = [hand, OTHER] + [["L", "1", "1", "2", "2", "3"]] * (players - 2)
    g = LamaGame(players, rules=rules, hands=hands[:players], seed=0)
    if dice is not None:
        g.step(A.ROLL, dice=dice)
    return g


# ---------------------------------------------------------------------- turns
@pytest.mark.parametrize("hand", [["L", "1", "2", "3", "4", "5"], ["1", "1", "1", "2", "2", "2"]])
def test_always_roll_rolls(hand):
    g = game_with(hand)
    assert make_agent("always-roll").act(g, g.legal_actions()) == A.ROLL


@pytest.mark.parametrize("hand", [["1", "1", "1", "1", "1", "2"], ["L", "L", "3", "3", "5", "6"],
                                  ["2", "2", "2", "2", "4", "4"]])
def test_threshold_quits_exactly_at_t(hand):
    g = game_with(hand)
    p = p_no_match(g.displays[0], g.rules)
    assert 0 < p < 1
    assert ThresholdPolicy(p).act(g, g.legal_actions()) == A.QUIT
    assert make_agent(f"threshold:{p!r}").act(g, g.legal_actions()) == A.QUIT
    assert ThresholdPolicy(min(1.0, p + 1e-9)).act(g, g.legal_actions()) == A.ROLL
    default = make_agent("threshold")
    assert default.act(g, g.legal_actions()) == (A.QUIT if p >= 0.2 else A.ROLL)


@pytest.mark.parametrize("hand", [["1", "1", "1", "1", "1", "2"], ["L", "L", "3", "3", "5", "6"]])
def test_points_quits_at_k(hand):
    g = game_with(hand)
    s = score_display(g.displays[0])
    assert PointsPolicy(s).act(g, g.legal_actions()) == A.QUIT
    assert make_agent(f"points:{s}").act(g, g.legal_actions()) == A.QUIT
    assert PointsPolicy(s - 1).act(g, g.legal_actions()) == A.ROLL
    assert make_agent("points").act(g, g.legal_actions()) == (A.QUIT if s <= 10 else A.ROLL)


def test_defaults():
    assert make_agent("threshold").threshold == 0.2
    assert make_agent("points").limit == 10


# -------------------------------------------------------------------- discards
@pytest.mark.parametrize("hand,dice,expect", [
    (["L", "L", "3", "3", "5", "6"], ["3", "3", "L"], {"L": 1, "3": 2}),
    (["L", "L", "3", "3", "5", "6"], ["L", "L", "L"], None),  # chip_only: no discard
    (["1", "2", "3", "4", "5", "6"], ["4", "5", "1"], {"1": 1, "4": 1, "5": 1}),
    (["4", "4", "4", "5", "5", "6"], ["4", "4", "5"], {"4": 2, "5": 1}),
])
@pytest.mark.parametrize("spec", ["always-roll", "threshold:0.2", "points:10"])
def test_discards_all_it_can(hand, dice, expect, spec):
    g = game_with(hand, dice)
    if expect is None:
        assert g.phase == Phase.TURN and g.current_player == 1
        return
    assert g.phase == Phase.DISCARD
    counts = [0] * 7
    for f, k in expect.items():
        counts[FACE_INDEX[f]] = k
    legal = g.legal_actions()
    a = make_agent(spec).act(g, legal)
    assert A.discard_counts(a) == tuple(counts)
    assert a == maximal_discard(legal) == legal[-1]  # the engine lists the largest discard last


# ----------------------------------------------------------------------- takes
@pytest.mark.parametrize("dice,expect", [
    (["L", "5", "6"], "5"),
    (["L", "6", "6"], "6"),
    (["L", "L", "6"], "6"),
    (["L", "L", "5"], "5"),
    (["L", "3", "L"], None),  # 3 matches: a discard
])
@pytest.mark.parametrize("spec", ["always-roll", "threshold:0.2", "points:10"])
def test_takes_the_cheapest_card(dice, expect, spec):
    g = game_with(["1", "1", "2", "2", "3", "4"], dice)
    if expect is None:
        assert g.phase == Phase.DISCARD
        return
    assert g.phase == Phase.TAKE
    assert make_agent(spec).act(g, g.legal_actions()) == A.take_action(FACE_INDEX[expect])


def test_take_of_a_llama_when_it_is_the_only_choice():
    g = game_with(["1", "1", "2", "2", "3", "4"], ["L", "L", "L"], rules=RulesConfig(triple_llama="also_match"))
    assert g.legal_actions() == (A.take_action(0),)
    assert make_agent("always-roll").act(g, g.legal_actions()) == A.take_action(0)


def test_cheapest_take_ties_go_to_the_lower_face():
    # a display holding 5 and L: taking 5 or L adds 0 points; the lower face value (5 < L=10) wins
    d = (1, 0, 0, 0, 0, 1, 0)
    legal = (A.take_action(0), A.take_action(5), A.take_action(6))
    assert cheapest_take(d, legal) == A.take_action(5)
    assert cheapest_take((0,) * 7, legal) == A.take_action(5)
    assert cheapest_take((0, 0, 0, 0, 0, 1, 1), legal) == A.take_action(5)
    assert cheapest_take((0, 0, 0, 0, 0, 0, 1), legal) == A.take_action(6)


# -------------------------------------------------------------- whole games
@pytest.mark.parametrize("rules", [RulesConfig(), RulesConfig(triple_llama="also_match", must_discard=False)])
def test_every_decision_follows_the_documented_rules(rules):
    specs = ["always-roll", "threshold:0.2", "points:10", "random"]
    for game_no in range(6):
        g = LamaGame(4, rules=rules, seed=game_no, record=False)
        agents = [make_agent(specs[(i + game_no) % 4], seed=i) for i in range(4)]
        turns = 0
        while not g.game_over and turns < 3000:
            p = g.current_player
            legal = g.legal_actions()
            agent = agents[p]
            a = agent.act(g, legal)
            assert a in legal
            d = g.displays[p]
            if agent.spec != "random":
                if g.phase == Phase.DISCARD:
                    assert A.discard_counts(a) == match_limits(d, g.dice)
                elif g.phase == Phase.TAKE:
                    def cost(f, d=d):
                        nd = list(d)
                        nd[f] += 1
                        return (score_display(nd) - score_display(d), 10 if f == 0 else f)
                    assert a - A.TAKE_BASE == min((x - A.TAKE_BASE for x in legal), key=cost)
                elif agent.spec == "always-roll":
                    assert a == A.ROLL
            g.step(a)
            turns += 1
        assert g.game_over


# ----------------------------------------------------------------------- specs
@pytest.mark.parametrize("spec", [
    "threshold:abc", "threshold:2", "threshold:-0.1", "threshold:nan", "threshold:inf", "threshold:",
    "points:x", "points:-1", "points:1.5", "points:", "always-roll:3",
])
def test_bad_specs_raise(spec):
    with pytest.raises(AgentSpecError):
        make_agent(spec)


def test_specs_build_the_right_agents():
    assert isinstance(make_agent("always-roll"), AlwaysRollPolicy)
    t = make_agent("threshold:0.35")
    assert isinstance(t, ThresholdPolicy) and t.threshold == 0.35 and t.spec == "threshold:0.35"
    k = make_agent("points:7")
    assert isinstance(k, PointsPolicy) and k.limit == 7
