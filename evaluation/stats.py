"""Small statistics helpers for evaluation: Wilson intervals, win shares, ranks.

Everything here is a pure function of NumPy arrays (no game logic):
:func:`lama_dice.evaluation.outcomes.agent_stats` feeds it the final totals of many games.

Lower totals are better in *Don't L.L.A.M.A. Dice*; the players tied for the
fewest points share the win (RULES.md, "The game").  The winners are
recomputed here from final totals in vectorised form (one game at a time the
engine's :func:`lama_env.rules.winners` says the same; a test checks that
they agree).
"""

from __future__ import annotations

import math
from statistics import NormalDist

import numpy as np

from lama_env.rules import win_shares_of_games

__all__ = ["fractional_ranks", "mean_se", "ratio_interval", "tied_games", "wilson_interval", "win_shares", "z_value"]


def z_value(confidence: float = 0.95) -> float:
    """The two-sided standard-normal quantile for ``confidence`` (1.959964 for 0.95)."""
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")
    return NormalDist().inv_cdf(0.5 + confidence / 2.0)


def wilson_interval(successes: float, n: float, confidence: float = 0.95) -> tuple[float, float]:
    """Wilson score interval for a proportion.

    Args:
        successes: number of successes; may be fractional (a shared win counts
            ``1/k``), in ``[0, n]``.
        n: number of trials (games).
        confidence: two-sided confidence level.

    Returns:
        ``(lo, hi)`` with ``0 <= lo <= successes/n <= hi <= 1``; ``(0.0, 1.0)`` when ``n == 0``.

    Fractional successes: the interval is computed with ``p = successes / n``
    as for a binomial proportion.  A win share ``X`` lies in ``[0, 1]``, so
    ``Var(X) <= E[X](1 - E[X])``: the Bernoulli variance the Wilson interval
    assumes is an upper bound, and the interval is (asymptotically) at least
    as wide as needed -- conservative when ties are common, exact Wilson when
    there are none.
    """
    if n < 0 or successes < 0 or successes > n + 1e-9:
        raise ValueError(f"need 0 <= successes <= n, got successes={successes}, n={n}")
    if n == 0:
        return 0.0, 1.0
    z = z_value(confidence)
    p = min(max(successes / n, 0.0), 1.0)
    z2n = z * z / n
    denom = 1.0 + z2n
    centre = (p + z2n / 2.0) / denom
    half = z * math.sqrt(p * (1.0 - p) / n + z2n / (4.0 * n)) / denom
    return max(0.0, centre - half), min(1.0, centre + half)


def win_shares(totals: np.ndarray) -> np.ndarray:
    """Win share of each seat: ``1/k`` for each of the ``k`` seats tied for the fewest points, else 0.

    Args:
        totals: final totals, shape ``(G, N)``.

    Returns:
        float array ``(G, N)``; each row sums to 1.
    """
    return win_shares_of_games(totals)


def tied_games(totals: np.ndarray) -> int:
    """Number of games (rows of ``totals``) won jointly by two or more seats."""
    totals = np.asarray(totals)
    if totals.size == 0:
        return 0
    return int((win_shares(totals).max(axis=1) < 1.0).sum())


def fractional_ranks(totals: np.ndarray) -> np.ndarray:
    """Rank of each seat within its game (1 = fewest points); tied seats share the mean of their places.

    Two seats tied for first in a 3-player game both get 1.5, the third 3.
    Each row therefore sums to ``N(N+1)/2``.

    Args:
        totals: final totals, shape ``(G, N)``.

    Returns:
        float array ``(G, N)``.
    """
    totals = np.asarray(totals)
    a = totals[:, :, None]
    b = totals[:, None, :]
    less = (b < a).sum(axis=2)
    equal = (b == a).sum(axis=2)
    return 1.0 + less + (equal - 1) / 2.0


def mean_se(values: np.ndarray) -> tuple[float, float]:
    """Mean and its standard error (``nan`` for the error below two values)."""
    values = np.asarray(values, dtype=float)
    if values.size == 0:
        return math.nan, math.nan
    if values.size < 2:
        return float(values.mean()), math.nan
    return float(values.mean()), float(values.std(ddof=1) / math.sqrt(values.size))


def ratio_interval(numerators: np.ndarray, denominators: np.ndarray,
                   confidence: float = 0.95) -> tuple[float, float, float]:
    """A ratio of sums over independent units, with its normal-approximation interval.

    Points per round is such a ratio: each game (a unit) contributes its round
    points and its rounds, and rounds within one game are not independent. The
    standard error is the delta-method (linearisation) one,
    ``sqrt(sum((x - r * n)^2)) / sum(n)`` with ``r = sum(x) / sum(n)``.

    Returns:
        ``(ratio, low, high)``; NaNs when there is no unit (and the interval is NaN for one unit).
    """
    x = np.asarray(numerators, dtype=float)
    n = np.asarray(denominators, dtype=float)
    total = n.sum()
    if x.size == 0 or total <= 0:
        return math.nan, math.nan, math.nan
    r = float(x.sum() / total)
    if x.size < 2:
        return r, math.nan, math.nan
    resid = x - r * n
    se = math.sqrt(float((resid ** 2).sum()) * x.size / (x.size - 1)) / total
    z = NormalDist().inv_cdf(0.5 + confidence / 2)
    return r, r - z * se, r + z * se
