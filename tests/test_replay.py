"""Replaying game records: legal records, and an illegal one for every kind of fault RULES.md names.

Illegal records are legal records produced by the engine, then mutated.
"""

import copy

import pytest
from conftest import deal, discard, play_random, roll, scenario, take

from lama_env import actions as A
from lama_env.engine import LamaGame
from lama_env.record import RecordError, replay, replay_game
from lama_env.rules import RulesConfig


def two_round_game() -> LamaGame:
    """Round 0 is the RULES.md example (all quit); round 1 ends in a bust and ends the game.

    round 0, start 0:  t0 p0 roll 345 discard 35 | t1 p1 roll 135 take 1 | t2 p0 roll LLL
                       t3 p1 quit | t4 p0 quit                      -> points 20, 23
    round 1, start 1:  t0 p1 roll 345 take 3 | t1 p0 roll 455 take 4 | t2 p1 roll 455 take 5
                       t3 p0 roll 355: bust                         -> points 23, 17
    """
    g = LamaGame(2, seed=0, hands=[list("L33516"), list("2246L6")], chance="explicit")  # the deals are given
    roll(g, "345")
    discard(g, "35")
    roll(g, "135")
    take(g, "1")
    roll(g, "LLL")
    g.step(A.QUIT)
    g.step(A.QUIT)
    deal(g, "126LL1", "112266")  # the next round's deal, at its chance node
    roll(g, "345")
    take(g, "3")
    roll(g, "455")
    take(g, "4")
    roll(g, "455")
    take(g, "5")
    roll(g, "355")
    return g


EXPECTED = {
    "valid": True,
    "rounds": [
        {"finished": True, "ended_by": "all_quit", "went_out": None, "points": [20, 23], "totals": [20, 23]},
        {"finished": True, "ended_by": "bust", "went_out": None, "points": [23, 17], "totals": [43, 40]},
    ],
    "totals": [43, 40],
    "game_over": True,
    "winners": [1],
}


@pytest.fixture
def rec() -> dict:
    return two_round_game().to_record()


def turn(rec: dict, r: int, t: int) -> dict:
    return rec["rounds"][r]["turns"][t]


def assert_fault(rec, r, t, *words):
    res = replay(rec)
    assert res["valid"] is False, res
    assert (res["round"], res["turn"]) == (r, t), res
    assert set(res) == {"valid", "round", "turn", "error"}
    msg = res["error"]
    assert isinstance(msg, str) and msg and "\n" not in msg
    for w in words:
        assert w in msg, (w, msg)
    with pytest.raises(RecordError) as e:
        replay_game(rec)
    assert (e.value.round, e.value.turn) == (r, t)


# ------------------------------------------------------------------ legal records
def test_engine_record_replays_to_hand_computed_result(rec):
    assert two_round_game().result() == EXPECTED
    assert replay(rec) == EXPECTED
    assert [t.get("take") for t in rec["rounds"][1]["turns"]] == ["3", "4", "5", None]
    assert rec["rounds"][1]["start_player"] == 1
    game = replay_game(rec)
    assert game.game_over and game.totals == (43, 40)


def test_rules_and_start_points_are_optional(rec):
    del rec["rules"], rec["start_points"]
    assert replay(rec) == EXPECTED


def test_first_round_may_start_with_any_player_and_points():
    g = scenario("L33516", "2246L6", start_points=[12, 30], start_player=1)
    g.step(A.QUIT)
    g.step(A.QUIT)
    assert g.game_over
    res = replay(g.to_record())
    assert res == g.result()
    assert res["totals"] == [37, 52] and res["winners"] == [0]


def test_unfinished_last_round_counts_triple_llama_chips():
    g = scenario("L33516", "2246L6", start_points=[15, 7])
    roll(g, "LLL")
    roll(g, "LLL")
    roll(g, "345")
    discard(g, "3")
    res = replay(g.to_record())
    assert res == {
        "valid": True,
        "rounds": [{"finished": False, "ended_by": None, "went_out": None, "points": None, "totals": [5, 6]}],
        "totals": [5, 6], "game_over": False, "winners": [],
    }


def test_a_dealt_round_without_turns_is_an_unfinished_round(rec):
    rec["rounds"] = rec["rounds"][:1]
    rec["rounds"].append({"start_player": 1, "hands": [list("123456"), list("123456")], "turns": []})
    res = replay(rec)
    assert res["valid"] and len(res["rounds"]) == 2
    assert res["rounds"][1] == {"finished": False, "ended_by": None, "went_out": None, "points": None,
                                "totals": [20, 23]}


