"""The compiled batched engine plays exactly the games ``LamaGame`` replays.

Every logged batched game is converted to a ``lama-dice-record/1`` record and
replayed by :func:`lama_env.record.replay` (``LamaGame``, the same compiled step
driven one game at a time, its turn flow checked against the rules' reference by
``tests/test_transitions.py``); the replay
must be legal and give the batched engine's own per-round results, and the
outcome arrays must agree with the record.  Native heuristics must take the
decisions of the Python agents of the same spec at every state they meet.
"""

from __future__ import annotations

import importlib.util
import re
from collections import Counter

import numpy as np
import pytest
from conftest import CUSTOM_DICE, RULES_CONFIG_IDS, RULES_CONFIGS, deal

from lama_dice.agents.native import is_native, native_policy, play_batch
from lama_env import actions as A
from lama_env.batched import BatchResult, NativePolicyError
from lama_env.engine import LamaGame, Phase
from lama_env.errors import LamaDiceError
from lama_env.record import replay
from lama_env.rules import DECK_COUNTS, FACES, RulesConfig

#: Native agents seated at random; threshold 1/6 is exactly a p_no_match value (36/216): the >= boundary
AGENTS = ["random", "always-roll", "threshold:0.2", "points:12", "threshold:0.45", f"threshold:{36 / 216!r}"]
CONFIGS = RULES_CONFIGS


def _mixed_seating(n: int, games: int, rng: np.random.Generator) -> np.ndarray:
    return rng.integers(0, len(AGENTS), size=(games, n))


def _check_arrays_against_record(res: BatchResult, g: int, rec: dict, result: dict) -> None:
    n = res.num_players
    assert res.totals[g].tolist() == result["totals"]
    assert res.rounds[g] == len(result["rounds"])
    assert res.round_points[g].tolist() == np.sum([r["points"] for r in result["rounds"]], axis=0).tolist()
    went_out = np.zeros(n, dtype=int)
    busts = np.zeros(n, dtype=int)
    quits = np.zeros(n, dtype=int)
    triples = np.zeros(n, dtype=int)
    for rnd, rr in zip(rec["rounds"], result["rounds"], strict=True):
        for t in rnd["turns"]:
            if t["action"] == "quit":
                quits[t["player"]] += 1
            elif t["dice"] == ["L", "L", "L"]:
                triples[t["player"]] += 1
        if rr["ended_by"] == "went_out":
            went_out[rr["went_out"]] += 1
        if rr["ended_by"] == "bust":
            busts[rnd["turns"][-1]["player"]] += 1
    assert res.went_out[g].tolist() == went_out.tolist()
    assert res.busts[g].tolist() == busts.tolist()
    assert res.quits[g].tolist() == quits.tolist()
    assert res.triple_llamas[g].tolist() == triples.tolist()
    # totals = round points - chips returned (start points are zero)
    assert (res.totals[g] <= res.round_points[g]).all()


@pytest.mark.parametrize("n", range(1, 7))
@pytest.mark.parametrize("config", range(len(CONFIGS)), ids=RULES_CONFIG_IDS)
def test_batched_games_replay_identically_in_the_scalar_engine(n, config):
    rules = CONFIGS[config]
    games = 24
    seating = _mixed_seating(n, games, np.random.default_rng(100 * n + config))
    res = play_batch(n, AGENTS, seating=seating, rules=rules, seed=7 + config, log_games=range(games))
    assert res.totals.shape == (games, n)
    for g in range(games):
        rec = res.record(g)
        assert rec["rules"] == rules.to_dict()
        result = replay(rec)
        assert result["valid"], result
        assert result == res.result(g)
        assert result["game_over"] and max(result["totals"]) >= rules.end_threshold
        _check_arrays_against_record(res, g, rec, result)


