"""The exact solo solver, checked several ways.

Hand-checked values, an independent value iteration, the optimum against the
heuristics, and simulated play with the engine.
"""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import numpy as np
import pytest

from lama_dice.agents.registry import make_agent
from lama_dice.agents.solver import (
    FULL_ROW,
    SoloSolver,
    SolverError,
    deal_distribution,
    solver_for,
)
from lama_env import LamaGame
from lama_env import actions as A
from lama_env.odds import chance_outcomes
from lama_env.rules import DECK_COUNTS, FACE_INDEX, RulesConfig, score_display
from lama_env.streams import Streams
from lama_env.transitions import resolve_roll

DEFAULT = RulesConfig()
RULE_VARIANTS = [
    DEFAULT,
    RulesConfig(triple_llama="also_match"),
    RulesConfig(must_discard=False),
    RulesConfig(triple_llama="also_match", must_discard=False),
    RulesConfig(dice=(("1", "2", "3", "L", "L", "L"), ("4", "5", "6", "L", "L", "L"), ("1", "3", "5", "2", "4", "6"))),
]
EMPTY = (0,) * 7


def disp(*faces: str) -> tuple[int, ...]:
    d = [0] * 7
    for f in faces:
        d[FACE_INDEX[f]] += 1
    return tuple(d)


def p_some_die_shows(face: str, rules: RulesConfig = DEFAULT) -> Fraction:
    """P(at least one die shows ``face``), counted from the dice's faces."""
    miss = Fraction(1)
    for die in rules.dice:
        miss *= Fraction(sum(f != face for f in die), len(die))
    return 1 - miss


def p_triple_llama(rules: RulesConfig = DEFAULT) -> Fraction:
    p = Fraction(1)
    for die in rules.dice:
        p *= Fraction(sum(f == "L" for f in die), len(die))
    return p


# ------------------------------------------------------------ hand-checked values
def test_empty_display_is_worth_zero():
    assert solver_for(DEFAULT).value(EMPTY) == 0


def test_single_six_by_hand():
    # Solo: a roll showing a 6 goes out (0); a triple llama (no 6) changes nothing and the
    # player is back at a turn worth min(6, ...) = 6; anything else busts to 10 + 1+..+6 = 31.
    s = solver_for(DEFAULT)
    p_out = p_some_die_shows("6")
    p_tl = p_triple_llama()
    roll = (1 - p_out - p_tl) * 31 + p_tl * 6
    assert s.roll_value(disp("6")) == pytest.approx(float(roll), abs=1e-12)
    assert s.value(disp("6")) == 6
    assert s.quits(disp("6"))


def test_single_llama_by_hand():
    # chip_only: a roll with 1 or 2 llamas goes out, a triple llama loops, no llama busts:
    # v = min(10, p_bust * 31 + p_tl * v)  =>  v = p_bust * 31 / (1 - p_tl) < 10: roll.
    s = solver_for(DEFAULT)
    p_any = p_some_die_shows("L")
    p_tl = p_triple_llama()
    v = (1 - p_any) * 31 / (1 - p_tl)
    assert v < 10
    assert s.value(disp("L")) == pytest.approx(float(v), abs=1e-12)
    assert s.roll_value(disp("L")) == pytest.approx(float(v), abs=1e-12)
    assert not s.quits(disp("L"))
    # also_match: the triple llama goes out too.
    s2 = solver_for(RulesConfig(triple_llama="also_match"))
    assert s2.value(disp("L")) == pytest.approx(float((1 - p_any) * 31), abs=1e-12)


def test_two_llamas_by_hand():
    # k llamas shown: 0 bust (31); 1 -> {L}; 2 -> out (0, best); 3 -> self-loop (chip_only).
    s = solver_for(DEFAULT)
    v1 = Fraction(8, 27) * 31 / Fraction(26, 27)  # value of {L}, as above
    p = {0: Fraction(8, 27), 1: Fraction(12, 27), 2: Fraction(6, 27), 3: Fraction(1, 27)}
    assert p[0] == 1 - p_some_die_shows("L") and p[3] == p_triple_llama()
    # keep rolling forever would be worth r with r = p0*31 + p1*v1 + p3*r
    r_forever = (p[0] * 31 + p[1] * v1) / (1 - p[3])
    assert r_forever > 10  # so quitting (10) is optimal, and rolling once is worth:
    roll = p[0] * 31 + p[1] * v1 + p[3] * 10
    assert s.value(disp("L", "L")) == 10
    assert s.roll_value(disp("L", "L")) == pytest.approx(float(roll), abs=1e-12)


def test_best_discard_goes_out_when_it_can():
    s = solver_for(DEFAULT)
    d = disp("L", "6")
    a = s.best_discard(d, (FACE_INDEX["L"], FACE_INDEX["3"], FACE_INDEX["6"]))
    assert A.discard_counts(a) == d
    # only the llama matches: discarding it leaves {6} (6) rather than nothing
    a = s.best_discard(d, (FACE_INDEX["L"], FACE_INDEX["3"], FACE_INDEX["4"]))
    assert A.discard_counts(a) == disp("L")
    with pytest.raises(SolverError):
        s.best_discard(disp("5"), (FACE_INDEX["1"], FACE_INDEX["3"], FACE_INDEX["6"]))


