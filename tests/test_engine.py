"""Hand-built scenarios: every rule of RULES.md, with injected deals and dice."""

import numpy as np
import pytest
from conftest import counts, deal, discard, discard_set, discarded, play_random, roll, scenario, take

from lama_env import actions as A
from lama_env.engine import GameSetupError, IllegalActionError, LamaGame, Phase, check_hands
from lama_env.errors import LamaDiceError
from lama_env.roundend import ended, turns
from lama_env.rules import DECK_COUNTS, RulesConfig, score_display

TURN = (A.ROLL, A.QUIT)
ALSO = RulesConfig(triple_llama="also_match")


def one_round(*hands: str, rules=None, start_points=None) -> LamaGame:
    """A :func:`scenario` that ends with its first round (``max_rounds=1``): the round's end stays on the board."""
    return LamaGame(len(hands), rules, seed=0, hands=[list(h) for h in hands], start_points=start_points,
                    chance="explicit", max_rounds=1)


def round_ended(g: LamaGame) -> dict:
    """The round the last step ended (a flowing :func:`scenario`): the game waits at the next deal's chance node."""
    assert g.is_chance_node() and not g.game_over and g.legal_actions() == ()
    assert ended(g) is None  # (a round's end shows only once the game is over)
    return g.last_round


def snapshot(g: LamaGame) -> tuple:
    """Everything observable about a game (to check that a refused action changed nothing)."""
    return (g.phase, g.current_player, g.round_index, g.start_player, g.totals, g.displays, g.row, g.quit,
            g.quit.count(False), g.dice, discarded(g), turns(g), g.legal_actions(), g.last_round,
            g.result()["winners"], repr(g), g.to_record(), g.result())


# ------------------------------------------------------------ dealing
@pytest.mark.parametrize("chance", ["explicit", "sampled"])
def test_row_is_complete_at_the_start_of_every_round(chance):
    g = scenario("112266", "126LL1", chance=chance)
    assert g.row == (1,) * 7
    roll(g, "345")
    take(g, "4")
    assert g.row == counts("L12356")
    g.step(A.QUIT)
    g.step(A.QUIT)  # the round ends and the next one is dealt (explicit: at the deal's chance node)
    assert g.rounds_finished == 1 and g.last_round["ended_by"] == "all_quit"
    if chance == "explicit":
        assert g.is_chance_node()
        deal(g, "112266", "126LL1")
    assert not g.is_chance_node() and g.round_index == 1 and g.phase == Phase.TURN
    assert g.row == (1,) * 7
    assert discarded(g) == (0,) * 7 and g.quit == (False, False) and g.quit.count(False) == 2


@pytest.mark.parametrize("n", [1, 2, 3, 4, 5, 6])
def test_random_deals_come_from_the_36_card_deck(n):
    for seed in range(30):
        g = LamaGame(n, seed=seed)
        assert all(sum(d) == 6 for d in g.displays)
        dealt = np.sum(g.displays, axis=0)
        assert all(dealt <= DECK_COUNTS)
        if n == 6:  # the whole deck is dealt
            assert tuple(dealt) == DECK_COUNTS


def test_deals_vary_and_cover_every_face():
    seen = set()
    for seed in range(20):
        seen.add(LamaGame(2, seed=seed).displays)
    assert len(seen) == 20
    assert all(np.sum([LamaGame(6, seed=s).displays for s in range(3)], axis=(0, 1)) == np.array(DECK_COUNTS) * 3)


@pytest.mark.parametrize("hands, words", [
    (["LLLL11", "LLL222"], "'L'"),  # seven llamas, the deck has six
    (["111111", "234566"], "'1'"),  # six 1s
    (["L1234", "L12345"], "6 cards"),
    (["L12345", "L123456"], "6 cards"),
    (["L12347", "L12345"], "unknown card"),
    (["L12345"], "2 hands"),
])
def test_undealable_hands_are_refused(hands, words):
    with pytest.raises(IllegalActionError, match=words):
        LamaGame(2, hands=[list(h) for h in hands])


