"""The result of an evaluation: :class:`EvalResult`, its JSON report, plot and summary."""

from __future__ import annotations

import math
import os
from dataclasses import dataclass, field

import numpy as np

from lama_env.rules import RulesConfig

from .outcomes import CONFIDENCE, AgentStats, GameOutcomes, save_figure

__all__ = ["EvalResult"]


@dataclass
class EvalResult:
    """The result of :func:`lama_dice.evaluation.evaluate.evaluate`.

    Attributes:
        players: seats per game.
        games: games played.
        seed: the seed used (pass it again to reproduce the result).
        agents: one :class:`~lama_dice.evaluation.outcomes.AgentStats` per agent, in the order given.
        rules: the rules played.
        backend: ``"python"`` or ``"fast"``.
        tied_games: games won jointly by two or more players.
        elapsed_s: wall-clock seconds (not part of :meth:`to_json`, which is deterministic).
        outcomes: the per-game arrays the statistics come from.
        saved_games: directory of saved game records, if any.
    """

    players: int
    games: int
    seed: int
    agents: list[AgentStats]
    rules: RulesConfig
    backend: str
    tied_games: int
    elapsed_s: float = 0.0
    outcomes: GameOutcomes | None = field(default=None, repr=False)
    saved_games: str | None = None

    @property
    def games_per_s(self) -> float:
        """Games played per wall-clock second."""
        return self.games / self.elapsed_s if self.elapsed_s > 0 else math.inf

    def to_json(self) -> dict:
        """The JSON report (same seed, same report, whatever the number of workers)."""
        out = {
            "players": self.players,
            "games": self.games,
            "seed": self.seed,
            "rules": self.rules.to_dict(),
            "backend": self.backend,
            "ci": "wilson",
            "confidence": CONFIDENCE,
            "tied_games": self.tied_games,
            "agents": [a.to_json() for a in self.agents],
        }
        if self.saved_games is not None:
            out["saved_games"] = self.saved_games
        return out

    def plot(self, path: str | os.PathLike) -> None:
        """Save a figure of each agent's win rate with its 95% Wilson interval."""
        from matplotlib.figure import Figure  # no pyplot: no GUI backend needed

        fig = Figure(figsize=(7, 1.2 + 0.5 * len(self.agents)), layout="constrained")
        ax = fig.subplots()
        y = np.arange(len(self.agents))[::-1]
        rates = [a.win_rate for a in self.agents]
        err = [[a.win_rate - a.win_rate_ci95[0] for a in self.agents],
               [a.win_rate_ci95[1] - a.win_rate for a in self.agents]]
        ax.errorbar(rates, y, xerr=err, fmt="o", capsize=4)
        if self.players > 1:
            ax.axvline(1.0 / self.players, color="grey", lw=0.8, ls="--")
        ax.set_yticks(y, [f"{i}: {a.spec}" for i, a in enumerate(self.agents)])
        ax.set_xlabel("win rate (95% Wilson interval; ties share the win)")
        ax.set_title(f"{self.players} players, {self.games} games, seed {self.seed}")
        save_figure(fig, path)

    def summary(self) -> str:
        """One line per agent, e.g. for logs."""
        return "\n".join(
            f"{a.spec}: win {a.win_rate:.3f} [{a.win_rate_ci95[0]:.3f}, {a.win_rate_ci95[1]:.3f}], "
            f"{a.mean_points_per_round:.2f} pts/round, {a.mean_final_points:.1f} final"
            for a in self.agents)