def test_bad_display_is_refused():
    s = solver_for(DEFAULT)
    with pytest.raises(SolverError, match=r"7 non-negative card counts per face, got \(1, 2, 3\)"):
        s.value((1, 2, 3))
    with pytest.raises(SolverError, match=r"7 non-negative card counts per face, got \(0, 0, -1, 0, 0, 0, 1\)"):
        s.value((0, 0, -1, 0, 0, 0, 1))
    with pytest.raises(SolverError, match="an empty display has gone out: there is no roll"):
        s.roll_value(EMPTY)
    with pytest.raises(SolverError, match=r"out_value must be <= 0, got 3\.0"):
        SoloSolver(DEFAULT, out_value=3.0)


# ------------------------------------------------------ independent value iteration
def value_iteration(rules: RulesConfig, max_cards: int, sweeps: int) -> dict:
    """Plain value iteration from above (quit everywhere), over every roll in die order."""
    states = sorted((d for d in itertools.product(*(range(min(c, max_cards) + 1) for c in DECK_COUNTS))
                     if 0 < sum(d) <= max_cards), key=sum)
    v = {d: float(score_display(d)) for d in states}
    v[EMPTY] = 0.0
    trans = {}
    for d in states:
        out = []
        for dice, p in chance_outcomes(rules):
            kind, legal = resolve_roll(d, FULL_ROW, dice, last_player=True, rules=rules)
            if kind == "discard":
                out.append((p, [tuple(x - y for x, y in zip(d, A.discard_counts(a), strict=True)) for a in legal]))
            elif kind == "triple_llama":
                out.append((p, [d]))
            else:
                out.append((p, score_display([c + 1 for c in d])))
        trans[d] = out
    for _ in range(sweeps):
        for d in states:
            r = sum(p * (x if isinstance(x, int) else min(v[c] for c in x)) for p, x in trans[d])
            v[d] = min(score_display(d), r)
    return v


@pytest.mark.parametrize("rules", RULE_VARIANTS[:4], ids=["default", "also_match", "no_must", "both"])
def test_solver_matches_value_iteration(rules):
    vi = value_iteration(rules, max_cards=3, sweeps=80)
    s = SoloSolver(rules)
    for d, v in vi.items():
        assert s.value(d) == pytest.approx(v, abs=1e-9), d


# ------------------------------------------------------------ deals and aggregates
def test_deal_distribution():
    deals = deal_distribution()
    assert sum(p for _, p in deals) == pytest.approx(1.0, abs=1e-12)
    assert all(sum(h) == 6 and all(c <= m for c, m in zip(h, DECK_COUNTS, strict=True)) for h, _ in deals)
    probs = dict(deals)
    assert probs[(6, 0, 0, 0, 0, 0, 0)] == pytest.approx(1 / math.comb(36, 6))
    # one card of each number: 5^6 ways
    assert probs[(0, 1, 1, 1, 1, 1, 1)] == pytest.approx(5 ** 6 / math.comb(36, 6))


def test_expected_round_points_is_the_deal_average():
    s = solver_for(DEFAULT)
    direct = sum(p * s.value(h) for h, p in deal_distribution())
    assert s.expected_round_points() == pytest.approx(direct)
    assert 0 < s.expected_round_points() < 31


@pytest.mark.parametrize("rules", RULE_VARIANTS, ids=["default", "also_match", "no_must", "both", "dice"])
def test_optimum_beats_every_heuristic(rules):
    s = SoloSolver(rules)
    opt = s.expected_round_points()
    assert s.policy_value(make_agent("optimal")) == pytest.approx(opt, abs=1e-9)
    for spec in ("always-roll", "threshold:0.2", "points:10"):
        v = s.policy_value(make_agent(spec))
        assert v > opt + 1e-3, spec  # each of them differs from the optimum somewhere


def test_optimum_is_below_heuristics_display_by_display():
    s = solver_for(DEFAULT)
    agents = [make_agent(spec) for spec in ("always-roll", "threshold:0.2", "points:10")]
    for h, _ in deal_distribution()[::7]:
        for agent in agents:
            assert s.value(h) <= s.policy_value(agent, h) + 1e-9


def test_policy_value_of_never_ending_policy_is_infinite():
    class Lazy:
        def wants_quit(self, display, rules):
            return False

        def choose_discard(self, display, legal, rules):
            return legal[0]  # the empty discard when must_discard is false

    s = SoloSolver(RulesConfig(must_discard=False))
    assert math.isinf(s.policy_value(Lazy(), disp("L", "1", "2", "3", "4")))