@pytest.mark.parametrize("dealt, bad", [("LLLLLL", "L"), ("11111", "1"), ("", "7"), ("L1", "X")])
def test_a_deal_refuses_a_card_the_deck_does_not_hold(dealt, bad):
    """The next round's deal, card by card at its chance node: a card the deck has no more of is refused."""
    g = scenario("112266", "126LL1")
    g.step(A.QUIT)
    g.step(A.QUIT)
    deal(g, dealt)
    before = snapshot(g)
    with pytest.raises(IllegalActionError, match=f"the next card of the deal cannot be '{bad}'"):
        g.apply_chance(bad)
    assert snapshot(g) == before and g.is_chance_node()


def test_hands_accept_face_indices_and_names():
    assert check_hands([list("L12345"), [0, 1, 2, 3, 4, 5]], 2) == [[0, 1, 2, 3, 4, 5]] * 2


# ------------------------------------------------------------ roll / quit
def test_a_turn_starts_with_roll_or_quit_and_quit_keeps_the_display():
    g = scenario("L33516", "2246L6", "112345")
    assert g.phase == Phase.TURN and g.legal_actions() == TURN
    g.step(A.QUIT)
    assert g.quit == (True, False, False) and g.quit.count(False) == 2
    assert g.displays[0] == counts("L33516")
    assert g.current_player == 1 and g.legal_actions() == TURN
    assert score_display(g.displays[0]) == 10 + 3 + 5 + 1 + 6


def test_action_mask_matches_legal_actions():
    g = scenario("L33516", "2246L6")
    roll(g, "345")
    mask = A.legal_mask(g.legal_actions())
    assert mask.shape == (A.NUM_ACTIONS,) and mask.dtype == np.int8
    assert set(np.flatnonzero(mask)) == set(g.legal_actions())


# ------------------------------------------------------------ discards
def test_match_offers_every_partial_discard():
    g = scenario("L33516", "2246L6")
    roll(g, "345")
    assert g.phase == Phase.DISCARD and g.dice == (3, 4, 5)
    # one die shows 3 (two 3s held), one shows 5: no 4 held
    assert set(g.legal_actions()) == discard_set("3", "5", "35")
    discard(g, "3")  # fewer than the maximum
    assert g.displays[0] == counts("L3516")
    assert discarded(g) == counts("3")
    assert g.current_player == 1 and g.phase == Phase.TURN


def test_duplicates_need_one_die_per_card():
    g = scenario("55123L", "2246L6")
    roll(g, "355")  # two dice show 5, one shows 3
    assert set(g.legal_actions()) == discard_set("3", "5", "55", "35", "355")
    discard(g, "355")
    assert g.displays[0] == counts("12L")
    g2 = scenario("55123L", "2246L6")
    roll(g2, "451")  # one die shows 5: only one 5 may go (and no 4 is held)
    assert set(g2.legal_actions()) == discard_set("5", "1", "51")
    with pytest.raises(IllegalActionError):
        discard(g2, "55")


def test_two_llamas_on_the_dice_against_three_in_the_display():
    g = scenario("LLL123", "2246L6")
    roll(g, "LL5")
    assert set(g.legal_actions()) == discard_set("L", "LL")


@pytest.mark.parametrize("must", [True, False])
def test_must_discard(must):
    g = scenario("L33516", "2246L6", rules=RulesConfig(must_discard=must))
    roll(g, "345")
    empty = A.DISCARD_BASE
    assert (empty in g.legal_actions()) is (not must)
    assert set(g.legal_actions()) - {empty} == discard_set("3", "5", "35")
    if must:
        with pytest.raises(IllegalActionError):
            discard(g, "")
    else:
        discard(g, "")
        assert g.displays[0] == counts("L33516") and discarded(g) == (0,) * 7
        assert g.current_player == 1 and g.phase == Phase.TURN