def test_non_default_rules_are_applied():
    rules = RulesConfig(triple_llama="also_match", must_discard=False, end_threshold=15,
                        dice=(tuple("LLLLLL"), tuple("1234LL"), tuple("3456LL")))
    g = scenario("LL3516", "2246L6", rules=rules, start_points=[11, 0])
    roll(g, "LLL")
    discard(g, "L")  # also_match: the llamas discard after the chip
    roll(g, "L4L")
    discard(g, "")  # must_discard false
    rec = g.to_record()
    assert rec["rules"]["dice"][0] == ["L"] * 6
    assert turn(rec, 0, 0)["discard"] == ["L"] and turn(rec, 0, 1)["discard"] == []
    assert replay(rec) == g.result()
    assert replay(rec)["totals"] == [1, 0]
    # the same record under the default rules is illegal at its first turn
    rec2 = copy.deepcopy(rec)
    del rec2["rules"]
    assert_fault(rec2, 0, 0, "triple llama", "'discard'")


@pytest.mark.parametrize("n", [1, 3, 6])
def test_random_games_replay(n):
    for seed in range(3):
        g = play_random(n, seed, {"triple_llama": "also_match"} if seed % 2 else None)
        assert replay(g.to_record()) == g.result()


# ------------------------------------------------------------------ not a record at all
@pytest.mark.parametrize("bad", [None, [], "lama", 3, [{"format": "lama-dice-record/1"}]])
def test_not_an_object(bad):
    assert_fault(bad, None, None, "not a game record")


@pytest.mark.parametrize("mutate, words", [
    (lambda r: r.update(format="lama-dice-record/3"), "format"),
    (lambda r: r.pop("format"), "format"),
    (lambda r: r.pop("players"), "'players'"),
    (lambda r: r.pop("rounds"), "'rounds'"),
    (lambda r: r.update(comment="hi"), "'comment'"),
    (lambda r: r.update(players="2"), "players"),
    (lambda r: r.update(players=2.0), "players"),
    (lambda r: r.update(players=True), "players"),
    (lambda r: r.update(players=0), "players"),
    (lambda r: r.update(players=7), "players"),
    (lambda r: r.update(players=3), "start_points"),  # 3 players but 2 start points
    (lambda r: r.update(players=3) or r.pop("start_points"), "3 hands"),  # the first round's deal is bad
    (lambda r: r.update(rounds={"0": {}}), "rounds"),
    (lambda r: r.update(rounds=[]), "no rounds"),
    (lambda r: r.update(rules=["chip_only"]), "rules"),
    (lambda r: r.update(rules={"triple_llama": "never"}), "triple_llama"),
    (lambda r: r.update(rules={"speed": 3}), "speed"),
    (lambda r: r.update(rules={"end_threshold": "40"}), "end_threshold"),
    (lambda r: r.update(rules={"dice": [["L"] * 6] * 2}), "dice"),
    (lambda r: r.update(rules={"dice": [[["L"]] * 6] * 3}), "die 0"),
    (lambda r: r.update(start_points=[0]), "start_points"),
    (lambda r: r.update(start_points=[0, -1]), "start_points"),
    (lambda r: r.update(start_points=[0, "3"]), "start_points"),
    (lambda r: r.update(start_points=[0, 2.5]), "start_points"),
    (lambda r: r.update(start_points="0 0"), "start_points"),
])
def test_record_level_faults(rec, mutate, words):
    mutate(rec)
    r = 0 if words == "3 hands" else None
    assert_fault(rec, r, None, words)


# ------------------------------------------------------------------ faults in a round itself
@pytest.mark.parametrize("r, mutate, words", [
    (0, lambda rd: rd.clear(), "missing field"),
    (1, lambda rd: rd.pop("hands"), "'hands'"),
    (1, lambda rd: rd.pop("turns"), "'turns'"),
    (1, lambda rd: rd.pop("start_player"), "'start_player'"),
    (1, lambda rd: rd.update(winner=0), "'winner'"),
    (0, lambda rd: rd.update(start_player="0"), "start_player"),
    (1, lambda rd: rd.update(turns={}), "turns"),
    (0, lambda rd: rd.update(hands=[list("LLLL11"), list("LLL222")]), "'L'"),
    (1, lambda rd: rd.update(hands=[list("111112"), list("111345")]), "'1'"),
    (0, lambda rd: rd.update(hands=[list("L3351"), list("2246L6")]), "6 cards"),
    (0, lambda rd: rd.update(hands=[list("L33516"), list("2246L66")]), "6 cards"),
    (0, lambda rd: rd.update(hands=[list("L33517"), list("2246L6")]), "'7'"),
    (0, lambda rd: rd.update(hands=[["L", "3", "3", "5", 1, "6"], list("2246L6")]), "unknown card"),
    (1, lambda rd: rd.update(hands=[list("126LL1")]), "2 hands"),
    (1, lambda rd: rd.update(hands="126LL1112266"), "hands"),
    (0, lambda rd: rd.update(start_player=2), "start_player"),
    (0, lambda rd: rd.update(start_player=-1), "start_player"),
    (1, lambda rd: rd.update(start_player=0), "rotation"),
])
def test_round_faults(rec, r, mutate, words):
    mutate(rec["rounds"][r])
    assert_fault(rec, r, None, words)


