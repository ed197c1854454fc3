"""The episode step (compiled by the vector kernel) and the scalar envs' one episode driver, :func:`advance`.

docs/environments.md, Rewards: One episode step; ``tests/test_architecture.py`` holds every env to them.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from . import actions as A
from .errors import LamaDiceError
from .rules import game_over, win_result

__all__ = ["CONTINUES", "TERMINATED", "TRUNCATED", "Episode", "advance", "episode_end", "forced", "illegal_move",
           "round_reward"]

#: :func:`episode_end`: the episode goes on (the next round is dealt).
CONTINUES = 0
#: :func:`episode_end`: the episode is over (the game is over, or ``episode="round"``).
TERMINATED = 1
#: :func:`episode_end`: the episode is cut after ``max_rounds`` rounds, the game still going.
TRUNCATED = 2


def episode_end(game_over: bool, rounds_done: int, episode_round: bool, max_rounds: int) -> int:
    """What the round that just ended does to the episode (``rounds_done``: it included; ``max_rounds`` 0: never)."""
    if game_over or episode_round:
        return TERMINATED
    if max_rounds > 0 and rounds_done >= max_rounds:
        return TRUNCATED
    return CONTINUES


def round_reward(points: bool, terminated: bool, totals: Any, start: Any, n: int, p: int) -> Any:
    """Seat ``p``'s reward for the round that just ended (``start``: the totals at its deal; docs: Rewards)."""
    if points:
        return -(totals[p] - start[p])
    if terminated:
        return win_result(totals, n, p)[1]
    return 0


class Episode:
    """The book of one episode of a :class:`~lama_env.engine.LamaGame`, kept by :func:`advance`.

    ``end``: :data:`CONTINUES` until the episode ends; ``rewards``: each seat's reward in the last :func:`advance`.
    """

    __slots__ = ("end", "episode_round", "max_rounds", "n", "points", "rewards", "rounds", "rules", "start")

    def __init__(self, game: Any, reward: str, episode: str, max_rounds: int | None) -> None:
        """Open the book of ``game``'s episode under the env's options (``max_rounds`` None: never cut)."""
        self.points = reward == "points"
        self.episode_round = episode == "round"
        self.max_rounds = max_rounds or 0
        self.rules = game.rules
        self.n = n = game.num_players
        self.rounds = game.rounds_finished
        self.start = game.totals
        self.end = CONTINUES
        self.rewards: list[Any] = [0] * n


def forced(seat: int, legal: tuple[int, ...]) -> int | None:
    """An ``act`` for :func:`advance`: apply every forced decision (one legal action), stop at any other."""
    return legal[0] if len(legal) == 1 else None


def advance(game: Any, book: Episode, act: Callable[[int, tuple[int, ...]], int | None] | None = None,
            blame: Callable[[int, Exception], Exception] | None = None) -> int:
    """Play ``game`` on until a decision is left to the env's caller or the episode ends; the rounds that ended.

    Each round's end is settled into ``book``; ``act(seat, legal)`` gives an action, or None to stop (``act=None``:
    stop at once); an illegal action raises ``IllegalActionError``, or ``blame(seat, error)`` if given.
    """
    n = book.n
    rewards = book.rewards = [0] * n
    ended = 0
    while True:
        if game.rounds_finished != book.rounds:  # a round ended (and the next, if any, is dealt)
            book.rounds += 1
            ended += 1
            totals = game.totals
            end = episode_end(game_over(totals, book.rules), game.rounds_finished, book.episode_round,
                              book.max_rounds)
            points, terminated, start = book.points, end == TERMINATED, book.start
            for p in range(n):
                rewards[p] += round_reward(points, terminated, totals, start, n, p)
            if end != CONTINUES:
                book.end = end
                return ended
            book.start = totals
            continue
        if act is None:
            return ended
        p = game.current_player
        a = act(p, game.legal_actions())
        if a is None:
            return ended
        try:
            game.step(a)
        except LamaDiceError as e:  # the engine's IllegalActionError; the game is unchanged
            if blame is None:
                raise
            raise blame(p, e) from None


def illegal_move(action: Any, who: str, legal: Sequence[int]) -> str:
    """``"illegal action A (what A is) by WHO; legal: ..."``: how the envs report an illegal move."""
    try:
        name = A.describe(int(action))
    except (TypeError, ValueError):
        name = "not an action"
    return f"illegal action {action!r} ({name}) by {who}; legal: {', '.join(A.describe(a) for a in legal)}"