# ------------------------------------------------------------ takes
def test_take_is_a_choice_among_row_faces_the_dice_show():
    g = scenario("112266", "126LL1")
    roll(g, "345")  # nothing held matches
    assert g.phase == Phase.TAKE
    assert g.legal_actions() == tuple(A.take_action(f) for f in (3, 4, 5))
    take(g, "3")
    assert g.displays[0] == counts("1122663") and g.row == counts("L12456")
    assert g.current_player == 1
    roll(g, "455")
    assert g.legal_actions() == (A.take_action(4), A.take_action(5))
    take(g, "5")
    roll(g, "455")  # the row's 5 is gone: only the 4
    assert g.legal_actions() == (A.take_action(4),)
    take(g, "4")
    assert g.row == counts("L126")


def test_take_the_row_llama():
    g = scenario("112266", "126LL1")
    roll(g, "L35")
    assert g.legal_actions() == tuple(A.take_action(f) for f in (0, 3, 5))
    take(g, "L")
    assert g.displays[0] == counts("112266L") and g.row == counts("123456")


def test_no_take_when_something_matches():
    g = scenario("112266", "126LL1")
    roll(g, "352")  # the 2 matches: discard, although 3 and 5 are in the row
    assert g.phase == Phase.DISCARD
    assert not any(A.is_take(a) for a in g.legal_actions())


# ------------------------------------------------------------ bust
def test_bust_takes_the_whole_row_and_ends_the_round():
    g = scenario("112266", "126LL1")
    roll(g, "345")
    take(g, "3")
    roll(g, "455")
    take(g, "4")
    roll(g, "455")
    take(g, "5")  # player 0 holds no 4 / 5
    assert g.row == counts("L126")
    roll(g, "355")  # player 1 holds no 3 / 5 and the row has neither
    last = round_ended(g)  # rounds flow: the next deal waits
    assert last["ended_by"] == "bust" and last["busted"] == 1 and last["went_out"] is None
    assert last["points"] == [1 + 2 + 3 + 5 + 6, 10 + 1 + 2 + 4 + 6] == last["totals"] == list(g.totals)
    assert g.result()["rounds"] == [{"finished": True, "ended_by": "bust", "went_out": None,
                                     "points": [17, 23], "totals": [17, 23]}]
    with pytest.raises(IllegalActionError, match="waits for chance"):
        g.step(A.ROLL)


def test_bust_board_at_the_end_of_the_round():
    """The same round as above cut there (max_rounds=1): the bust's board is the terminal state."""
    g = one_round("112266", "126LL1")
    for dice, face in [("345", "3"), ("455", "4"), ("455", "5")]:
        roll(g, dice)
        take(g, face)
    roll(g, "355")
    assert g.phase == Phase.GAME_OVER and g.legal_actions() == ()
    end = g.last_round
    assert end["ended_by"] == "bust" and end["went_out"] is None and end["busted"] == 1
    assert g.row == (0,) * 7
    assert g.displays[1] == counts("126LL14L126")
    assert tuple(end["points"]) == (1 + 2 + 3 + 5 + 6, 10 + 1 + 2 + 4 + 6)
    assert g.totals == tuple(end["points"])
    assert g.result()["rounds"] == [{"finished": True, "ended_by": "bust", "went_out": None,
                                     "points": [17, 23], "totals": [17, 23]}]
    with pytest.raises(IllegalActionError, match="game is over"):
        g.step(A.ROLL)


# ------------------------------------------------------------ triple llama
@pytest.mark.parametrize("start, after", [([15, 3], [5, 3]), ([7, 0], [6, 0]), ([0, 0], [0, 0])])
def test_triple_llama_chip_only_returns_a_chip_and_passes(start, after):
    g = scenario("LL3516", "2246L6", start_points=start)
    roll(g, "LLL")  # player 0 holds llamas: still no discard
    assert list(g.totals) == after
    assert g.displays[0] == counts("LL3516") and g.row == (1,) * 7
    assert g.phase == Phase.TURN and g.current_player == 1
    assert g.to_record()["rounds"][0]["turns"] == [{"player": 0, "action": "roll", "dice": ["L", "L", "L"]}]
    r = g.result()
    assert r["rounds"][-1] == {"finished": False, "ended_by": None, "went_out": None, "points": None,
                               "totals": after}