def test_later_rounds_follow_the_rotation_from_any_first_start():
    g = LamaGame(3, seed=2, start_player=2)
    for r in range(3):
        while g.rounds_finished == r and not g.game_over:  # the step that ends a round deals the next one
            g.step(A.QUIT)
        if g.game_over:
            break
    rec = g.to_record()
    assert [rd["start_player"] for rd in rec["rounds"]][:3] == [2, 0, 1][:len(rec["rounds"])]
    assert replay(rec) == g.result()
    rec["rounds"][1]["start_player"] = 1
    assert_fault(rec, 1, None, "must be 0")


def test_a_record_that_ends_at_a_rounds_end_has_no_unfinished_round(rec):
    rec["rounds"].pop()  # round 0 only: it ended (all quit), the game goes on
    res = replay(rec)
    assert res == {**EXPECTED, "rounds": EXPECTED["rounds"][:1], "totals": [20, 23], "game_over": False,
                   "winners": []}
    game = replay_game(rec)  # rounds flow: the game waits at the next deal's chance node
    assert game.is_chance_node() and game.round_index == 1 and game.start_player == 1


def test_iter_replay_shows_each_rounds_end_as_the_table_stood(rec):
    from lama_env.record import iter_replay
    from lama_env.roundend import RoundEnd, ended
    from lama_env.rules import score_display

    ends = [(r, t, g) for g, r, t in iter_replay(rec) if isinstance(g, RoundEnd)]
    assert [(r, t) for r, t, _ in ends] == [(0, 4)]  # round 1's bust ends the game: the game is the table
    end = ends[0][2]
    last = ended(end)
    assert last["ended_by"] == "all_quit" and end.quit == (True, True) and end.totals == (20, 23)
    assert last["points"] == [20, 23] == [score_display(d) for d in end.displays]  # the displays as they ended
    assert (end.round_index, end.start_player, end.current_player, end.legal_actions()) == (0, 0, 0, ())


def test_round_in_a_non_list_rounds_entry(rec):
    rec["rounds"][1] = "round two"
    assert_fault(rec, 1, None, "round must be an object")


def test_unfinished_round_followed_by_another(rec):
    rec["rounds"][0]["turns"].pop()  # player 0 never quits: round 0 is unfinished
    assert_fault(rec, 0, None, "unfinished")
    rec["rounds"][1]["turns"].pop()
    assert_fault(rec, 0, None, "unfinished")


def test_round_after_the_end_of_the_game(rec):
    rec["rounds"].append({"start_player": 0, "hands": [list("123456"), list("123456")], "turns": []})
    assert_fault(rec, 2, None, "end of the game")


def test_first_fault_in_play_order_is_reported(rec):
    turn(rec, 1, 2)["player"] = 0  # round 1 turn 2: wrong player
    rec["rounds"][1]["turns"].append("junk")  # later junk does not mask it
    assert_fault(rec, 1, 2, "player 1's turn")
    turn(rec, 0, 3).pop("action")  # an earlier structural fault wins
    assert_fault(rec, 0, 3, "'action'")


