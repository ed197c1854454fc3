"""Exact solo values of observation policies (agents/solo_exact.py) and the solver's visit counts.

A policy that decides from the observation vector alone must get, through
:class:`ObservationSoloPolicy`, exactly the value the solver gives the same
rule-based policy directly; the synthetic solo observations must equal the
encoder's on real engine states; and the visit counts must add up to the
policy's value and match simulated play.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from lama_dice.agents.heuristics import maximal_discard
from lama_dice.agents.registry import make_agent
from lama_dice.agents.solo_exact import ObservationSoloPolicy, exact_solo_value, solo_observation
from lama_dice.agents.solver import SolverError, deal_distribution, solver_for
from lama_env import LamaGame, Phase
from lama_env import actions as A
from lama_env.observation import encode, observation_layout
from lama_env.rules import DECK_COUNTS, RulesConfig, score_display
from lama_env.transitions import ROLL_BUST, ROLL_DISCARD

RULES = [RulesConfig(), RulesConfig(triple_llama="also_match"), RulesConfig(must_discard=False)]
_BLOCK = {e.name: e for e in observation_layout(1)}


class ObsThreshold:
    """``threshold:T`` that reads only the observation: quits at p_no_match >= T, discards all it can."""

    deterministic = True

    def __init__(self, threshold: float) -> None:
        self.threshold = threshold
        self.calls = 0

    def act_observations(self, obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        self.calls += len(obs)
        out = []
        for x, m in zip(obs, mask, strict=True):
            decision = x[_BLOCK["decision"].start:_BLOCK["decision"].start + 4]
            legal = np.flatnonzero(m).tolist()
            if decision[0] == 1.0:  # roll or quit
                pnm = float(x[_BLOCK["p_no_match"].start])
                out.append(A.QUIT if pnm >= self.threshold - 1e-6 else A.ROLL)
            else:  # the dice are in the observation: what they match is what the mask allows at most
                dice = np.rint(x[_BLOCK["dice"].start:_BLOCK["dice"].start + 7] * 3).astype(int)
                held = np.rint(x[:7] * (np.array(DECK_COUNTS) + 1)).astype(int)
                assert dice.sum() == 3
                a = maximal_discard(legal)
                assert tuple(np.minimum(dice, held)) == A.DISCARDS[a - A.DISCARD_BASE]
                out.append(a)
        return np.array(out)


@pytest.mark.parametrize("rules", RULES, ids=["default", "also_match", "no_must_discard"])
def test_solo_observation_is_the_encoders(rules):
    """At every decision of real solo games (several rounds, growing totals): the same vector as encode()."""
    rng = np.random.default_rng(3)
    checked = {Phase.TURN: 0, Phase.DISCARD: 0}
    for g in range(150):
        game = LamaGame(1, rules, seed=g, record=False)
        while not game.game_over:
            if game.phase in checked:
                dice = tuple(sorted(game.dice)) if game.phase is Phase.DISCARD else None
                mine = solo_observation(rules, game.displays[0], game.totals[0], game.phase, dice)
                np.testing.assert_array_equal(mine, encode(game, 0))
                checked[game.phase] += 1
            legal = game.legal_actions()
            game.step(int(rng.choice(legal)))
    assert min(checked.values()) > 150


@pytest.mark.parametrize("rules,threshold", [(RULES[0], 0.2), (RULES[0], 0.35), (RULES[1], 0.2), (RULES[2], 0.2)],
                         ids=["default-0.2", "default-0.35", "also_match-0.2", "no_must_discard-0.2"])
def test_observation_policy_gets_the_solvers_value(rules, threshold):
    """threshold:T seen through its observations has exactly the value the solver gives threshold:T."""
    solver = solver_for(rules)
    direct = solver.policy_value(make_agent(f"threshold:{threshold}"))
    obs_policy = ObsThreshold(threshold)
    wrapped = ObservationSoloPolicy(obs_policy, rules, total=17)
    assert solver.policy_value(wrapped) == pytest.approx(direct, abs=1e-9)
    assert wrapped.decisions == obs_policy.calls > 1000  # each state asked once (cached)
    # asked all at once in two batches, the same value
    batched = ObsThreshold(threshold)
    assert exact_solo_value(batched, rules, total=0) == pytest.approx(direct, abs=1e-9)
    assert batched.calls > obs_policy.calls


def test_the_totals_reach_the_observation():
    """A policy that quits at once when it sees 30+ chips: the value at total 30 is the deal's mean score."""

    class QuitsWhenRich(ObsThreshold):
        def act_observations(self, obs, mask):
            acts = super().act_observations(obs, mask)
            rich = obs[:, _BLOCK["total"].start] >= 30 / 40 - 1e-6
            return np.where(rich & mask[:, A.QUIT], A.QUIT, acts)

    rules = RulesConfig()
    mean_deal = sum(p * score_display(h) for h, p in deal_distribution())
    assert exact_solo_value(QuitsWhenRich(0.2), rules, total=30) == pytest.approx(mean_deal)
    assert exact_solo_value(QuitsWhenRich(0.2), rules, total=29) == pytest.approx(
        solver_for(rules).policy_value(make_agent("threshold:0.2")))