def test_triple_llama_chip_only_for_the_last_player_is_no_bust():
    g = scenario("123456", "2246L6", start_points=[0, 12])
    g.step(A.QUIT)
    roll(g, "LLL")
    assert g.totals == (0, 2) and g.phase == Phase.TURN and g.current_player == 1
    assert g.row == (1,) * 7


def test_triple_llama_also_match_discards_llamas():
    g = scenario("LL3516", "2246L6", rules=ALSO, start_points=[12, 0])
    roll(g, "LLL")
    assert g.totals == (2, 0)
    assert g.phase == Phase.DISCARD
    assert set(g.legal_actions()) == discard_set("L", "LL")
    discard(g, "LL")
    assert g.displays[0] == counts("3516")
    assert g.to_record()["rounds"][0]["turns"][0] == {"player": 0, "action": "roll", "dice": ["L", "L", "L"],
                                                      "discard": ["L", "L"]}


def test_triple_llama_also_match_takes_the_row_llama_then_busts():
    g = one_round("123456", "112233", rules=ALSO, start_points=[5, 25])
    roll(g, "LLL")
    assert g.totals == (4, 25)
    assert g.legal_actions() == (A.take_action(0),)
    take(g, "L")
    assert g.row == counts("123456")
    roll(g, "LLL")  # player 1: no llama held, none in the row
    assert g.last_round["ended_by"] == "bust"
    assert g.displays[1] == counts("112233123456")
    assert tuple(g.last_round["points"]) == (10 + 21, 21)
    assert g.totals == (4 + 31, 15 + 21)


def test_triple_llama_also_match_last_player_busts():
    g = scenario("123456", rules=ALSO, start_points=[3])
    roll(g, "LLL")
    assert round_ended(g)["ended_by"] == "bust" and g.totals == (2 + 31,)


# ------------------------------------------------------------ last player
def test_last_player_busts_on_a_non_matching_roll():
    g = one_round("112266", "126LL1")
    g.step(A.QUIT)
    assert g.quit.count(False) == 1 and g.current_player == 1
    roll(g, "345")  # all in the row, none held: a bust for the last player
    assert g.last_round["ended_by"] == "bust"
    assert g.displays[1] == counts("126LL1L123456")
    assert tuple(g.last_round["points"]) == (1 + 2 + 6, 10 + 21)


def test_last_player_keeps_rolling_and_may_discard_then_quit():
    g = scenario("112266", "126LL1")
    g.step(A.QUIT)
    roll(g, "261")
    discard(g, "126")
    assert g.current_player == 1 and g.phase == Phase.TURN
    roll(g, "LL1")
    discard(g, "LL")
    g.step(A.QUIT)
    last = round_ended(g)
    assert last["ended_by"] == "all_quit" and last["points"] == [9, 1]


def test_three_players_one_quit_still_take():
    g = scenario("112266", "126LL1", "334455")
    g.step(A.QUIT)
    assert g.quit.count(False) != 1
    roll(g, "345")
    assert g.phase == Phase.TAKE


def test_solo_every_non_matching_roll_busts():
    g = scenario("112266")
    assert g.quit.count(False) == 1
    roll(g, "345")
    assert round_ended(g)["ended_by"] == "bust"
    assert g.game_over is False and g.totals == (31,)
    g = one_round("112266")  # the same round cut there: its board
    roll(g, "345")
    assert g.last_round["ended_by"] == "bust" and g.displays[0] == counts("112266L123456")


def test_solo_discard_and_go_out():
    g = scenario("123456", start_points=[10])
    roll(g, "135")
    discard(g, "135")
    roll(g, "246")
    discard(g, "246")
    last = round_ended(g)
    assert last["ended_by"] == "went_out" and last["went_out"] == 0 and g.totals == (0,)


