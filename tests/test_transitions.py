"""The rules' transition module (lama_env.transitions) and what LamaGame records with it.

* the chance outcomes are the dice's exact distribution and agree with lama_env.odds;
* each transition does what RULES.md says, on hand-made states;
* a reference driver written here with the transitions alone (its own turn
  order, phases and round ends, with a round-over phase of its own) reproduces
  LamaGame step by step on random games with injected dice, LamaGame's flowing
  rounds compared by the round each step ended (``rounds_finished``, ``last_round``);
* the per-round records (who busted, who quit, triple llamas) and the episode
  statistics agree with the turn log.
"""

from __future__ import annotations

import random
import subprocess
import sys
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
from conftest import round_triples

from lama_env import actions as A
from lama_env import transitions as T
from lama_env.engine import GameSetupError, LamaGame, Phase
from lama_env.odds import p_no_match, p_triple_llama
from lama_env.roundend import ended
from lama_env.rules import (
    DECK,
    DECK_COUNTS,
    FACE_INDEX,
    LLAMA,
    MAX_ROUND_POINTS,
    RulesConfig,
    RulesError,
    check_num_players,
    is_num_players,
    score_display,
)

CUSTOM_DICE = (("L", "L", "L", "1", "2", "3"), ("L", "L", "L", "4", "5", "6"), ("L", "L", "6", "6", "1", "1"))
CONFIGS = [
    RulesConfig(),
    RulesConfig(triple_llama="also_match", must_discard=False),
    RulesConfig(end_threshold=15),
    RulesConfig(triple_llama="also_match", end_threshold=60, dice=CUSTOM_DICE),
]
IDS = ["default", "also_match-free", "t15", "custom-dice"]


def counts(faces: str) -> tuple[int, ...]:
    c = [0] * 7
    for f in faces:
        c[FACE_INDEX[f]] += 1
    return tuple(c)


def masks():
    return [tuple((m >> f) & 1 for f in range(7)) for m in range(128)]


# ------------------------------------------------------------------ chance
@pytest.mark.parametrize("rules", CONFIGS, ids=IDS)
def test_chance_outcomes_are_the_exact_dice_distribution(rules):
    out = T.chance_outcomes(rules)
    assert abs(sum(p for _, p in out) - 1.0) < 1e-12
    assert len({d for d, _ in out}) == len(out)
    # an independent exact count: each die shows each of its six sides with probability 1/6
    exact: dict[tuple[int, ...], Fraction] = {}
    for a in rules.dice[0]:
        for b in rules.dice[1]:
            for c in rules.dice[2]:
                k = (FACE_INDEX[a], FACE_INDEX[b], FACE_INDEX[c])
                exact[k] = exact.get(k, Fraction(0)) + Fraction(1, 216)
    assert {d: p for d, p in out} == pytest.approx({d: float(p) for d, p in exact.items()}, abs=1e-15)
    grouped = T.grouped_chance_outcomes(rules)
    assert abs(sum(p for _, p in grouped) - 1.0) < 1e-12
    for faces, p in grouped:
        assert p == pytest.approx(sum(q for d, q in out if tuple(sorted(d)) == faces), abs=1e-15)


@pytest.mark.parametrize("rules", CONFIGS, ids=IDS)
def test_applying_every_chance_outcome_reproduces_the_odds(rules):
    """Summing the chance outcomes by what apply_roll makes of them gives lama_env.odds' numbers."""
    also = RulesConfig(triple_llama="also_match", dice=rules.dice)
    out = T.chance_outcomes(rules)
    assert sum(p for d, p in out if T.is_triple_llama(d)) == pytest.approx(p_triple_llama(rules), abs=1e-15)
    for d in [*masks(), counts("LL3356"), counts("111222")]:
        # with also_match and no takes, a roll busts exactly when it matches nothing
        p_bust = sum(p for dice, p in out if T.apply_roll(d, T.FULL_ROW, dice, True, also)[0] == T.ROLL_BUST)
        assert p_bust == pytest.approx(p_no_match(d, rules), abs=1e-12), d


