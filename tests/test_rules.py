"""Rules configuration, scoring, chips, the action space and the dice odds."""

from fractions import Fraction

import numpy as np
import pytest
from conftest import counts

from lama_env import actions as A
from lama_env.errors import LamaDiceError
from lama_env.odds import chance_outcomes, p_no_match, p_triple_llama
from lama_env.rules import (
    DECK_COUNTS,
    DEFAULT_DICE,
    RULES_FIELDS,
    RULES_KEYWORDS,
    RulesConfig,
    RulesError,
    game_over,
    return_chip,
    score_display,
    win_shares,
    win_shares_of_games,
    winners,
)


# ------------------------------------------------------------- components
def test_deck_and_default_dice_match_the_components():
    assert sum(DECK_COUNTS) == 36
    assert DECK_COUNTS == (6, 5, 5, 5, 5, 5, 5)
    assert [list(d) for d in DEFAULT_DICE] == [list("1234LL"), list("3456LL"), list("1256LL")]
    # each die: two llamas and four numbers; every number on exactly two dice
    for die in DEFAULT_DICE:
        assert die.count("L") == 2 and len(set(die) - {"L"}) == 4
    for n in "123456":
        assert sum(n in die for die in DEFAULT_DICE) == 2


# ----------------------------------------------------------------- config
def test_defaults():
    r = RulesConfig()
    assert (r.triple_llama, r.must_discard, r.end_threshold) == ("chip_only", True, 40)
    assert r.dice == DEFAULT_DICE


@pytest.mark.parametrize("kwargs, words", [
    ({"triple_llama": "sometimes"}, "triple_llama"),
    ({"triple_llama": None}, "triple_llama"),
    ({"must_discard": "yes"}, "must_discard"),
    ({"must_discard": 1}, "must_discard"),
    ({"end_threshold": "40"}, "end_threshold"),
    ({"end_threshold": True}, "end_threshold"),
    ({"end_threshold": 40.0}, "end_threshold"),
    ({"end_threshold": 0}, "end_threshold"),
    ({"dice": [list("1234LL")] * 2}, "dice"),
    ({"dice": "1234LL"}, "dice"),
    ({"dice": [list("1234L"), list("3456LL"), list("1256LL")]}, "die 0"),
    ({"dice": [list("1234LL"), list("3457LL"), list("1256LL")]}, "die 1"),
    ({"dice": [list("1234LL"), list("3456LL"), [1, 2, 5, 6, "L", "L"]]}, "die 2"),
    ({"dice": [list("1234LL"), list("3456LL"), [["1"], "2", "5", "6", "L", "L"]]}, "die 2"),
])
def test_invalid_config_gives_a_clear_error(kwargs, words):
    with pytest.raises(RulesError) as e:
        RulesConfig(**kwargs)
    assert isinstance(e.value, LamaDiceError)
    msg = str(e.value)
    assert words in msg and "\n" not in msg


@pytest.mark.parametrize("data, words", [
    ({"triple_llama": "chip_only", "colour": "red"}, "colour"),
    (["chip_only"], "object"),
    ({"end_threshold": -3}, "end_threshold"),
])
def test_from_dict_refuses_bad_mappings(data, words):
    with pytest.raises(RulesError, match=words):
        RulesConfig.from_dict(data)


def test_from_dict_none_and_passthrough():
    assert RulesConfig.from_dict(None) == RulesConfig()
    r = RulesConfig(end_threshold=12)
    assert RulesConfig.from_dict(r) is r


def test_rules_keywords_are_the_config_fields_and_rules():
    import dataclasses

    assert RULES_FIELDS == tuple(f.name for f in dataclasses.fields(RulesConfig) if f.init)
    assert RULES_KEYWORDS == (*RULES_FIELDS, "rules")


