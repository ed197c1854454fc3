"""Locating an illegal action: play a suite match again in one process, every move checked, and name the game."""

from __future__ import annotations

from collections import deque
from collections.abc import Sequence
from typing import Any

import numpy as np

from lama_dice.agents.base import Policy
from lama_dice.agents.registry import make_agent

from .evaluate import evaluate
from .seating import rotation_seating
from .suite_tasks import CHUNK_SIZE, Match, Task

__all__ = ["locate_illegal"]


class _IllegalActionError(Exception):
    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class _GameIndex:
    """Which game of the evaluation each engine game object is, for the scalar backend run in one process.

    The scalar backend (:mod:`lama_dice.evaluation.scalar`) reseeds every policy
    once at the start of each chunk (in chunk order, in one process), and the
    first move of every game of a chunk is asked of the agent in seat 0, one
    ``act_batch`` call per agent with its games in game order.  Should that
    ever change, the count check below fails and the game is reported unknown.
    """

    def __init__(self, seating: np.ndarray, chunk_size: int) -> None:
        self.seating = seating
        self.chunk_size = chunk_size
        self.chunk = -1
        self.index: dict[int, int] = {}
        self.keep: list[Any] = []  # the games seen, kept alive so that their ids stay unique
        self.first: dict[int, deque[int]] = {}
        self.ok = True

    def new_chunk(self) -> None:
        self.chunk += 1
        self.index.clear()
        self.keep.clear()
        start = self.chunk * self.chunk_size
        rows = self.seating[start:start + self.chunk_size]
        self.first = {}
        for k, row in enumerate(rows.tolist()):
            self.first.setdefault(row[0], deque()).append(start + k)

    def lookup(self, agent: int, games: Sequence[Any]) -> list[int | None]:
        new = [g for g in games if id(g) not in self.index]
        if new:
            queue = self.first.get(agent, deque())
            if len(new) != len(queue):
                self.ok = False
            else:
                for g in new:
                    self.index[id(g)] = queue.popleft()
                    self.keep.append(g)
        return [self.index.get(id(g)) if self.ok else None for g in games]


class _Watch(Policy):
    """A policy that checks its inner policy's actions and names the game of the first illegal one."""

    def __init__(self, inner: Policy, agent: int, games: _GameIndex, where: str) -> None:
        super().__init__()
        self.inner, self.agent, self.games, self.where = inner, agent, games, where
        self.spec = inner.spec

    def seed(self, seed: int | None) -> None:
        inner = getattr(self, "inner", None)
        if inner is None:  # Policy.__init__
            return super().seed(seed)
        if self.agent == 0:
            self.games.new_chunk()
        inner.seed(seed)

    def seed_decisions(self, salt: int | None) -> None:
        self.inner.seed_decisions(salt)

    def act_batch(self, games: Sequence[Any], legals: Sequence[Sequence[int]]) -> list[int]:
        index = self.games.lookup(self.agent, games)
        acts = self.inner.act_batch(games, legals)
        for k, (game, legal, a) in enumerate(zip(games, legals, acts, strict=False)):
            if a not in legal:
                which = f"game {index[k]}" if index[k] is not None else "a game"
                raise _IllegalActionError(
                    f"{self.where}, {which} (round {game.round_index + 1}, seat {game.current_player}): "
                    f"agent {self.spec!r} chose the illegal action {a!r} "
                    f"(legal: {', '.join(str(x) for x in legal)})")
        return list(acts)


def locate_illegal(agents: list[str | Policy], task: Task, match: Match, games: int, where: str) -> str | None:
    """Play the match again in this process with every move checked; the message naming the game, or None."""
    seating = rotation_seating(task.players, games)
    index = _GameIndex(seating, CHUNK_SIZE)
    watched = [_Watch(make_agent(a), i, index, where) for i, a in enumerate(agents)]
    try:
        evaluate(watched, num_players=task.players, games=games, seed=match.seed, workers=1, rules=task.rules,
                 backend="python", chunk_size=CHUNK_SIZE)
    except _IllegalActionError as e:
        return e.message
    return None