def test_triple_llama_is_one_third_cubed_with_the_default_dice():
    assert T.is_triple_llama((LLAMA, LLAMA, LLAMA)) and not T.is_triple_llama((LLAMA, LLAMA, 1))
    assert p_triple_llama(RulesConfig()) == pytest.approx(1 / 27)


# ------------------------------------------------------------- transitions
def test_apply_roll_on_hand_made_states():
    chip_only, also = RulesConfig(), RulesConfig(triple_llama="also_match")
    lll = (0, 0, 0)
    d = counts("L35")
    row = T.FULL_ROW
    # chip_only triple llama: a chip, nothing else, the state unchanged
    assert T.apply_roll(d, row, lll, False, chip_only) == (T.ROLL_TRIPLE_LLAMA, (), True, d, row)
    # also_match: the chip, and the llamas then match the display's llama
    kind, legal, chip, d2, r2 = T.apply_roll(d, row, lll, False, also)
    assert (kind, chip, d2, r2) == (T.ROLL_DISCARD, True, d, row)
    assert legal == (A.discard_action(counts("L")),)  # must_discard: only the one llama
    # a match
    kind, legal, chip, _, _ = T.apply_roll(d, row, (3, 5, 6), False, chip_only)
    assert kind == T.ROLL_DISCARD and not chip
    assert set(legal) == {A.discard_action(counts(x)) for x in ("3", "5", "35")}
    # no match, others still in: take a shown row card
    assert T.apply_roll(d, row, (1, 2, 2), False, chip_only)[:2] == (T.ROLL_TAKE, (A.take_action(1), A.take_action(2)))
    # no match, shown cards gone from the row: bust; the whole row joins the display
    row2 = (1, 0, 0, 1, 0, 1, 1)
    kind, legal, chip, d2, r2 = T.apply_roll(d, row2, (1, 2, 2), False, chip_only)
    assert (kind, legal, chip, r2) == (T.ROLL_BUST, (), False, T.EMPTY_ROW)
    assert d2 == counts("L35" + "L356")
    # the last player in takes nothing: a miss busts
    assert T.apply_roll(d, row, (1, 2, 2), True, chip_only)[0] == T.ROLL_BUST
    assert T.resolve_roll(d, row, (1, 2, 2), last_player=True, rules=chip_only) == (T.ROLL_BUST, ())
    assert T.ROLL_BUST in T.ROUND_ENDINGS


def test_discard_take_quit_next_player_and_round_end():
    d = counts("L335")
    d2, ended = T.apply_discard(d, A.discard_action(counts("33")))
    assert d2 == counts("L5") and ended is None
    d3, ended = T.apply_discard(counts("35"), A.discard_action(counts("35")))
    assert d3 == (0,) * 7 and ended == T.WENT_OUT
    assert T.apply_discard(d, A.discard_action((0,) * 7)) == (d, None)  # must_discard=False's empty discard
    row = (0, 0, 1, 0, 0, 1, 0)
    assert T.apply_take(d, row, A.take_action(2)) == (counts("L2335"), (0, 0, 0, 0, 0, 1, 0), None)
    assert T.apply_take(d, (0, 0, 0, 0, 0, 1, 0), A.take_action(5)) == (counts("L3355"), T.EMPTY_ROW, T.ROW_EMPTY)
    assert T.apply_bust(counts("6"), (1, 1, 0, 0, 0, 0, 1)) == (counts("L166"), T.EMPTY_ROW)
    assert T.apply_quit(3) == (2, None) and T.apply_quit(1) == (0, T.ALL_QUIT)
    assert T.next_player(0, [False, True, False]) == 2
    assert T.next_player(2, [False, True, False]) == 0
    assert T.next_player(1, [True, False, True]) == 1  # the last one in plays on
    rules = RulesConfig(end_threshold=40)
    pts, totals, over = T.score_round([counts("L1"), counts("6"), (0,) * 7], [20, 30, 15], 2, rules)
    assert pts == [11, 6, 0] and totals == [31, 36, 5] and not over  # 15 - a chip of 10
    pts, totals, over = T.score_round([counts("L123456"), (0,) * 7], [9, 0], 1, rules)
    assert pts == [MAX_ROUND_POINTS, 0] and totals == [40, 0] and over  # a chip from 0 stays 0


