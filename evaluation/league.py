"""A league: many agents, ratings with uncertainty (OpenSkill).

:func:`league` plays a schedule of games between a pool of agents and rates
them with OpenSkill's Plackett-Luce model (``mu`` and ``sigma`` per agent;
``ordinal = mu - 3 sigma`` is a conservative skill estimate)::

    from lama_dice.evaluation.league import league

    result = league(["random", "threshold:15", "threshold:25"], num_players=2, games=200)
    for e in result.ranking():
        print(e.spec, e.mu, e.sigma)

Schedules
---------
* ``num_players == 2``: a round-robin: every pair of agents plays ``games``
  games, alternating seats; the schedule is interleaved (round ``j`` plays
  every pair once) so that the sequential rating updates see all pairs evenly.
* ``num_players > 2``: ``games`` games in all, in blocks of ``num_players``:
  each block draws ``num_players`` distinct agents of the pool at random (from
  the seed) and plays every rotation of their seating, so each agent plays
  each seat equally often within a block.

The schedule is :func:`lama_dice.evaluation.seating.league_seating` (also importable
from here).  Games are played by :func:`lama_dice.evaluation.evaluate.run_games` (same batching,
workers, backends and determinism as :func:`lama_dice.evaluation.evaluate.evaluate`).  The
ratings are updated game by game in schedule order, so a result depends on
the seed only.  Each game ranks its players by final total (fewest points
first; tied players share a rank).
"""

from __future__ import annotations

import os
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from lama_env.rules import MAX_PLAYERS, RulesConfig

from .evaluate import (
    AgentLike,
    ProgressArg,
    build_policies,
    check_agents,
    check_int,
    check_save_args,
    evaluate,
    resolve_seed,
    run_games,
    spec_of,
)
from .outcomes import CONFIDENCE, AgentStats, EvaluationError, GameOutcomes, agent_stats, save_figure
from .saving import GameSaver, sample_games
from .scalar import DEFAULT_CHUNK_SIZE
from .seating import league_seating
from .stats import win_shares

__all__ = ["RATING_MODEL", "LeagueEntry", "LeagueResult", "SoloValue", "league", "league_seating", "solo_values"]

#: The OpenSkill model used for ratings.
RATING_MODEL = "PlackettLuce"


@dataclass
class LeagueEntry:
    """One agent of the league: its rating and its game statistics.

    Attributes:
        spec: the agent.
        mu: OpenSkill mean skill.
        sigma: OpenSkill uncertainty (standard deviation of the skill).
        ordinal: ``mu - 3 * sigma`` (what the table is sorted by).
        stats: win rate with its Wilson interval, points, etc. over the games it played.
    """

    spec: str
    mu: float
    sigma: float
    stats: AgentStats

    @property
    def ordinal(self) -> float:
        """``mu - 3 * sigma``: a conservative skill estimate."""
        return self.mu - 3.0 * self.sigma

    def to_json(self) -> dict:
        """A JSON-ready dict: the rating, then the statistics of :meth:`AgentStats.to_json`."""
        return {"spec": self.spec, "mu": self.mu, "sigma": self.sigma, "ordinal": self.ordinal,
                **{k: v for k, v in self.stats.to_json().items() if k != "spec"}}