# ------------------------------------------------------------ round endings
def test_row_emptied_by_takes():
    g = one_round("111112", "333334")
    for dice, face in [("345", "5"), ("L66", "6"), ("336", "3"), ("151", "1"),
                       ("466", "4"), ("255", "2"), ("L66", "L")]:
        roll(g, dice)
        assert g.phase == Phase.TAKE, dice
        take(g, face)
    assert g.last_round["ended_by"] == "row_empty" and g.row == (0,) * 7
    assert g.displays[0] == counts("11111253 4L".replace(" ", ""))
    assert tuple(g.last_round["points"]) == (10 + 1 + 2 + 3 + 4 + 5, 1 + 2 + 3 + 4 + 6)


@pytest.mark.parametrize("start, after", [(0, 0), (1, 0), (7, 6), (9, 8), (10, 0), (15, 5), (38, 28)])
def test_going_out_returns_a_chip(start, after):
    g = scenario("123456", "LL2266", start_points=[start, 4])
    roll(g, "135")
    discard(g, "135")
    g.step(A.QUIT)
    roll(g, "246")
    discard(g, "246")
    last = round_ended(g)
    assert last["ended_by"] == "went_out" and last["went_out"] == 0
    assert last["points"] == [0, 10 + 2 + 6]
    assert g.totals == (after, 4 + 18)
    assert g.result()["rounds"][0] == {"finished": True, "ended_by": "went_out", "went_out": 0,
                                       "points": [0, 18], "totals": [after, 22]}


def test_all_quit_scores_every_display():
    g = scenario("L33516", "2246L6", "LL5555")
    for _ in range(3):
        g.step(A.QUIT)
    last = round_ended(g)
    assert last["ended_by"] == "all_quit" and last["points"] == [25, 22, 15]
    assert g.totals == (25, 22, 15) and g.phase == Phase.TURN


# ------------------------------------------------------------ turn order and rounds
@pytest.mark.parametrize("cut", [False, True])
def test_turns_in_round_counts_whole_turns(cut):
    g = (one_round if cut else scenario)("L33516", "2246L6")
    assert turns(g) == 0
    roll(g, "345")
    assert turns(g) == 1
    discard(g, "3")
    assert turns(g) == 1
    roll(g, "LLL")
    g.step(A.QUIT)
    assert turns(g) == 3
    g.step(A.QUIT)
    if cut:  # the round's end is the game's: its four turns
        assert g.game_over and turns(g) == 4
    else:  # the next round starts afresh
        round_ended(g)
        deal(g, "L33516", "2246L6")
        assert g.round_index == 1 and turns(g) == 0


def test_turn_order_skips_players_who_quit():
    g = scenario("112266", "126LL1", "334455", "L23456")
    order = []
    for act in [A.QUIT, A.QUIT, None, None, None, None, A.QUIT, None, None]:
        order.append(g.current_player)
        if act is None:
            roll(g, "LLL")  # chip_only: nothing happens, the turn passes
        else:
            g.step(act)
    assert order == [0, 1, 2, 3, 2, 3, 2, 3, 3]


def test_start_player_rotates():
    g = LamaGame(3, {"end_threshold": 1000}, seed=1, start_player=2)
    starts = []
    for _ in range(5):
        starts.append(g.start_player)
        assert g.current_player == g.start_player and g.round_index == len(starts) - 1
        while g.round_index == len(starts) - 1:  # rounds flow on: the last quit deals the next round
            g.step(A.QUIT)
    assert starts == [2, 0, 1, 2, 0]


# ------------------------------------------------------------ game end
def test_game_ends_at_the_threshold_with_shared_wins():
    g = scenario("112233", "123123", "L44444", rules=RulesConfig(end_threshold=6))
    for _ in range(3):
        g.step(A.QUIT)
    assert g.phase == Phase.GAME_OVER and g.game_over
    assert g.totals == (6, 6, 14) and g.result()["winners"] == [0, 1]
    r = g.result()
    assert r["game_over"] is True and r["winners"] == [0, 1] and r["totals"] == [6, 6, 14]
    with pytest.raises(IllegalActionError, match="game is over"):
        g.step(A.QUIT)


