"""What games produce and what is computed from it: per-game outcomes and per-agent statistics.

Every backend (:mod:`lama_dice.evaluation.backends`) returns a :class:`GameOutcomes`
(per-game arrays, by seat); :func:`agent_stats` turns it into one
:class:`AgentStats` per agent.  This is the one place the reported statistics
are computed (the pure math is in :mod:`lama_dice.evaluation.stats`).
"""

from __future__ import annotations

import math
import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from lama_dice.atomic import atomic_path
from lama_env.errors import LamaDiceError

from .stats import fractional_ranks, mean_se, ratio_interval, wilson_interval, win_shares

__all__ = ["CONFIDENCE", "AgentStats", "EvaluationError", "GameOutcomes", "agent_stats", "save_figure"]

#: Confidence level of the reported intervals.
CONFIDENCE = 0.95


class EvaluationError(LamaDiceError, ValueError):
    """Bad evaluation arguments (agents, player count, game count, workers, output paths)."""


def save_figure(fig: Any, path: str | os.PathLike) -> None:
    """Save a matplotlib figure of an evaluation to ``path`` atomically (:func:`lama_dice.atomic.atomic_path`).

    Raises:
        EvaluationError: it cannot be written (one line; the old file, if any, is kept) or the format is unknown.
    """
    try:
        with atomic_path(path, error=EvaluationError) as tmp:
            fig.savefig(tmp)
    except ValueError as e:
        raise EvaluationError(f"cannot save the plot to {path}: {e}") from None


@dataclass
class GameOutcomes:
    """What a backend returns: the outcome of each game, by seat.

    All arrays are ``int64``; ``G`` games, ``N`` seats.

    Attributes:
        seating: ``[G, N]`` agent index (into the list of agents) at each seat.
        totals: ``[G, N]`` final totals (chips) by seat.
        round_points: ``[G, N]`` sum over the game's rounds of the points scored by seat.
        rounds: ``[G]`` rounds played.
        busts: ``[G, N]`` rounds in which the seat busted (None if not tracked).
        quits: ``[G, N]`` rounds in which the seat quit (None if not tracked).
        went_out: ``[G, N]`` rounds in which the seat went out (None if not tracked).
    """

    seating: np.ndarray
    totals: np.ndarray
    round_points: np.ndarray
    rounds: np.ndarray
    busts: np.ndarray | None = None
    quits: np.ndarray | None = None
    went_out: np.ndarray | None = None

    _OPTIONAL: ClassVar[tuple[str, ...]] = ("busts", "quits", "went_out")

    @property
    def num_games(self) -> int:
        """``G``, the number of games."""
        return int(self.seating.shape[0])

    @property
    def num_players(self) -> int:
        """``N``, the number of seats."""
        return int(self.seating.shape[1])

    def validate(self, num_games: int | None = None, num_players: int | None = None,
                 num_agents: int | None = None) -> GameOutcomes:
        """Check shapes and values (raises ``ValueError``); return self with arrays as ``int64``."""
        for name in ("seating", "totals", "round_points", "rounds", *self._OPTIONAL):
            v = getattr(self, name)
            if v is not None:
                setattr(self, name, np.asarray(v, dtype=np.int64))
        g, n = self.seating.shape if self.seating.ndim == 2 else (-1, -1)
        if g < 0:
            raise ValueError(f"seating must be a [G, N] array, got shape {self.seating.shape}")
        if num_games is not None and g != num_games:
            raise ValueError(f"expected {num_games} games, got {g}")
        if num_players is not None and n != num_players:
            raise ValueError(f"expected {num_players} seats, got {n}")
        for name in ("totals", "round_points", *self._OPTIONAL):
            v = getattr(self, name)
            if v is not None and v.shape != (g, n):
                raise ValueError(f"{name} must have shape {(g, n)}, got {v.shape}")
        if self.rounds.shape != (g,):
            raise ValueError(f"rounds must have shape {(g,)}, got {self.rounds.shape}")
        if g and (self.totals.min() < 0 or self.round_points.min() < 0 or self.rounds.min() < 1):
            raise ValueError("totals and round points must be >= 0 and every game must have a round")
        if num_agents is not None and g and (self.seating.min() < 0 or self.seating.max() >= num_agents):
            raise ValueError(f"seating must index {num_agents} agents")
        return self

    @classmethod
    def concat(cls, parts: Sequence[GameOutcomes]) -> GameOutcomes:
        """Join outcomes of consecutive game ranges (optional arrays kept only if every part has them)."""
        if not parts:
            raise ValueError("nothing to concatenate")
        kw: dict[str, Any] = {}
        for name in ("seating", "totals", "round_points", "rounds", *cls._OPTIONAL):
            vals = [getattr(p, name) for p in parts]
            kw[name] = None if any(v is None for v in vals) else np.concatenate(vals)
        return cls(**kw)

    def select(self, games: np.ndarray) -> GameOutcomes:
        """The outcomes of the games at indices (or mask) ``games``."""
        kw: dict[str, Any] = {name: (None if getattr(self, name) is None else getattr(self, name)[games])
                              for name in ("seating", "totals", "round_points", "rounds", *self._OPTIONAL)}
        return GameOutcomes(**kw)