# ------------------------------------------------------------------ faults in a turn
@pytest.mark.parametrize("r, t, mutate, words", [
    # who and what
    (0, 0, lambda tn: tn.update(player=1), "player 0's turn"),
    (1, 2, lambda tn: tn.update(player=0), "player 1's turn"),
    (0, 0, lambda tn: tn.update(player=2), "0..1"),
    (0, 0, lambda tn: tn.update(player=-1), "0..1"),
    (0, 0, lambda tn: tn.update(player="0"), "player"),
    (0, 0, lambda tn: tn.pop("player"), "'player'"),
    (0, 0, lambda tn: tn.update(action="pass"), "'pass'"),
    (0, 3, lambda tn: tn.update(action="Quit"), "'Quit'"),
    (0, 0, lambda tn: tn.pop("action"), "'action'"),
    (0, 0, lambda tn: tn.update(note="x"), "'note'"),
    # dice
    (0, 0, lambda tn: tn.pop("dice"), "dice"),
    (0, 0, lambda tn: tn.update(dice=["3", "4"]), "3 faces"),
    (0, 0, lambda tn: tn.update(dice=["3", "4", "5", "6"]), "3 faces"),
    (0, 0, lambda tn: tn.update(dice="345"), "3 faces"),
    (0, 0, lambda tn: tn.update(dice=["6", "4", "5"]), "die 0 has no face '6'"),
    (0, 0, lambda tn: tn.update(dice=["3", "2", "5"]), "die 1 has no face '2'"),
    (0, 0, lambda tn: tn.update(dice=["3", "4", "3"]), "die 2 has no face '3'"),
    (0, 0, lambda tn: tn.update(dice=["3", "4", "7"]), "die 2"),
    (0, 0, lambda tn: tn.update(dice=[3, 4, 5]), "die 0"),
    (0, 2, lambda tn: tn.update(dice=[0, 0, 0]), "die 0"),
    # discard
    (0, 1, lambda tn: tn.update(discard=["1"]) or tn.pop("take"), "'discard'"),  # the roll forced a take
    (0, 0, lambda tn: tn.pop("discard"), "'discard' is missing"),
    (0, 0, lambda tn: tn.update(discard=["3", "3"]), "dice show 1"),
    (0, 0, lambda tn: tn.update(discard=["3", "4"]), "display holds 0"),
    (0, 0, lambda tn: tn.update(discard=["L"]), "'L'"),
    (0, 0, lambda tn: tn.update(discard=["3", "3", "5", "5"]), "discard"),
    (0, 0, lambda tn: tn.update(discard=[]), "at least one"),
    (0, 0, lambda tn: tn.update(discard=["9"]), "unknown face"),
    (0, 0, lambda tn: tn.update(discard="35"), "list"),
    # take
    (0, 1, lambda tn: tn.pop("take"), "'take' is missing"),
    (0, 0, lambda tn: tn.update(take="4"), "'take'"),  # the roll matched: a discard, not a take
    (0, 1, lambda tn: tn.update(take="2"), "cannot take '2'"),
    (0, 1, lambda tn: tn.update(take="L"), "cannot take 'L'"),
    (0, 1, lambda tn: tn.update(take="7"), "cannot take"),
    (0, 1, lambda tn: tn.update(take=["1"]), "cannot take"),
    (1, 2, lambda tn: tn.update(take="4"), "cannot take '4'"),  # the row's 4 is gone
    # a triple llama or a bust carries neither
    (0, 2, lambda tn: tn.update(discard=["L"]), "triple llama"),
    (0, 2, lambda tn: tn.update(discard=[]), "triple llama"),
    (0, 2, lambda tn: tn.update(take="L"), "triple llama"),
    (1, 3, lambda tn: tn.update(take="3"), "bust"),
    (1, 3, lambda tn: tn.update(discard=[]), "bust"),
    # a quit carries nothing
    (0, 3, lambda tn: tn.update(dice=["3", "4", "5"]), "quit"),
    (0, 4, lambda tn: tn.update(discard=["3"]), "quit"),
    (0, 4, lambda tn: tn.update(take="3"), "quit"),
])
def test_turn_faults(rec, r, t, mutate, words):
    mutate(turn(rec, r, t))
    assert_fault(rec, r, t, words)


def test_turn_that_is_not_an_object(rec):
    rec["rounds"][1]["turns"][1] = ["p0", "roll"]
    assert_fault(rec, 1, 1, "turn must be an object")


def test_empty_discard_is_legal_without_must_discard(rec):
    rec["rules"]["must_discard"] = False
    turn(rec, 0, 0)["discard"] = []
    res = replay(rec)
    assert res["valid"] and res["rounds"][0]["points"] == [25, 23]


@pytest.mark.parametrize("r, extra", [
    (0, {"player": 1, "action": "quit"}),
    (0, {"player": 0, "action": "quit"}),
    (1, {"player": 1, "action": "roll", "dice": ["3", "4", "5"], "discard": ["3"]}),
])
def test_turn_after_the_end_of_the_round(rec, r, extra):
    rec["rounds"][r]["turns"].append(extra)
    assert_fault(rec, r, len(rec["rounds"][r]["turns"]) - 1, "after the end of the round")


def test_a_record_is_not_modified_by_replay(rec):
    before = copy.deepcopy(rec)
    replay(rec)
    turn(rec, 0, 0)["discard"] = ["4"]
    snapshot = copy.deepcopy(rec)
    replay(rec)
    assert rec == snapshot and rec != before
