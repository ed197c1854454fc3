"""Tests of lama_dice.evaluation.stats: Wilson intervals (values and coverage), win shares, ranks."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lama_dice.evaluation.stats import fractional_ranks, mean_se, tied_games, wilson_interval, win_shares, z_value
from lama_env.rules import winners


def test_z_value():
    assert z_value(0.95) == pytest.approx(1.959964, abs=1e-6)
    assert z_value(0.99) == pytest.approx(2.575829, abs=1e-6)
    with pytest.raises(ValueError):
        z_value(1.0)


@pytest.mark.parametrize("x, n, lo, hi", [
    (0, 10, 0.0, 0.27753),      # upper bound z^2 / (n + z^2)
    (5, 10, 0.23659, 0.76341),
    (10, 10, 0.72247, 1.0),
    (81, 263, 0.25529, 0.36621),  # closed form (2np + z^2 -+ z sqrt(z^2 + 4np(1-p))) / (2(n + z^2))
])
def test_wilson_known_values(x, n, lo, hi):
    got = wilson_interval(x, n)
    assert got[0] == pytest.approx(lo, abs=1e-4)
    assert got[1] == pytest.approx(hi, abs=1e-4)


def test_wilson_edge_cases():
    assert wilson_interval(0, 0) == (0.0, 1.0)
    with pytest.raises(ValueError):
        wilson_interval(11, 10)
    with pytest.raises(ValueError):
        wilson_interval(-1, 10)
    # wider at higher confidence
    a, b = wilson_interval(30, 100, 0.95), wilson_interval(30, 100, 0.99)
    assert b[0] < a[0] < 0.3 < a[1] < b[1]


@given(n=st.integers(1, 5000), frac=st.floats(0, 1))
@settings(max_examples=200, deadline=None)
def test_wilson_contains_estimate(n, frac):
    x = frac * n  # fractional successes are allowed (shared wins)
    lo, hi = wilson_interval(x, n)
    assert 0.0 <= lo <= x / n + 1e-12
    assert x / n - 1e-12 <= hi <= 1.0


def _coverage(samples: np.ndarray, p_true: float) -> float:
    n = samples.shape[1]
    hits = 0
    for row in samples:
        lo, hi = wilson_interval(float(row.sum()), n)
        hits += lo <= p_true <= hi
    return hits / len(samples)


@pytest.mark.parametrize("p, n", [(0.3, 200), (0.08, 150), (0.5, 60)])
def test_wilson_coverage_biased_coin(p, n):
    """About 95% of the intervals of many simulated experiments contain the true p."""
    rng = np.random.default_rng(1234)
    reps = 3000
    samples = rng.random((reps, n)) < p
    cov = _coverage(samples.astype(float), p)
    # the standard error of a coverage estimate from 3000 experiments is ~0.004
    assert 0.93 <= cov <= 0.97, cov


def test_wilson_coverage_with_shared_wins():
    """Win shares in {0, 1/2, 1} (ties): the interval on the mean share still covers (conservatively)."""
    rng = np.random.default_rng(99)
    reps, n = 3000, 120
    probs = np.array([0.35, 0.3, 0.35])  # lose, tie (half a win), win
    values = np.array([0.0, 0.5, 1.0])
    samples = values[rng.choice(3, size=(reps, n), p=probs)]
    p_true = float(probs @ values)
    cov = _coverage(samples, p_true)
    assert cov >= 0.94, cov


def test_win_shares_and_ties():
    totals = np.array([[10, 20], [30, 30], [5, 5], [40, 12]])
    shares = win_shares(totals)
    np.testing.assert_allclose(shares, [[1, 0], [0.5, 0.5], [0.5, 0.5], [0, 1]])
    three = win_shares(np.array([[3, 3, 3], [1, 1, 7]]))
    np.testing.assert_allclose(three, [[1 / 3, 1 / 3, 1 / 3], [0.5, 0.5, 0]])
    assert tied_games(totals) == 2
    assert tied_games(np.zeros((0, 2), dtype=int)) == 0


@given(st.lists(st.lists(st.integers(0, 60), min_size=1, max_size=6).map(tuple), min_size=1, max_size=20)
       .filter(lambda rows: len({len(r) for r in rows}) == 1))
@settings(max_examples=100, deadline=None)
def test_win_shares_agree_with_rules(rows):
    """The vectorised winners are exactly the engine's rules.winners, each row sums to one win."""
    totals = np.array(rows)
    shares = win_shares(totals)
    for row, sh in zip(rows, shares, strict=True):
        w = winners(list(row))
        assert [i for i, s in enumerate(sh) if s > 0] == w
        assert sh.sum() == pytest.approx(1.0)
        assert all(sh[i] == pytest.approx(1 / len(w)) for i in w)


def test_fractional_ranks():
    r = fractional_ranks(np.array([[10, 20, 30], [5, 5, 9], [7, 7, 7], [9, 1, 9]]))
    np.testing.assert_allclose(r, [[1, 2, 3], [1.5, 1.5, 3], [2, 2, 2], [2.5, 1, 2.5]])
    rng = np.random.default_rng(0)
    t = rng.integers(0, 5, size=(50, 4))
    np.testing.assert_allclose(fractional_ranks(t).sum(axis=1), 10.0)


def test_mean_se():
    m, se = mean_se(np.array([1.0, 2.0, 3.0, 4.0]))
    assert m == 2.5
    assert se == pytest.approx(np.std([1, 2, 3, 4], ddof=1) / 2)
    assert math.isnan(mean_se(np.array([1.0]))[1])
    assert math.isnan(mean_se(np.array([]))[0])


def test_ratio_interval_covers_the_true_points_per_round():
    """Units with a random number of rounds each: the interval covers the true ratio ~95% of the time."""
    from lama_dice.evaluation.stats import ratio_interval

    rng = np.random.default_rng(11)
    true_rate = 8.0
    covered = 0
    trials = 400
    for _ in range(trials):
        rounds = rng.integers(1, 8, size=200)
        points = np.array([rng.poisson(true_rate, size=k).sum() for k in rounds])
        r, lo, hi = ratio_interval(points, rounds)
        assert lo < r < hi
        covered += lo <= true_rate <= hi
    assert 0.91 <= covered / trials <= 0.98
    r, lo, hi = ratio_interval(np.array([5.0]), np.array([2.0]))
    assert r == 2.5 and np.isnan(lo) and np.isnan(hi)