def test_every_ending_and_rule_path_is_exercised():
    """The equivalence games above are not vacuous: all round endings, triple llamas, takes occur."""
    seen_end: set[str] = set()
    seen = {"triple": 0, "take": 0, "partial_discard": 0, "empty_discard": 0, "last_player_bust": 0}
    rules = CONFIGS[1]
    for n in (1, 2, 4):
        res = play_batch(n, AGENTS, seating=_mixed_seating(n, 30, np.random.default_rng(n)), rules=rules,
                         seed=3, log_games=range(30))
        for g in range(30):
            rec, result = res.record(g), res.result(g)
            for rnd, rr in zip(rec["rounds"], result["rounds"], strict=True):
                seen_end.add(rr["ended_by"])
                for t in rnd["turns"]:
                    if t.get("dice") == ["L", "L", "L"]:
                        seen["triple"] += 1
                    if "take" in t:
                        seen["take"] += 1
                    if "discard" in t and not t["discard"]:
                        seen["empty_discard"] += 1
                    if "discard" in t and 0 < len(t["discard"]) < sum(
                            1 for f in t["dice"] if f in t["discard"]):
                        seen["partial_discard"] += 1
                if rr["ended_by"] == "bust" and n > 1 and any(t["action"] == "quit" for t in rnd["turns"]):
                    seen["last_player_bust"] += 1
    assert seen_end == {"went_out", "row_empty", "bust", "all_quit"}
    assert all(v > 0 for v in seen.values()), seen


def test_a_game_plays_the_same_alone_in_a_batch_and_logged():
    seating = _mixed_seating(3, 50, np.random.default_rng(0))
    full = play_batch(3, AGENTS, seating=seating, seed=11, log_games=[5, 17])
    again = play_batch(3, AGENTS, seating=seating, seed=11)
    for name in ("totals", "round_points", "rounds", "busts", "quits", "went_out", "triple_llamas"):
        assert np.array_equal(getattr(full, name), getattr(again, name)), name
    part = play_batch(3, AGENTS, seating=seating[[17, 5]], game_ids=np.array([17, 5]), seed=11, log_games=[0])
    assert np.array_equal(part.totals, full.totals[[17, 5]])
    assert part.record(0) == full.record(17)
    other = play_batch(3, AGENTS, seating=seating, seed=12)
    assert not np.array_equal(other.totals, full.totals)


def test_logs_grow_when_the_capacity_is_too_small():
    res = play_batch(6, ["random", "always-roll"], games=4, seed=1, log_games=range(4), log_capacity=8)
    for g in range(4):
        assert replay(res.record(g)) == res.result(g)
        assert len(res.logs[g]) > 8  # longer than the first capacity: the log was regrown


def test_dice_and_deals_follow_the_rules_distribution():
    """Die faces and dealt cards are uniform (chi-square, fixed seed)."""
    rules = RulesConfig(dice=CUSTOM_DICE)
    res = play_batch(6, ["always-roll"], games=300, seed=5, rules=rules, log_games=range(300))
    sides = np.zeros((3, 7))
    cards = np.zeros(7)
    for g in range(300):
        for rnd in res.record(g)["rounds"]:
            for hand in rnd["hands"]:
                for c in hand:
                    cards[FACES.index(c)] += 1
            for t in rnd["turns"]:
                if t["action"] == "roll":
                    for d, f in enumerate(t["dice"]):
                        sides[d, FACES.index(f)] += 1
    for d in range(3):
        expected = np.array([rules.dice[d].count(f) for f in FACES]) / 6 * sides[d].sum()
        keep = expected > 0
        assert sides[d][~keep].sum() == 0
        chi2 = (((sides[d] - expected)[keep]) ** 2 / expected[keep]).sum()
        assert chi2 < 25, (d, sides[d], expected)  # df <= 6; p ~ 3e-4
    # the 6-player deal is the whole deck, every round
    rounds = res.rounds.sum()
    assert cards.tolist() == [c * rounds for c in DECK_COUNTS]
    part = play_batch(2, ["always-roll"], games=400, seed=5, log_games=range(400))
    cards = np.zeros(7)
    for g in range(400):
        for rnd in part.record(g)["rounds"]:
            for hand in rnd["hands"]:
                for c in hand:
                    cards[FACES.index(c)] += 1
    expected = np.array(DECK_COUNTS) / 36 * cards.sum()
    assert ((cards - expected) ** 2 / expected).sum() < 25