@dataclass
class AgentStats:
    """One agent's results.

    Attributes:
        spec: the agent's spec (or its policy's ``spec`` attribute).
        games: games the agent played.
        wins: sum of win shares (a win shared by ``k`` players counts ``1/k``).
        win_rate: ``wins / games``.
        win_rate_ci95: 95% Wilson interval of the win rate.
        mean_points_per_round: total round points / rounds played (chips returned do not count).
        points_per_round_ci95: its 95% interval (games as independent units:
            :func:`lama_dice.evaluation.stats.ratio_interval`).
        mean_final_points: mean final total (chips returned included).
        final_points_se: standard error of ``mean_final_points``.
        mean_rank: mean place (1 = fewest points; tied players share the mean of their places);
            None for fewer than three players.
        games_by_seat: games played in each seat.
        rounds: rounds played.
        bust_rate, quit_rate, went_out_rate: fraction of rounds in which the agent busted,
            quit, went out (None if the backend does not track them).
    """

    spec: str
    games: int
    wins: float
    win_rate: float
    win_rate_ci95: tuple[float, float]
    mean_points_per_round: float
    mean_final_points: float
    final_points_se: float
    mean_rank: float | None
    games_by_seat: list[int]
    rounds: int
    bust_rate: float | None = None
    quit_rate: float | None = None
    went_out_rate: float | None = None
    points_per_round_ci95: tuple[float, float] = (math.nan, math.nan)

    def to_json(self) -> dict:
        """A JSON-ready dict (``mean_rank`` only when defined; NaN becomes null)."""
        lo, hi = self.points_per_round_ci95
        out: dict[str, Any] = {
            "spec": self.spec,
            "games": self.games,
            "wins": self.wins,
            "win_rate": self.win_rate,
            "win_rate_ci95": [self.win_rate_ci95[0], self.win_rate_ci95[1]],
            "mean_points_per_round": self.mean_points_per_round,
            "points_per_round_ci95": [_nan_none(lo), _nan_none(hi)],
            "mean_final_points": self.mean_final_points,
            "final_points_se": self.final_points_se,
        }
        if self.mean_rank is not None:
            out["mean_rank"] = self.mean_rank
        out["games_by_seat"] = list(self.games_by_seat)
        out["rounds"] = self.rounds
        for name in ("bust_rate", "quit_rate", "went_out_rate"):
            if getattr(self, name) is not None:
                out[name] = getattr(self, name)
        return {k: (None if isinstance(v, float) and math.isnan(v) else v) for k, v in out.items()}


def _nan_none(x: float) -> float | None:
    return None if math.isnan(x) else x


def agent_stats(outcomes: GameOutcomes, specs: Sequence[str]) -> list[AgentStats]:
    """Per-agent statistics of ``outcomes`` (agent ``a`` = ``specs[a]``), in the order of ``specs``.

    An agent that played no game gets NaN means and the interval ``(0, 1)``.
    """
    seating, totals = outcomes.seating, outcomes.totals
    n = outcomes.num_players
    shares = win_shares(totals) if len(totals) else np.zeros_like(totals, dtype=float)
    ranks = fractional_ranks(totals) if n > 2 and len(totals) else None
    rounds_by_seat = np.broadcast_to(outcomes.rounds[:, None], seating.shape)
    out = []
    for a, spec in enumerate(specs):
        mask = seating == a
        games = int(mask.sum())
        if np.any(mask.sum(axis=1) > 1):
            raise ValueError(f"agent {a} sits in two seats of one game")
        rounds = int(rounds_by_seat[mask].sum())
        wins = float(shares[mask].sum())
        mean_final, se_final = mean_se(totals[mask])
        rate = wins / games if games else math.nan
        _, ppr_lo, ppr_hi = ratio_interval(outcomes.round_points[mask], rounds_by_seat[mask], CONFIDENCE)
        out.append(AgentStats(
            spec=str(spec),
            games=games,
            wins=wins,
            win_rate=rate,
            win_rate_ci95=wilson_interval(min(wins, games), games, CONFIDENCE),
            mean_points_per_round=float(outcomes.round_points[mask].sum()) / rounds if rounds else math.nan,
            mean_final_points=mean_final,
            final_points_se=se_final,
            mean_rank=(float(ranks[mask].mean()) if games else math.nan) if ranks is not None else None,
            games_by_seat=[int(x) for x in mask.sum(axis=0)],
            rounds=rounds,
            bust_rate=_rate_of(outcomes.busts, mask, rounds),
            quit_rate=_rate_of(outcomes.quits, mask, rounds),
            went_out_rate=_rate_of(outcomes.went_out, mask, rounds),
            points_per_round_ci95=(ppr_lo, ppr_hi),
        ))
    return out


def _rate_of(counts: np.ndarray | None, mask: np.ndarray, rounds: int) -> float | None:
    """Share of the ``rounds`` rounds counted in ``counts[mask]`` (None if not tracked, NaN if no round)."""
    if counts is None:
        return None
    return float(counts[mask].sum()) / rounds if rounds else math.nan