def test_from_keywords_merges_fields_over_rules():
    base = RulesConfig(end_threshold=25, triple_llama="also_match")
    assert RulesConfig.from_keywords({}) == RulesConfig()
    assert RulesConfig.from_keywords({"rules": base}) is base  # parsed once: the object travels as it is
    assert RulesConfig.from_keywords({"rules": base, "end_threshold": 30}) == \
        RulesConfig(end_threshold=30, triple_llama="also_match")
    assert RulesConfig.from_keywords({"rules": {"must_discard": False}, "end_threshold": 12}) == \
        RulesConfig(must_discard=False, end_threshold=12)


@pytest.mark.parametrize("keywords, error, words", [
    ({"frameskip": 4}, TypeError, r"^Env\.__init__\(\) got an unexpected keyword argument 'frameskip' \(the rules "
                                  r"keywords are triple_llama, must_discard, end_threshold, dice, max_round_turns, "
                                  r"rules\)$"),
    ({"rules": 3}, RulesError, r"^rules must be a RulesConfig or a mapping of rules fields, got int$"),
    ({"rules": {"llamas": 3}}, RulesError, r"^unknown rules field 'llamas' \(valid: dice, end_threshold, "),
    ({"end_threshold": "x"}, RulesError, r"^end_threshold must be an integer, got 'x'$"),
    ({"rules": RulesConfig(), "triple_llama": "never"}, RulesError, r"^triple_llama must be one of chip_only, "),
])
def test_from_keywords_errors_are_one_line(keywords, error, words):
    with pytest.raises(error, match=words) as e:
        RulesConfig.from_keywords(keywords, "Env.__init__()")
    assert "\n" not in str(e.value)


@pytest.mark.parametrize("rules", [
    RulesConfig(),
    RulesConfig(triple_llama="also_match", must_discard=False, end_threshold=25),
    RulesConfig(dice=(tuple("1256LL"), tuple("1234LL"), tuple("3456LL"))),
])
def test_to_dict_from_dict_round_trip(rules):
    d = rules.to_dict()
    assert RulesConfig.from_dict(d) == rules
    assert ("dice" in d) == (rules.dice != DEFAULT_DICE)
    full = rules.to_dict(include_dice=True)
    assert full["dice"] == [list(x) for x in rules.dice]
    assert RulesConfig.from_dict(full) == rules


def test_custom_dice_are_indexed():
    r = RulesConfig(dice=[list("LLLLLL"), list("111111"), list("6L6L6L")])
    assert r.dice_index == ((0,) * 6, (1,) * 6, (6, 0, 6, 0, 6, 0))


# --------------------------------------------------------------- scoring
@pytest.mark.parametrize("display, points", [
    ("", 0),
    ("L", 10),
    ("LLL", 10),
    ("55", 5),
    ("L55", 15),
    ("L33516", 10 + 3 + 5 + 1 + 6),
    ("22466L1", 10 + 2 + 4 + 6 + 1),
    ("123456", 21),
    ("L123456", 31),
    ("111112", 3),
])
def test_score_display(display, points):
    assert score_display(counts(display)) == points


@pytest.mark.parametrize("total, after", [(0, 0), (1, 0), (9, 8), (10, 0), (11, 1), (19, 9), (40, 30), (57, 47)])
def test_return_chip(total, after):
    assert return_chip(total) == after


def test_game_over_and_winners():
    r = RulesConfig()
    assert not game_over([39, 0], r)
    assert game_over([40, 0], r)
    assert game_over([3, 41, 2], r)
    assert game_over([5], RulesConfig(end_threshold=5))
    assert winners([12, 40, 12]) == [0, 2]
    assert winners([41, 7]) == [1]