def test_random_policy_is_uniform_at_the_turn():
    res = play_batch(1, ["random"], games=1000, seed=9, log_games=range(1000))
    turns = [t["action"] for g in range(1000) for rnd in res.record(g)["rounds"] for t in rnd["turns"]]
    quits = turns.count("quit")
    assert quits == res.quits.sum()
    assert abs(quits / len(turns) - 0.5) < 5 * (0.25 / len(turns)) ** 0.5


def test_native_specs_and_errors():
    assert is_native("threshold:0.2") and is_native("points:12") and is_native("random")
    assert is_native("always-roll")
    # specs are parsed by the agent registry: "threshold" is threshold:0.2 (its default), natively too
    assert is_native("threshold")
    assert np.array_equal(native_policy("threshold").quit_table, native_policy("threshold:0.2").quit_table)
    for bad in ("threshold:x", "threshold:1.5", "points:1.5", "random:3", "ppo:x.zip", "", 3):
        assert not is_native(bad)
    with pytest.raises(NativePolicyError) as e:
        native_policy("optimal")
    assert isinstance(e.value, LamaDiceError) and "native" in str(e.value)
    with pytest.raises(LamaDiceError, match=r"seating must have shape \(games, 2\), got \(3, 3\)"):
        play_batch(2, ["random"], seating=np.zeros((3, 3), dtype=int))
    with pytest.raises(LamaDiceError, match=r"seating holds agent indices outside 0\.\.0"):
        play_batch(2, ["random"], seating=np.ones((3, 2), dtype=int))
    with pytest.raises(LamaDiceError, match=r"num_players must be an integer 1\.\.6, got 7"):
        play_batch(7, ["random"], games=1)
    with pytest.raises(LamaDiceError, match=r"seed must be an integer 0\.\.2\*\*63 - 1, got -1"):
        play_batch(2, ["random"], games=1, seed=-1)


def test_threshold_and_points_tables_follow_their_definitions():
    from lama_env.odds import p_no_match
    from lama_env.rules import score_display

    rules = RulesConfig()
    thr = native_policy("threshold:0.2", rules).quit_table
    pts = native_policy("points:12", rules).quit_table
    for mask in range(128):
        counts = [(mask >> f) & 1 for f in range(7)]
        assert thr[mask] == (p_no_match(counts, rules) >= 0.2)
        assert pts[mask] == (score_display(counts) <= 12)
    assert not native_policy("always-roll").quit_table.any()
    assert native_policy("threshold:0").quit_table.all()


# ---------------------------------------------------------------- heuristics
HAVE_HEURISTICS = importlib.util.find_spec("lama_dice.agents.heuristics") is not None