@dataclass
class LeagueResult:
    """The result of :func:`league`.

    Attributes:
        players: seats per game.
        games: games played in all.
        seed: the seed used.
        entries: one :class:`LeagueEntry` per agent, in the order given.
        pairwise: for two players, ``pairwise[i][j]`` = agent i's win share against agent j (None on the diagonal).
        history_mu, history_sigma: ``[games + 1, agents]`` ratings after each game (row 0 = the prior).
        backend: ``"python"`` or ``"fast"``.
        elapsed_s: wall-clock seconds (not in :meth:`to_json`).
        outcomes: the per-game arrays.
    """

    players: int
    games: int
    seed: int
    entries: list[LeagueEntry]
    rules: RulesConfig
    backend: str
    pairwise: list[list[float | None]] | None = None
    history_mu: np.ndarray | None = field(default=None, repr=False)
    history_sigma: np.ndarray | None = field(default=None, repr=False)
    elapsed_s: float = 0.0
    outcomes: GameOutcomes | None = field(default=None, repr=False)
    saved_games: str | None = None
    #: each agent's solo value, in the order given (see :func:`solo_values`), when asked for
    solo: list[SoloValue] | None = None

    @property
    def games_per_s(self) -> float:
        """Games played per wall-clock second."""
        return self.games / self.elapsed_s if self.elapsed_s > 0 else float("inf")

    def ranking(self) -> list[LeagueEntry]:
        """Entries sorted by ordinal, best first."""
        return sorted(self.entries, key=lambda e: -e.ordinal)

    def to_json(self) -> dict:
        """The JSON report (same seed, same report, whatever the number of workers)."""
        out: dict[str, Any] = {
            "league": True,
            "players": self.players,
            "games": self.games,
            "seed": self.seed,
            "rules": self.rules.to_dict(),
            "backend": self.backend,
            "rating": {"system": "openskill", "model": RATING_MODEL, "ordinal": "mu - 3 sigma"},
            "ci": "wilson",
            "confidence": CONFIDENCE,
            "agents": [e.to_json() for e in self.entries],
        }
        if self.pairwise is not None:
            out["pairwise_win_rate"] = self.pairwise
        if self.saved_games is not None:
            out["saved_games"] = self.saved_games
        if self.solo is not None:
            out["solo_values"] = [v.to_json() for v in self.solo]
        return out

    def plot(self, path: str | os.PathLike) -> None:
        """Save :meth:`figure` to ``path``."""
        save_figure(self.figure(), path)

    def figure(self) -> Any:
        """A figure: rating (mu +- sigma) over the games, and the final mu with a 3-sigma bar.

        The agents are numbered as the command line's table numbers them: 1, 2, ... by
        :meth:`ranking` (1 = best), and listed in that order in the legend.
        """
        from matplotlib.figure import Figure  # no pyplot: no GUI backend needed

        rank = {id(e): r for r, e in enumerate(self.ranking(), 1)}
        labels = [f"{rank[id(e)]}: {e.spec}" for e in self.entries]
        fig = Figure(figsize=(11, 4.5), layout="constrained")
        ax1, ax2 = fig.subplots(1, 2, gridspec_kw={"width_ratios": [3, 2]})
        if self.history_mu is not None and self.history_sigma is not None:
            x = np.arange(len(self.history_mu))
            for a in sorted(range(len(labels)), key=lambda i: rank[id(self.entries[i])]):
                label = labels[a]
                mu, sd = self.history_mu[:, a], self.history_sigma[:, a]
                (line,) = ax1.plot(x, mu, label=label, lw=1.2)
                ax1.fill_between(x, mu - sd, mu + sd, color=line.get_color(), alpha=0.15, lw=0)
        ax1.set_xlabel("games")
        ax1.set_ylabel("OpenSkill mu (band: +- sigma)")
        ax1.set_title(f"{self.players}-player league, {self.games} games")
        ax1.legend(fontsize="small")
        order = sorted(range(len(self.entries)), key=lambda a: self.entries[a].ordinal)
        y = np.arange(len(order))
        ax2.errorbar([self.entries[a].mu for a in order], y, xerr=[3 * self.entries[a].sigma for a in order],
                     fmt="o", capsize=3)
        ax2.set_yticks(y, [labels[a] for a in order])
        ax2.set_xlabel("mu +- 3 sigma")
        ax2.set_title("final ratings")
        return fig


def _rate(outcomes: GameOutcomes, num_agents: int) -> tuple[np.ndarray, np.ndarray]:
    """OpenSkill ratings after each game, in order: ``(mu, sigma)`` of shape ``[G + 1, A]``."""
    from openskill.models import PlackettLuce

    model = PlackettLuce()
    ratings = [model.rating() for _ in range(num_agents)]
    g = outcomes.num_games
    mu = np.empty((g + 1, num_agents))
    sigma = np.empty((g + 1, num_agents))
    mu[0] = [r.mu for r in ratings]
    sigma[0] = [r.sigma for r in ratings]
    for i, (seats, totals) in enumerate(zip(outcomes.seating.tolist(), outcomes.totals.tolist(), strict=True)):
        # ranks: lower is better; equal totals tie (the players tied for fewest share the win)
        new = model.rate([[ratings[a]] for a in seats], ranks=[float(t) for t in totals])
        for a, team in zip(seats, new, strict=True):
            ratings[a] = team[0]
        mu[i + 1] = mu[i]
        sigma[i + 1] = sigma[i]
        for a in seats:
            mu[i + 1, a] = ratings[a].mu
            sigma[i + 1, a] = ratings[a].sigma
    return mu, sigma


def _pairwise(outcomes: GameOutcomes, num_agents: int) -> list[list[float | None]]:
    shares = win_shares(outcomes.totals)
    won = np.zeros((num_agents, num_agents))
    played = np.zeros((num_agents, num_agents))
    seats = outcomes.seating
    for s, t in ((0, 1), (1, 0)):
        np.add.at(won, (seats[:, s], seats[:, t]), shares[:, s])
        np.add.at(played, (seats[:, s], seats[:, t]), 1)
    return [[None if i == j or not played[i, j] else float(won[i, j] / played[i, j])
             for j in range(num_agents)] for i in range(num_agents)]


