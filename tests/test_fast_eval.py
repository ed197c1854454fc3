"""The fast evaluation backend (lama_dice.evaluation.compiled) meets the Backend protocol (evaluation.backends)."""

from __future__ import annotations

import numpy as np
import pytest

from lama_dice.agents.base import Policy, RandomPolicy
from lama_dice.agents.registry import make_agent
from lama_dice.evaluation import Backend, GameOutcomes, evaluate, rotation_seating
from lama_dice.evaluation import compiled as fast_eval
from lama_env.errors import LamaDiceError
from lama_env.rules import RulesConfig

NATIVE = ["random", "always-roll", "threshold:0.2", "points:12", "threshold", "points"]


class SubclassedRandom(RandomPolicy):
    """Same spec, different decisions: must not be played natively."""

    def act(self, game, legal):
        return legal[-1]


class Custom(Policy):
    spec = "threshold:0.2"  # looks native, is not

    def act(self, game, legal):
        return legal[0]


def test_supports_native_agents_only():
    rules = RulesConfig()
    native = [make_agent(s, seed=0) for s in NATIVE]
    assert fast_eval.supports(native, 2, rules)
    assert fast_eval.supports(native[:1], 1, rules)
    assert fast_eval.supports(native, 6, RulesConfig(triple_llama="also_match", must_discard=False))
    assert not fast_eval.supports([native[0], SubclassedRandom()], 2, rules)
    assert not fast_eval.supports([native[0], Custom()], 2, rules)
    assert not fast_eval.supports(native, 7, rules)
    assert not fast_eval.supports(native, 0, rules)
    assert not fast_eval.supports([], 2, rules)


def test_native_spec_uses_the_policies_own_parameters():
    assert fast_eval.native_spec(make_agent("threshold")) == "threshold:0.2"
    assert fast_eval.native_spec(make_agent("threshold:0.35")) == "threshold:0.35"
    assert fast_eval.native_spec(make_agent("points")) == "points:10"
    assert fast_eval.native_spec(make_agent("always-roll")) == "always-roll"
    assert fast_eval.native_spec(make_agent("random")) == "random"
    assert fast_eval.native_spec(Custom()) is None
    assert fast_eval.native_spec("points:3") == "points:3"
    assert fast_eval.native_spec("ppo:x.zip") is None


def test_play_games_returns_valid_deterministic_outcomes():
    pols = [make_agent(s, seed=0) for s in ("threshold:0.2", "random", "points:12")]
    seating = rotation_seating(3, 300)
    rules = RulesConfig(end_threshold=30)
    out = fast_eval.play_games(pols, seating.copy(), 3, rules, 5)
    assert isinstance(out, GameOutcomes)
    out.validate(300, 3, 3)
    assert np.array_equal(out.seating, seating)
    assert (out.totals.max(axis=1) >= 30).all()
    assert (out.totals <= out.round_points).all()  # chips returned only lower totals
    for name in ("busts", "quits", "went_out"):
        arr = getattr(out, name)
        assert arr is not None and (arr >= 0).all() and (arr <= out.rounds[:, None]).all()
    assert (out.quits[seating == 1] > 0).any()  # random quits sometimes
    again = fast_eval.play_games(pols, seating.copy(), 3, rules, 5)
    assert np.array_equal(again.totals, out.totals) and np.array_equal(again.rounds, out.rounds)
    other = fast_eval.play_games(pols, seating.copy(), 3, rules, 6)
    assert not np.array_equal(other.totals, out.totals)


def test_the_backend_object_plays_as_the_functions_do():
    backend = fast_eval.CompiledBackend()
    assert isinstance(backend, Backend) and backend.name == "fast"
    pols = [make_agent(s, seed=0) for s in ("threshold:0.2", "random")]
    assert backend.supports(pols, 2, RulesConfig())
    seating = rotation_seating(2, 40)
    a = backend.play_games(pols, seating.copy(), 2, RulesConfig(), 3)
    b = fast_eval.play_games(pols, seating.copy(), 2, RulesConfig(), 3)
    assert np.array_equal(a.totals, b.totals) and np.array_equal(a.rounds, b.rounds)


def test_play_games_refuses_a_non_native_policy():
    with pytest.raises(LamaDiceError):
        fast_eval.play_games([make_agent("random"), Custom()], rotation_seating(2, 4), 2, RulesConfig(), 0)


def test_evaluate_uses_the_fast_backend_for_native_agents():
    res = evaluate(["threshold:0.2", "random"], games=200, seed=1)
    assert res.backend == "fast"
    assert sum(a.games for a in res.agents) == 400
    res = evaluate([make_agent("random"), SubclassedRandom()], games=20, seed=1)
    assert res.backend == "python"


@pytest.mark.parametrize("agents, rules", [
    (["threshold:0.2", "random"], {}),
    (["always-roll", "points:12", "threshold:0.3"], {"triple_llama": "also_match", "must_discard": False}),
])
def test_fast_and_python_backends_agree_statistically(agents, rules):
    n = len(agents)
    fast = evaluate(agents, games=6000, seed=3, rules=rules, backend="fast")
    slow = evaluate(agents, games=90 * n, seed=3, rules=rules, backend="python")
    for f, s in zip(fast.agents, slow.agents, strict=True):
        se = (f.final_points_se ** 2 + s.final_points_se ** 2) ** 0.5
        assert abs(f.mean_final_points - s.mean_final_points) < 5 * se, (f, s)
        p = f.win_rate
        se_w = (p * (1 - p) / s.games + p * (1 - p) / f.games) ** 0.5 + 1e-9
        assert abs(f.win_rate - s.win_rate) < 5 * se_w + 0.02, (f, s)
        for rate in ("bust_rate", "quit_rate", "went_out_rate"):
            a, b = getattr(f, rate), getattr(s, rate)
            assert a is not None and b is not None
            se_r = (a * (1 - a) / s.rounds) ** 0.5 + 1e-9
            assert abs(a - b) < 5 * se_r + 0.01, (rate, f, s)


def test_warmup_reports_seconds():
    assert fast_eval.warmup() >= 0.0