@pytest.mark.skipif(not HAVE_HEURISTICS, reason="agents/heuristics.py does not exist yet")
@pytest.mark.parametrize("n", [1, 2, 3, 5])
@pytest.mark.parametrize("config", [0, 1, 3])
def test_native_heuristics_decide_like_the_python_agents(n, config):
    """Replay logged games move by move, asking the Python agent at every decision of its seat."""
    from lama_dice.agents.registry import make_agent

    rules = CONFIGS[config]
    games = 12
    seating = _mixed_seating(n, games, np.random.default_rng(7 * n + config))
    res = play_batch(n, AGENTS, seating=seating, rules=rules, seed=21 + config, log_games=range(games))
    python = [make_agent(s, seed=0) for s in AGENTS]
    checked = 0
    for g in range(games):
        rec = res.record(g)
        game: LamaGame | None = None
        for rnd in rec["rounds"]:
            if game is None:  # explicit chance: the round that ends waits at the next deal's chance node
                game = LamaGame(n, rules, hands=rnd["hands"], start_player=rnd["start_player"],
                                chance="explicit")
            else:
                assert game.is_chance_node() and not game.game_over
                deal(game, *rnd["hands"])
            assert game.start_player == rnd["start_player"] and not game.is_chance_node()
            for t in rnd["turns"]:
                agent_index = seating[g, t["player"]]
                heuristic = AGENTS[agent_index] != "random"
                pol = python[agent_index]
                chosen = A.QUIT if t["action"] == "quit" else A.ROLL
                if heuristic:
                    assert pol.act(game, game.legal_actions()) == chosen, (AGENTS[agent_index], game, t)
                    checked += 1
                if chosen == A.QUIT:
                    game.step(A.QUIT)
                    continue
                game.step(A.ROLL, dice=t["dice"])
                if game.phase in (Phase.DISCARD, Phase.TAKE):
                    if "discard" in t:
                        act = A.discard_action(tuple(t["discard"].count(f) for f in FACES))
                    else:
                        act = A.take_action(FACES.index(t["take"]))
                    if heuristic:
                        assert pol.act(game, game.legal_actions()) == act, (AGENTS[agent_index], game, t)
                        checked += 1
                    game.step(act)
        assert game is not None and game.game_over
        assert list(game.totals) == res.totals[g].tolist()
    assert checked > 50


def test_native_heuristic_decisions_differ_between_specs():
    """Different heuristics really play differently (the tables are used)."""
    a = play_batch(2, ["threshold:0.2"], games=300, seed=1)
    b = play_batch(2, ["always-roll"], games=300, seed=1)
    c = play_batch(2, ["points:12"], games=300, seed=1)
    assert a.quits.sum() > 0 and b.quits.sum() == 0 and c.quits.sum() > 0
    assert not np.array_equal(a.totals, c.totals)


def test_naive_engine_is_an_independent_reading_of_the_same_rules():
    """bench/naive_engine.py (the bench's plain baseline) shares no code with lama_env but plays its rules."""
    from itertools import product

    from lama_dice.bench import naive_engine as naive
    from lama_env.rules import FACES as RULE_FACES
    from lama_env.rules import return_chip, score_display

    for t in range(0, 100):
        assert naive.return_chip(t) == return_chip(t)
    for counts in product(range(3), repeat=7):
        display = Counter({RULE_FACES[f]: c for f, c in enumerate(counts)})
        assert naive.score(display) == score_display(counts)
    # the same game: mean final totals of threshold:0.2 self-play agree within sampling error
    naive_totals = np.array(naive.play_games(3000, 0.2, 2, seed=1), dtype=float)
    fast = play_batch(2, ["threshold:0.2"], games=30000, seed=1).totals.astype(float)
    for a, b in ((naive_totals.mean(axis=1), fast.mean(axis=1)), (naive_totals.max(axis=1), fast.max(axis=1))):
        se = np.sqrt(a.var() / len(a) + b.var() / len(b))
        assert abs(a.mean() - b.mean()) < 5 * se, (a.mean(), b.mean(), se)


def test_native_description_says_why_there_is_none():
    from lama_dice.agents.registry import make_agent
    from lama_env.batched import native_description
    from lama_env.rules import RulesConfig

    rules, other = RulesConfig(), RulesConfig(end_threshold=30)
    desc = native_description(make_agent("threshold:0.2"), rules, required=True)
    assert native_description(desc, rules) is desc

    class NoNative:
        pass

    class GivesNone:
        spec = "gives-none"

        def native(self, rules):
            return None

    class GivesJunk:
        def native(self, rules):
            return 42

    for agent, r, words in [(NoNative(), rules, "is neither a native policy description nor a policy"),
                            (GivesNone(), rules, "'gives-none' is not a native policy (its native() gives no"),
                            (GivesJunk(), rules, ".native() returned 42, not a NativePolicy"),
                            (desc, other, "was built for other rules than these")]:
        assert native_description(agent, r) is None
        with pytest.raises(NativePolicyError, match=re.escape(words)):
            native_description(agent, r, required=True)