# ------------------------------------------------------- reference driver
#: The reference's own phase between a round's end and the next deal (LamaGame has none: its rounds flow,
#: the step that ends a round deals the next one).
ROUND_OVER = 3
assert ROUND_OVER not in set(Phase) and Phase.TAKE < ROUND_OVER < Phase.GAME_OVER


class Reference:
    """One game driven by the transitions alone: its own turn order, phases and round ends."""

    def __init__(self, n: int, rules: RulesConfig, displays, start: int, totals) -> None:
        self.n, self.rules = n, rules
        self.totals = list(totals)
        self.start = start
        self.finished = 0  # rounds ended
        self.deal(displays, start)

    def deal(self, displays, start: int) -> None:
        self.displays = [tuple(d) for d in displays]
        self.row = T.FULL_ROW
        self.quit = [False] * self.n
        self.active = self.n
        self.current = start
        self.phase = Phase.TURN
        self.legal = (A.ROLL, A.QUIT)
        self.ended = self.went_out = self.busted = None
        self.triples = [0] * self.n
        self.points = None

    def end(self, ended, went_out=None) -> None:
        self.points, self.totals, over = T.score_round(self.displays, self.totals, went_out, self.rules)
        self.ended, self.went_out = ended, went_out
        self.finished += 1
        self.phase = Phase.GAME_OVER if over else ROUND_OVER
        self.legal = ()

    def advance(self) -> None:
        self.current = T.next_player(self.current, self.quit)
        self.phase, self.legal = Phase.TURN, (A.ROLL, A.QUIT)

    def step(self, action: int, dice=None) -> None:
        p = self.current
        if self.phase == Phase.TURN and action == A.QUIT:
            self.quit[p] = True
            self.active, ended = T.apply_quit(self.active)
            self.end(ended) if ended else self.advance()
        elif self.phase == Phase.TURN:
            kind, legal, chip, d, r = T.apply_roll(self.displays[p], self.row, dice, self.active == 1, self.rules)
            if chip:
                self.totals[p] = max(0, self.totals[p] - (10 if self.totals[p] >= 10 else 1))
                self.triples[p] += 1
            if kind in (T.ROLL_DISCARD, T.ROLL_TAKE):
                self.phase = Phase.DISCARD if kind == T.ROLL_DISCARD else Phase.TAKE
                self.legal = legal
            elif kind == T.ROLL_TRIPLE_LLAMA:
                self.advance()
            else:
                self.displays[p], self.row, self.busted = d, r, p
                self.end(kind)
        elif self.phase == Phase.DISCARD:
            self.displays[p], ended = T.apply_discard(self.displays[p], action)
            self.end(ended, p) if ended else self.advance()
        else:
            self.displays[p], self.row, ended = T.apply_take(self.displays[p], self.row, action)
            self.end(ended) if ended else self.advance()

    def check(self, g: LamaGame) -> None:
        assert g.rounds_finished == self.finished and g.totals == tuple(self.totals)
        if self.phase >= ROUND_OVER:  # the round that the last step ended, as LamaGame recorded it
            assert g.last_round == {"finished": True, "ended_by": self.ended, "went_out": self.went_out,
                                    "points": self.points, "totals": self.totals, "busted": self.busted,
                                    "quit": tuple(self.quit), "triple_llamas": tuple(self.triples)}
        if self.phase == ROUND_OVER:  # LamaGame has dealt the next round already: the driver deals it
            assert not g.game_over and ended(g) is None
            return
        assert g.displays == tuple(self.displays)
        assert g.row == self.row and g.quit == tuple(self.quit)
        assert g.phase == self.phase and g.legal_actions() == self.legal
        assert round_triples(g) == tuple(self.triples)
        if self.phase < ROUND_OVER:
            assert g.current_player == self.current
        else:
            end = ended(g)
            assert tuple(end["points"]) == tuple(self.points) and end["ended_by"] == self.ended
            assert end["went_out"] == self.went_out and end["busted"] == self.busted