def league(
    agents: Sequence[AgentLike],
    num_players: int = 2,
    games: int = 100,
    seed: int | None = 0,
    workers: int = 1,
    rules: RulesConfig | dict | None = None,
    progress: ProgressArg = False,
    save_games: str | os.PathLike | None = None,
    backend: str = "auto",
    *,
    save_sample: int | None = None,
    chunk_size: int = DEFAULT_CHUNK_SIZE,
) -> LeagueResult:
    """Play a league between ``agents`` and rate them with OpenSkill.

    Args:
        agents: the pool: at least two agents (at least ``num_players`` for more than two players).
        num_players: seats per game (2..6).
        games: for two players, games per pair of agents; otherwise games in all.
        seed: seed of everything random (None: a fresh one, reported in the result).
        workers: processes to play in (1: this process; 0: all cores).  Does not change the result.
        rules: a :class:`~lama_env.rules.RulesConfig` or a mapping of its fields.
        progress: True for a progress bar on stderr, or a callback ``f(done, total)``.
        save_games: directory to save game records in (forces the scalar backend).
        backend: ``"auto"`` (the fast backend when it supports the agents), ``"python"`` or ``"fast"``.
        save_sample: save only this many games, chosen at random from the seed (default: all).
        chunk_size: games played in lockstep (and per worker task); part of what the result depends on
            only for an agent that draws from its own generator.

    Returns:
        A :class:`LeagueResult`.
    """
    agents = check_agents(agents)
    num_players = check_int("num_players", num_players, 2, MAX_PLAYERS)
    if len(agents) < max(2, num_players):
        raise EvaluationError(
            f"a {num_players}-player league needs at least {max(2, num_players)} agents, got {len(agents)}")
    games = check_int("games", games, 1)
    seed = resolve_seed(seed)
    rules = RulesConfig.from_dict(rules)
    save_sample = check_save_args(save_games, save_sample, backend)
    t0 = time.perf_counter()
    policies = build_policies(agents)
    specs = [spec_of(a, p) for a, p in zip(agents, policies, strict=True)]
    seating = league_seating(len(agents), num_players, games, seed)
    total = len(seating)
    saver = GameSaver(save_games, total) if save_games is not None else None
    record = sample_games(total, save_sample, seed) if saver is not None else frozenset()
    outcomes, used = run_games(agents, seating, num_players, rules, seed, workers=workers,
                               chunk_size=chunk_size, backend=backend, progress=progress,
                               record=record, on_record=saver.save if saver else None,
                               description="league", policies=policies)
    if saver is not None:
        saver.write_index(specs, outcomes, seed, rules)
    mu, sigma = _rate(outcomes, len(agents))
    stats = agent_stats(outcomes, specs)
    entries = [LeagueEntry(s, float(mu[-1, a]), float(sigma[-1, a]), st)
               for a, (s, st) in enumerate(zip(specs, stats, strict=True))]
    return LeagueResult(
        players=num_players, games=total, seed=seed, entries=entries, rules=rules, backend=used,
        pairwise=_pairwise(outcomes, len(agents)) if num_players == 2 else None,
        history_mu=mu, history_sigma=sigma, elapsed_s=time.perf_counter() - t0,
        outcomes=outcomes, saved_games=str(saver.dir) if saver else None,
    )


@dataclass
class SoloValue:
    """An agent's expected round points in the solo variant.

    ``exact`` values come from the solver (agents that are deterministic
    functions of the display: the heuristics and ``optimal``); the others are
    measured over solo games, with the standard error ``se`` of the mean
    round points (games' mean, so rounds of one game are not treated as
    independent).
    """

    spec: str
    value: float
    exact: bool
    se: float | None = None

    def to_json(self) -> dict:
        """A JSON-ready dict."""
        return {"spec": self.spec, "solo_points_per_round": self.value, "exact": self.exact, "se": self.se}


def solo_values(agents: Sequence[AgentLike], rules: RulesConfig | dict | None = None, games: int = 1000,
                seed: int | None = 0) -> list[SoloValue]:
    """Each agent's solo value: exact when the solver can evaluate its policy, else measured."""
    from lama_dice.agents.registry import make_agent
    from lama_dice.agents.solver import solver_for

    rules = RulesConfig.from_dict(rules)
    solver = solver_for(rules)
    out = []
    for a in agents:
        policy = make_agent(a, seed=seed)
        if hasattr(policy, "wants_quit") and hasattr(policy, "choose_discard"):  # a SoloPolicy
            out.append(SoloValue(policy.spec, solver.policy_value(policy), True))
        else:
            res = evaluate([policy], num_players=1, games=games, seed=seed, rules=rules)
            o = res.outcomes
            assert o is not None  # evaluate() always returns its outcomes
            per_game = o.round_points[:, 0] / np.maximum(o.rounds, 1)
            se = float(per_game.std(ddof=1) / np.sqrt(len(per_game))) if len(per_game) > 1 else None
            out.append(SoloValue(policy.spec, res.agents[0].mean_points_per_round, False, se))
    return out
