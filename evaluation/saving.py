"""Saving the games of an evaluation or league (``save_games=DIR``).

``DIR/game_NNNNNN.json`` are ``lama-dice-record/1`` records (replay them with
``lama-dice replay``) and ``DIR/index.json`` says who sat where and how each
saved game ended.  A folder holds one run's games: one that holds saved games
already (``game_*.json`` or ``index.json``) is refused before anything is
played.  Only the scalar backend records games, so saving games always plays
them there.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from lama_dice.atomic import write_text
from lama_env.rules import RulesConfig, winners

from .outcomes import EvaluationError, GameOutcomes

__all__ = ["INDEX_FILE", "GameSaver", "sample_games"]

#: Name of the saved-games index file.
INDEX_FILE = "index.json"

# SeedSequence spawn key of the saved sample (0, 1: the scalar backend's games and policies;
# 3: league lineups).
_KEY_SAMPLE = 2


def sample_games(games: int, sample: int | None, seed: int) -> frozenset[int]:
    """The indices of the games to save: all of them, or ``sample`` drawn at random from ``seed``."""
    if sample is None or sample >= games:
        return frozenset(range(games))
    rng = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(_KEY_SAMPLE,)))
    return frozenset(int(i) for i in rng.choice(games, size=sample, replace=False))


class GameSaver:
    """Writes the recorded games to ``DIR/game_NNNNNN.json`` as they arrive, then ``DIR/index.json``."""

    def __init__(self, directory: str | os.PathLike, games: int) -> None:
        """Create ``directory`` if need be; refuse one that holds saved games already.

        Args:
            directory: where to save.
            games: the number of games played (sets the width of the file numbers).
        """
        self.dir = Path(directory)
        self.width = max(6, len(str(games - 1)))
        earlier = [*sorted(p.name for p in self.dir.glob("game_*.json"))[:1],
                   *([INDEX_FILE] if (self.dir / INDEX_FILE).exists() else [])]
        if earlier:  # one run's games a folder: never the new ones beside an earlier run's, unindexed
            raise EvaluationError(f"cannot save games in {self.dir}: it holds saved games already ({', '.join(earlier)}"
                                  "...); give a new or empty folder")
        try:
            self.dir.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise EvaluationError(f"cannot create {self.dir}: {e.strerror or e}") from None
        self.saved: list[int] = []

    def name(self, game: int) -> str:
        """The file name of game ``game``."""
        return f"game_{game:0{self.width}d}.json"

    def save(self, game: int, record: dict) -> None:
        """Write the record of game ``game``."""
        path = self.dir / self.name(game)
        write_text(path, json.dumps(record) + "\n", error=EvaluationError)
        self.saved.append(game)

    def write_index(self, specs: Sequence[str], outcomes: GameOutcomes, seed: int, rules: RulesConfig) -> Path:
        """Write ``index.json``: for each saved game, who sat where and the final totals."""
        entries = []
        for i in sorted(self.saved):
            seats = outcomes.seating[i].tolist()
            totals = outcomes.totals[i].tolist()
            entries.append({"game": i, "file": self.name(i), "agents": seats,
                            "seats": [specs[a] for a in seats], "totals": totals,
                            "winners": winners(totals), "rounds": int(outcomes.rounds[i])})
        head = {"players": outcomes.num_players, "games": outcomes.num_games, "seed": seed,
                "rules": rules.to_dict(), "agents": list(specs)}
        # one line per saved game, so that the index reads (and greps) well
        lines = ",\n".join("  " + json.dumps(e) for e in entries)
        text = json.dumps(head, indent=1)[:-2] + ',\n "saved": [\n' + lines + "\n ]\n}\n"
        path = self.dir / INDEX_FILE
        write_text(path, text, error=EvaluationError)
        return path