@pytest.mark.parametrize("n", [1, 2, 3, 6])
@pytest.mark.parametrize("config", range(len(CONFIGS)), ids=IDS)
def test_transitions_reproduce_lama_game_step_by_step(n, config):
    rules = CONFIGS[config]
    pick = random.Random(100 * n + config)
    seen: set = set()
    for s in range(25):
        g = LamaGame(n, rules, seed=s, start_points=[pick.randrange(12) for _ in range(n)])
        ref = Reference(n, rules, g.displays, g.start_player, g.totals)
        ref.check(g)
        while not g.game_over and g.round_index < 60:
            legal = g.legal_actions()
            if g.phase == Phase.TURN:  # roll mostly, so that rounds also end by going out
                a = A.QUIT if pick.random() < 0.15 else A.ROLL
            elif g.phase == Phase.DISCARD and pick.random() < 0.8:
                a = legal[-1]  # the largest discard
            else:
                a = pick.choice(legal)
            dice = None
            if a == A.ROLL:  # our own dice, injected: a triple llama (every die has an L) one roll in ten
                dice = (LLAMA,) * 3 if pick.random() < 0.1 else tuple(
                    FACE_INDEX[pick.choice(die)] for die in rules.dice)
            g.step(a, dice)
            ref.step(a, dice)
            ref.check(g)
            if ref.phase >= ROUND_OVER:
                seen.add(ref.ended)
                seen |= {"triple"} if any(ref.triples) else set()
            if ref.phase == ROUND_OVER:  # the step that ended the round dealt the next one: the reference deals it
                assert g.round_index == ref.finished
                ref.deal(g.displays, g.start_player)
                ref.check(g)
    if n > 1:
        assert {"bust", "went_out", "all_quit", "triple"} <= seen, seen


# ---------------------------------------------------- per-round records
@pytest.mark.parametrize("n", [1, 2, 4])
@pytest.mark.parametrize("rules", CONFIGS, ids=IDS)
def test_round_records_of_busts_quits_and_triple_llamas_follow_the_turn_log(n, rules):
    pick = random.Random(n)
    busts = triples = 0
    for s in range(40):  # (25 games of the compiled streams roll no triple llama with t15 and 4 players)
        g = LamaGame(n, rules, seed=1000 + s, max_rounds=60)
        while not g.game_over:
            g.step(pick.choice(g.legal_actions()))
        rec, results = g.to_record(), g._history()
        assert len(rec["rounds"]) == len(results)
        want = {"points": [0] * n, "busts": [0] * n, "quits": [0] * n, "went_out": [0] * n,
                "triple_llamas": [0] * n}
        for rnd, res in zip(rec["rounds"], results, strict=True):
            last = rnd["turns"][-1]
            if res["ended_by"] == "bust":
                # the round's last turn is the busting roll: it carries no decision
                assert last["action"] == "roll" and "discard" not in last and "take" not in last
                assert res["busted"] == last["player"]
                want["busts"][last["player"]] += 1
                busts += 1
            else:
                assert res["busted"] is None
            quit_ = [False] * n
            tl = [0] * n
            for t in rnd["turns"]:
                if t["action"] == "quit":
                    quit_[t["player"]] = True
                elif t["dice"] == ["L", "L", "L"]:
                    tl[t["player"]] += 1
            assert res["quit"] == tuple(quit_) and res["triple_llamas"] == tuple(tl)
            triples += sum(tl)
            for p in range(n):
                want["points"][p] += res["points"][p]
                want["quits"][p] += quit_[p]
                want["triple_llamas"][p] += tl[p]
            if res["went_out"] is not None:
                want["went_out"][res["went_out"]] += 1
        assert g.statistics() == dict(want, rounds=len(results))
        # the replay result keeps its own format
        assert all(set(r) == {"finished", "ended_by", "went_out", "points", "totals"} for r in g.result()["rounds"])
    assert busts > 0 and triples > 0


