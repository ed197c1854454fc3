"""The results of a suite run: measures, match, task and suite results, and the measures of a task.

See :mod:`lama_dice.evaluation.suite` (the runner) for how they are made.
"""

from __future__ import annotations

import math
import platform
import sys
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from lama_env import __version__

from .outcomes import CONFIDENCE
from .report import EvalResult
from .stats import fractional_ranks, mean_se, wilson_interval, z_value
from .suite_commands import score_command
from .suite_tasks import CHUNK_SIZE, LATEST, Match, Task, normalize, suite_of

__all__ = ["MatchResult", "Measure", "SuiteResult", "TaskResult", "environment", "solo_measures", "table_measures"]


@dataclass
class Measure:
    """One number of the score card, with its 95% interval.

    Attributes:
        name: what it is (``"normalized score"``, ``"win rate vs optimal"``).
        value: the estimate.
        ci95: its 95% interval.
        games: the games it is measured over.
        percent: whether it is a share (shown as a percentage).
        interval: how the interval is computed.
    """

    name: str
    value: float
    ci95: tuple[float, float]
    games: int
    percent: bool = False
    interval: str = ""

    def __post_init__(self) -> None:
        """Store plain floats (not NumPy scalars)."""
        self.value = float(self.value)
        self.ci95 = (float(self.ci95[0]), float(self.ci95[1]))

    def to_json(self) -> dict:
        """A JSON-ready dict (NaN becomes null)."""
        def f(x: float) -> float | None:
            return None if math.isnan(x) else x
        return {"name": self.name, "value": f(self.value), "ci95": [f(self.ci95[0]), f(self.ci95[1])],
                "games": self.games, "percent": self.percent, "interval": self.interval}


@dataclass
class MatchResult:
    """One match's evaluation (agent 0 is the agent scored)."""

    match: Match
    result: EvalResult
    evaluate_command: str


@dataclass
class TaskResult:
    """A task's results: its measures (the first is the headline) and its matches."""

    task: Task
    games: int
    measures: list[Measure]
    matches: list[MatchResult]
    elapsed_s: float
    #: the ``exploit`` task's report (the responders, their seeds, budget, config and versions)
    details: dict[str, Any] | None = None

    @property
    def headline(self) -> Measure:
        """The task's headline number."""
        return self.measures[0]

    def to_json(self) -> dict:
        """The task's JSON report (deterministic except ``elapsed_s``)."""
        t = self.task
        out: dict[str, Any] = {
            "name": t.name, "kind": t.kind, "players": t.players, "generalization": t.generalization,
            "about": t.about, "rules": t.rules.to_dict(include_dice=True), "games_per_match": self.games,
        }
        if t.normalization is not None:
            out["normalization"] = {"random": t.normalization[0], "optimal": t.normalization[1],
                                    "what": "exact expected solo round points from a fresh deal "
                                            "(lama_dice.agents.solo_random, lama_dice.agents.solver)"}
        out["headline"] = self.headline.to_json()
        out["measures"] = [m.to_json() for m in self.measures]
        out["matches"] = [{"label": m.match.label, "seed": m.match.seed, "games": m.result.games,
                           "agents": [a.spec for a in m.result.agents], "backend": m.result.backend,
                           "chunk_size": CHUNK_SIZE, "evaluate_command": m.evaluate_command,
                           "elapsed_s": round(m.result.elapsed_s, 3), "result": m.result.to_json()}
                          for m in self.matches]
        if self.details is not None:
            out["exploit"] = self.details
        out["elapsed_s"] = round(self.elapsed_s, 3)
        return out


@dataclass
class SuiteResult:
    """A score card: the agent's results on the tasks played."""

    agent: str
    tasks: list[TaskResult]
    official: bool
    games_override: int | None
    elapsed_s: float
    workers: int = 1
    #: tasks of the suite the agent cannot play (a network trained for another player count), with why
    skipped: dict[str, str] = field(default_factory=dict)
    #: the suite's number (``--suite``): 3, the only one (1 and 2 are retired)
    suite: int = LATEST

    def to_json(self) -> dict:
        """The JSON report: suite version, package version, rules, seeds and every evaluation's report."""
        return {
            "suite": suite_of(self.suite).version,
            "package": "lama-dice",
            "package_version": __version__,
            "agent": self.agent,
            "official": self.official,
            "games_override": self.games_override,
            "confidence": CONFIDENCE,
            "chunk_size": CHUNK_SIZE,
            "rerun": score_command(self.agent, [t.task.name for t in self.tasks], self.games_override,
                                   all_playable=bool(self.skipped), suite=self.suite),
            "tasks": [t.to_json() for t in self.tasks],
            "skipped": [{"task": k, "reason": v} for k, v in self.skipped.items()],
            "elapsed_s": round(self.elapsed_s, 3),
            "workers": self.workers,
            "environment": environment(),
        }


def environment() -> dict[str, str]:
    """Versions and machine (not part of the result: the same seeds give the same numbers anywhere)."""
    out = {"python": platform.python_version(), "numpy": np.__version__,
           "platform": f"{platform.system()} {platform.machine()}"}
    for mod in ("numba", "torch", "stable_baselines3", "sb3_contrib"):
        m = sys.modules.get(mod)
        if m is not None:
            out[mod] = str(getattr(m, "__version__", "?"))
    return out


def solo_measures(task: Task, res: EvalResult) -> list[Measure]:
    """A solo task's measures: the normalized score (its headline), then points per round."""
    assert task.normalization is not None
    rnd, opt = task.normalization
    a = res.agents[0]
    lo, hi = a.points_per_round_ci95
    n = a.games
    return [
        Measure("normalized score", normalize(a.mean_points_per_round, rnd, opt),
                (normalize(hi, rnd, opt), normalize(lo, rnd, opt)), n,
                interval=f"points-per-round interval mapped (0 = random {rnd:.4f}, 1 = optimal {opt:.4f})"),
        Measure("points per round", a.mean_points_per_round, (lo, hi), n,
                interval="ratio of sums, games as units (delta method)"),
    ]


def table_measures(task: Task, results: list[tuple[Match, EvalResult]]) -> list[Measure]:
    """A table task's measures: the overall win rate (several matches), each match's, then mean places (N > 2)."""
    per = []
    wins = games = 0.0
    for match, res in results:
        a = res.agents[0]
        per.append(Measure(f"win rate {match.label}", a.win_rate, a.win_rate_ci95, a.games, percent=True,
                           interval="Wilson"))
        wins += a.wins
        games += a.games
    out: list[Measure] = []
    if len(per) > 1:
        rate = wins / games if games else math.nan
        out.append(Measure("win rate overall", rate, wilson_interval(min(wins, games), games, CONFIDENCE),
                           int(games), percent=True, interval="Wilson over all games (equal games per opponent)"))
    out += per
    if task.players > 2:
        for match, res in results:
            o = res.outcomes
            assert o is not None  # evaluate() always returns its outcomes
            ranks = fractional_ranks(o.totals)[o.seating == 0]
            m, se = mean_se(ranks)
            z = z_value(CONFIDENCE)
            out.append(Measure(f"mean place {match.label}", m, (m - z * se, m + z * se), len(ranks),
                               interval="normal (1 = best; ties share their places)"))
    return out