@pytest.mark.parametrize("start, over", [([34, 0], True), ([33, 0], False)])
def test_game_end_threshold_is_inclusive(start, over):
    g2 = scenario("112233", "444455", start_points=start)  # scores 6 and 9
    g2.step(A.QUIT)
    g2.step(A.QUIT)
    assert g2.totals == (start[0] + 6, 9)
    assert g2.game_over is over
    assert g2.result()["winners"] == ([1] if over else [])
    assert g2.phase == (Phase.GAME_OVER if over else Phase.TURN)
    assert g2.is_chance_node() is not over  # else the next round's deal waits


def test_random_game_ends_with_a_winner():
    g = play_random(3, seed=4)
    assert g.game_over and max(g.totals) >= 40
    assert g.result()["winners"] == [p for p in range(3) if g.totals[p] == min(g.totals)]
    assert len(g.result()["rounds"]) == g.round_index + 1


# ------------------------------------------------------------ setup errors
@pytest.mark.parametrize("kwargs, words", [
    ({"num_players": 0}, "num_players"),
    ({"num_players": 7}, "num_players"),
    ({"num_players": "2"}, "num_players"),
    ({"num_players": True}, "num_players"),
    ({"num_players": 2, "start_points": [0]}, "start_points"),
    ({"num_players": 2, "start_points": [0, -1]}, "start_points"),
    ({"num_players": 2, "start_points": [0, "a"]}, "start_points"),
    ({"num_players": 2, "start_player": 2}, "start_player"),
    ({"num_players": 2, "start_player": -1}, "start_player"),
    ({"num_players": 2, "start_player": "0"}, "start_player"),
])
def test_bad_setup_gives_a_clear_error(kwargs, words):
    with pytest.raises(GameSetupError, match=words) as e:
        LamaGame(**kwargs)
    assert isinstance(e.value, LamaDiceError) and isinstance(e.value, ValueError)


def test_rules_given_as_a_mapping():
    g = LamaGame(2, {"triple_llama": "also_match", "end_threshold": 10}, seed=0)
    assert g.rules == RulesConfig(triple_llama="also_match", end_threshold=10)


# ------------------------------------------------------------ illegal actions
def _check_refused(g: LamaGame, *bad_calls) -> None:
    before = snapshot(g)
    for bad in bad_calls:
        with pytest.raises(IllegalActionError) as e:
            bad()
        assert "\n" not in str(e.value)
        assert snapshot(g) == before


def test_illegal_actions_leave_the_state_unchanged():
    g = scenario("L33516", "2246L6", start_points=[3, 4])
    _check_refused(  # a turn: roll or quit
        g,
        lambda: take(g, "3"),
        lambda: discard(g, "3"),
        lambda: g.step(A.NUM_ACTIONS),
        lambda: g.step(-1),
        lambda: g.step("roll"),
        lambda: g.step(None),
        lambda: g.step(A.QUIT, dice=list("345")),
        lambda: roll(g, "645"),  # die 0 has no 6
        lambda: roll(g, "L2L"),  # die 1 has no 2
        lambda: roll(g, "34"),
        lambda: roll(g, "3456"),
        lambda: g.step(A.ROLL, dice=["3", "4", "X"]),
        lambda: g.step(A.ROLL, dice="345"),
    )
    roll(g, "345")
    _check_refused(  # a discard
        g,
        lambda: g.step(A.ROLL),
        lambda: g.step(A.QUIT),
        lambda: discard(g, "4"),  # not held
        lambda: discard(g, "33"),  # one die shows 3
        lambda: discard(g, ""),  # must discard
        lambda: take(g, "4"),
    )
    discard(g, "35")
    roll(g, "135")  # player 1 holds none of them
    assert g.phase == Phase.TAKE
    _check_refused(  # a take
        g,
        lambda: take(g, "2"),
        lambda: take(g, "6"),
        lambda: g.step(A.QUIT),
        lambda: g.step(A.ROLL),
        lambda: discard(g, "1"),
    )
    take(g, "3")
    g.step(A.QUIT)
    g.step(A.QUIT)
    assert g.is_chance_node() and g.rounds_finished == 1  # the next round's deal
    _check_refused(g, lambda: g.step(A.ROLL), lambda: g.step(A.QUIT), lambda: roll(g, "345"),
                   lambda: g.apply_chance("7"), lambda: g.apply_chance(list("345")))