def test_statistics_count_the_round_in_progress_and_copies_keep_their_own():
    g = LamaGame(3, hands=[list("L12345"), list("556666"), list("L23456")])
    g.step(A.QUIT)  # seat 0
    g.step(A.ROLL, dice=["L", "L", "L"])  # seat 1: a chip only
    st = g.statistics()
    assert st["rounds"] == 0 and st["quits"] == [1, 0, 0] and st["triple_llamas"] == [0, 1, 0]
    c = g.clone()
    c.step(A.QUIT)  # seat 2: seat 1 is the last one in
    assert g.statistics()["quits"] == [1, 0, 0] and c.statistics()["quits"] == [1, 0, 1]
    assert round_triples(g) == (0, 1, 0) and g.last_round is None
    c.step(A.ROLL, dice=["1", "3", "2"])  # no 5 or 6, and no takes for the last player: bust
    assert c.rounds_finished == 1 and not c.game_over  # the bust dealt the next round
    assert c.last_round["ended_by"] == "bust" and c.last_round["busted"] == 1
    res = c._history()[-1]
    assert res == c.last_round
    assert res["busted"] == 1 and res["quit"] == (True, False, True) and res["triple_llamas"] == (0, 1, 0)
    st = c.statistics()  # the new round has no quits or triple llamas yet
    assert st["rounds"] == 1 and st["busts"] == [0, 1, 0] and st["quits"] == [1, 0, 1]
    assert st["triple_llamas"] == [0, 1, 0] and st["points"] == c.last_round["points"]
    assert g._history() == [] and g.last_round is None and g.rounds_finished == 0  # the copy's round end is its own
    assert g.quit == (True, False, False) and g.current_player == 2


def test_a_bust_is_recorded_for_the_roller():
    hands = [list("111222"), list("333444")]
    g = LamaGame(2, hands=hands, max_rounds=1)  # the game ends with the round: its last state stays on the table
    g.step(A.QUIT)  # seat 0 quits: seat 1 is the last player in
    g.step(A.ROLL, dice=["1", "5", "1"])  # no 3 or 4: bust
    end = g.last_round
    assert g.game_over and end["ended_by"] == "bust" and end["busted"] == 1 and end["went_out"] is None
    assert g.displays[1] == tuple(c + 1 for c in counts("333444"))
    assert ended(g) == end and g.result()["rounds"][-1]["ended_by"] == "bust"
    assert g.statistics()["busts"] == [0, 1]
    f = LamaGame(2, hands=hands)  # rounds flow: the bust deals the next round
    f.step(A.QUIT)
    f.step(A.ROLL, dice=["1", "5", "1"])
    assert not f.game_over and f.last_round == g.last_round and f.statistics()["busts"] == [0, 1]
    assert ended(f) is None and round_triples(f) == (0, 0)


# ------------------------------------------------------------- constants
def test_constants_have_one_home():
    assert DECK == tuple(np.repeat(np.arange(7), DECK_COUNTS).tolist())
    assert MAX_ROUND_POINTS == score_display((1,) * 7) == 31
    from lama_env import _kernel, batched, observation

    assert observation.MAX_ROUND_POINTS is MAX_ROUND_POINTS
    assert _kernel.TABLES[2].tolist() == list(DECK)
    assert not hasattr(batched, "ENDINGS") and not hasattr(batched, "_FACE_VALUE")


def test_player_count_check():
    for ok in (1, 2, 6, np.int64(3)):
        assert is_num_players(ok) and check_num_players(ok) == int(ok)
    for bad in (0, 7, True, 2.0, "2", None):
        assert not is_num_players(bad)
        with pytest.raises(RulesError):
            check_num_players(bad)
    with pytest.raises(GameSetupError, match=r"1\.\.6"):
        LamaGame(7)
    with pytest.raises(GameSetupError):
        LamaGame(True)


def test_lama_env_imports_no_agents_or_train():
    code = ("import sys, lama_env, lama_env.transitions, lama_env.batched, lama_env.gym_env, "
            "lama_env.picture, lama_env.record; "
            "bad = sorted(m for m in sys.modules if m.split('.')[0] in ('agents', 'train')); "
            "print(bad); sys.exit(1 if bad else 0)")
    root = Path(__file__).resolve().parents[1]
    run = subprocess.run([sys.executable, "-c", code], cwd=root, capture_output=True, text=True,
                         env={"PYTHONPATH": str(root), "PATH": ""})
    assert run.returncode == 0, run.stdout + run.stderr