def test_refusals():
    class Sampler(ObsThreshold):
        deterministic = False

    with pytest.raises(SolverError, match="deterministic"):
        exact_solo_value(Sampler(0.2))
    with pytest.raises(SolverError, match="neither"):
        exact_solo_value(make_agent("lookahead"))
    two = ObsThreshold(0.2)
    two.num_players = 2  # type: ignore[attr-defined]
    with pytest.raises(SolverError, match="plays 2 players"):
        exact_solo_value(two)


@pytest.mark.parametrize("spec", ["optimal", "threshold:0.2", "points:10"])
def test_visits_add_up_to_the_value(spec):
    """Points = sum over turns of (quit: the display's score; roll: P(bust) * the bust's points)."""
    rules = RulesConfig()
    solver = solver_for(rules)
    policy = make_agent(spec)
    turns, discards = solver.visits(policy)
    total = 0.0
    for d, v in turns.items():
        if policy.wants_quit(d, rules):
            total += v * score_display(d)
        else:
            p_bust = sum(p for _, kind, p, _ in solver.roll_outcomes(d) if kind is ROLL_BUST)
            total += v * p_bust * solver.bust_points(d)
    assert total == pytest.approx(solver.policy_value(policy), rel=1e-9)
    # every discard decision hangs off a turn that rolled: its visits are that turn's times the roll's chance
    for (d, dice), v in list(discards.items())[:500]:
        p = next(p for x, kind, p, _ in solver.roll_outcomes(d) if x == dice and kind is ROLL_DISCARD)
        assert v == pytest.approx(turns[d] * p)


def test_visits_match_simulated_turns():
    """Expected turns per solo round under optimal play against 4,000 simulated rounds (4 standard errors)."""
    rules = RulesConfig()
    solver = solver_for(rules)
    policy = make_agent("optimal")
    expected = sum(solver.visits(policy)[0].values())
    counts = []
    for g in range(4000):
        game = LamaGame(1, rules, seed=10_000 + g, record=False)
        turns = 0
        while not game.rounds_finished:  # one round (rounds flow on)
            if game.phase is Phase.TURN:
                turns += 1
            game.step(policy.act(game, game.legal_actions()))
        counts.append(turns)
    se = np.std(counts) / math.sqrt(len(counts))
    assert abs(np.mean(counts) - expected) < 4 * se


# ------------------------------------------------------------------ lama-dice solve --agents
def test_solve_agents_command(capsys):
    """The shipped solo network's exact value at two totals, a heuristic's once; the table names both."""
    import json

    from lama_dice.cli.main import main

    assert main(["solve", "--agents", "ppo:solo", "threshold:0.2", "--totals", "0", "39", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    opt = solver_for(RulesConfig()).expected_round_points()
    assert out["expected_round_points"] == pytest.approx(opt)
    net, heur = out["agents"]["ppo:solo"], out["agents"]["threshold:0.2"]
    assert net["sees_totals"] and set(net["values"]) == {"0", "39"}
    for v in net["values"].values():
        assert v["round_points"] >= opt - 1e-9 and v["vs_optimum"] == pytest.approx(v["round_points"] / opt - 1)
    assert not heur["sees_totals"] and heur["values"]["0"]["round_points"] == pytest.approx(
        solver_for(RulesConfig()).policy_value(make_agent("threshold:0.2")))
    assert main(["solve", "--agents", "threshold:0.2", "--no-must-discard"]) == 0
    text = capsys.readouterr().out
    assert "threshold:0.2" in text and "optimal" in text


@pytest.mark.parametrize("argv,message", [
    (["--agents", "lookahead"], "no exact solo value"),
    (["--agents", "ppo:2p"], "plays 2 players"),
    (["--agents", "ppo:solo", "--totals", "40"], "--totals must lie in 0..39"),
    (["--agents", "nonsense"], "nonsense"),
])
def test_solve_agents_refusals(capsys, argv, message):
    from lama_dice.cli.main import main

    assert main(["solve", *argv]) == 2
    err = capsys.readouterr().err.strip()
    assert message in err and len(err.splitlines()) == 1


def test_shipped_solo_agent_is_within_half_a_percent_of_the_optimum():
    """Issue 14's target for ppo:solo, exact: at a fresh game's total and at the last total before the end."""
    from lama_dice.agents.ppo import PPOPolicy

    rules = RulesConfig()
    opt = solver_for(rules).expected_round_points()
    net = PPOPolicy("solo")
    for total in (0, 39):
        assert exact_solo_value(net, rules, total) <= 1.005 * opt