def test_distribution_mean_is_the_value():
    for out_value in (0.0, -10.0):
        s = SoloSolver(DEFAULT, out_value=out_value)
        for h, _ in deal_distribution()[::11]:
            dist = s.distribution(h)
            assert dist.sum() == pytest.approx(1.0)
            assert float(dist @ s.support) == pytest.approx(s.value(h), abs=1e-9)


# --------------------------------------------------------- simulation with the engine
def solo_round_points(spec: str, rounds: int, seed: int, rules: RulesConfig = DEFAULT) -> np.ndarray:
    agent = make_agent(spec, seed=seed)
    streams = Streams.of_game(seed, 0)  # the rounds one after another along game 0's streams
    pts = []
    for _ in range(rounds):
        g = LamaGame(1, rules=rules, rng=streams, record=False)
        while not g.rounds_finished:  # rounds flow on: the round's result is last_round
            g.step(agent.act(g, g.legal_actions()))
        pts.append(g.last_round["points"][0])
    return np.array(pts, dtype=float)


@pytest.mark.parametrize("spec", ["optimal", "threshold:0.2"])
def test_simulated_solo_play_matches_the_exact_value(spec):
    s = solver_for(DEFAULT)
    exact = s.policy_value(make_agent(spec))
    pts = solo_round_points(spec, rounds=2500, seed=11)
    se = pts.std(ddof=1) / math.sqrt(len(pts))
    assert abs(pts.mean() - exact) < 4 * se


# ------------------------------------------------------------------ lama-dice solve
def test_solve_command_json(capsys):
    import json

    from lama_dice.cli.main import main

    assert main(["solve", "--json", "--rule", "triple_llama=also_match"]) == 0
    out = json.loads(capsys.readouterr().out)
    rules = RulesConfig(triple_llama="also_match")
    assert out["rules"] == rules.to_dict()
    assert out["expected_round_points"] == pytest.approx(solver_for(rules).expected_round_points())
    assert out["states"] == 1710
    assert {"always-roll", "threshold:0.2", "points:10"} <= set(out["policies"])
    assert all(v > out["expected_round_points"] for v in out["policies"].values())
    # the older flag spells the same rules; --json - is --json
    assert main(["solve", "--json", "-", "--triple-llama", "also_match"]) == 0
    assert json.loads(capsys.readouterr().out) == out


def test_solve_command_json_file_and_sorted_table(capsys, tmp_path):
    """``--json OUT`` as in every command: the file, and the table on stdout, best policy first."""
    import json

    from lama_dice.cli.commands.solve import sorted_policies
    from lama_dice.cli.main import main

    path = tmp_path / "solve.json"
    assert main(["solve", "--rule", "must_discard=false", "--json", str(path)]) == 0
    text = capsys.readouterr().out
    data = json.loads(path.read_text(encoding="utf-8"))
    assert data["rules"]["must_discard"] is False and f"JSON: {path}" in text
    ranked = sorted_policies(data["policies"])
    values = [v for _, v in ranked]
    assert values == sorted(values) and len(set(values)) > 3
    cells = [line.split()[1] for line in text.splitlines() if line.startswith("│ ")]
    rows = [c for c in cells if c in data["policies"]]
    assert rows == [spec for spec, _ in ranked]  # the table's order is the docs' (tools/regen_docs.py)


def test_solve_command_table_and_errors(capsys):
    from lama_dice.cli.main import main

    assert main(["solve", "--rule", "must_discard=false"]) == 0
    text = capsys.readouterr().out
    opt = solver_for(RulesConfig(must_discard=False)).expected_round_points()
    assert "optimal" in text and f"{opt:.4f}" in text and "threshold:0.2" in text
    assert main(["solve", "--no-must-discard"]) == 0  # the older spelling
    assert f"{opt:.4f}" in capsys.readouterr().out
    for bad in (["--rule", "end_threshold=0"], ["--end-threshold", "0"]):
        assert main(["solve", *bad]) == 2
        err = capsys.readouterr().err
        assert "end_threshold" in err and len(err.strip().splitlines()) == 1
    assert main(["solve", "--rule", "triple_llama"]) == 2
    assert "KEY=VALUE" in capsys.readouterr().err


def test_solo_optimal_is_the_name_and_optimal_its_alias():
    from lama_dice.agents.optimal import OptimalPolicy
    from lama_dice.agents.registry import AgentSpecError, registered

    entries = registered()
    assert entries["solo-optimal"].alias_of is None and entries["optimal"].alias_of == "solo-optimal"
    assert "SOLO" in entries["solo-optimal"].help and "solo-optimal" in entries["optimal"].help
    new, old = make_agent("solo-optimal"), make_agent("optimal")
    assert type(new) is type(old) is OptimalPolicy
    assert (new.spec, old.spec) == ("solo-optimal", "optimal")  # each prints as it was asked for
    with pytest.raises(AgentSpecError, match="takes no argument"):
        make_agent("optimal:1")