# ---------------------------------------------------------- action space
def test_action_space_layout():
    assert (A.ROLL, A.QUIT, A.TAKE_BASE, A.DISCARD_BASE) == (0, 1, 2, 9)
    assert A.NUM_ACTIONS == 129 and len(A.DISCARDS) == 120
    assert len(set(A.DISCARDS)) == 120 and all(sum(c) <= 3 for c in A.DISCARDS)
    assert A.DISCARDS[0] == (0,) * 7  # index 9 is the empty discard
    assert [sum(c) for c in A.DISCARDS] == sorted(sum(c) for c in A.DISCARDS)
    for i, c in enumerate(A.DISCARDS):
        assert A.discard_action(c) == A.DISCARD_BASE + i
        assert A.discard_counts(A.DISCARD_BASE + i) == c
    with pytest.raises(ValueError):
        A.discard_action((4, 0, 0, 0, 0, 0, 0))


def test_describe():
    assert A.describe(A.ROLL) == "roll"
    assert A.describe(A.QUIT) == "quit"
    assert A.describe(A.take_action(0)) == "take L"
    assert A.describe(A.discard_action(counts("355"))) == "discard 3 5 5"
    assert A.describe(A.DISCARD_BASE) == "discard nothing"
    with pytest.raises(ValueError):
        A.describe(A.NUM_ACTIONS)


def test_legal_discards_enumerates_every_multiset_within_limits():
    lim = counts("355")  # one 3, two 5s allowed
    want = {A.discard_action(counts(m)) for m in ["3", "5", "55", "35", "355"]}
    assert set(A.legal_discards(lim, True)) == want
    assert set(A.legal_discards(lim, False)) == want | {A.DISCARD_BASE}
    assert list(A.legal_discards(lim, True)) == sorted(want)


# ---------------------------------------------------------------- odds
def test_chance_outcomes_are_exact():
    dist = chance_outcomes(RulesConfig())
    assert abs(sum(p for _, p in dist) - 1.0) < 1e-12
    probs = dict(dist)
    assert probs[(0, 0, 0)] == pytest.approx(1 / 27)
    assert probs[(1, 3, 1)] == pytest.approx(1 / 216)
    # three equal numbers are impossible with the default dice
    assert not any(a == b == c != 0 for (a, b, c), _ in dist)


def test_p_triple_llama_and_p_no_match():
    r = RulesConfig()
    assert p_triple_llama(r) == pytest.approx(1 / 27)
    assert p_no_match(counts(""), r) == 1.0
    assert p_no_match(counts("L123456"), r) == 0.0
    # no llama on any die: (4/6)^3
    assert p_no_match(counts("L"), r) == pytest.approx(float(Fraction(2, 3) ** 3))
    # no 1: die 0 avoids 1 w.p. 5/6, die 1 always, die 2 w.p. 5/6
    assert p_no_match(counts("11"), r) == pytest.approx(25 / 36)
    # brute force over the 216 equally likely sides
    disp = counts("L356")
    hit = sum(1 for a in r.dice_index[0] for b in r.dice_index[1] for c in r.dice_index[2]
              if not (disp[a] or disp[b] or disp[c]))
    assert p_no_match(disp, r) == pytest.approx(hit / 216)
    custom = RulesConfig(dice=[list("LLLLLL"), list("LLLLLL"), list("LLL123")])
    assert p_triple_llama(custom) == pytest.approx(0.5)
    assert np.isclose(p_no_match(counts("1"), custom), 5 / 6)


@pytest.mark.parametrize("n", range(1, 7))
def test_win_shares_of_games_is_win_shares_of_each_game(n):
    """The batched shares (one win_shares call per pattern of ranks) equal win_shares game by game, ties and all."""
    rng = np.random.default_rng(n)
    totals = np.concatenate([rng.integers(0, 4, (3000, n)), rng.integers(-5, 90, (3000, n))])  # many ties, then few
    shares = win_shares_of_games(totals)
    assert shares.shape == totals.shape and shares.dtype == np.float64
    assert np.array_equal(shares, np.array([win_shares(row) for row in totals.tolist()]).reshape(totals.shape))
    assert win_shares_of_games(np.zeros((0, n), dtype=np.int64)).shape == (0, n)