def test_illegal_action_message_names_the_legal_ones():
    g = scenario("L33516", "2246L6")
    roll(g, "345")
    with pytest.raises(IllegalActionError, match=r"player 0; legal: discard 3, discard 5, discard 3 5"):
        g.step(A.QUIT)


# ------------------------------------------------------------ copy, seeds, records
def test_clone_is_independent():
    g = play_random(2, seed=3, max_rounds=1)  # stops at the start of round 1
    g.step(A.ROLL)
    while g.phase == Phase.TURN:  # (a roll that ends a round deals the next: roll again)
        g.step(A.ROLL)
    c = g.clone()
    before = snapshot(g)
    play_random(2, seed=11, game=c)
    assert c.game_over
    assert snapshot(g) == before
    # the copy's random stream continues exactly like the original's
    c1, c2 = g.clone(), g.clone()
    play_random(2, seed=5, game=c1)
    play_random(2, seed=5, game=c2)
    assert c1.to_record() == c2.to_record()
    play_random(2, seed=5, game=g)
    assert g.to_record() == c1.to_record() and g.result() == c1.result()


@pytest.mark.parametrize("n", [1, 2, 4])
def test_same_seed_same_game(n):
    a, b = play_random(n, seed=9), play_random(n, seed=9)
    assert a.to_record() == b.to_record() and a.result() == b.result()
    c = play_random(n, seed=10)
    assert c.to_record() != a.to_record()


def test_record_false_plays_the_same_game():
    a = play_random(3, seed=21)
    b = play_random(3, seed=21, record=False)
    assert a.result() == b.result()
    with pytest.raises(RuntimeError):
        b.to_record()


def test_to_record_holds_the_turns_and_the_deal():
    g = scenario("L33516", "22466L", start_points=[1, 2], start_player=1)
    roll(g, "135")
    take(g, "1")
    roll(g, "345")
    discard(g, "35")
    roll(g, "LLL")
    g.step(A.QUIT)
    rec = g.to_record()
    assert rec == {
        "format": "lama-dice-record/1", "players": 2,
        "rules": {"triple_llama": "chip_only", "must_discard": True, "end_threshold": 40},
        "start_points": [1, 2],
        "rounds": [{"start_player": 1, "hands": [list("L33516"), list("22466L")], "turns": [
            {"player": 1, "action": "roll", "dice": ["1", "3", "5"], "take": "1"},
            {"player": 0, "action": "roll", "dice": ["3", "4", "5"], "discard": ["3", "5"]},
            {"player": 1, "action": "roll", "dice": ["L", "L", "L"]},
            {"player": 0, "action": "quit"},
        ]}],
    }
    rec["rounds"][0]["turns"].clear()  # a fresh copy each call
    assert len(g.to_record()["rounds"][0]["turns"]) == 4
    assert g.totals == (1, 1)


def test_rng_must_be_streams():
    for bad in (np.random.RandomState(0), 7, "seed"):
        with pytest.raises(GameSetupError, match=r"rng must be a lama_env\.streams\.Streams, got"):
            LamaGame(2, rng=bad)
        with pytest.raises(GameSetupError, match=r"rng must be a lama_env\.streams\.Streams, got"):
            LamaGame(2, seed=0).clone(rng=bad)
