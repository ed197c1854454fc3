"""The episode step and the one episode driver of every env (docs/environments.md, Rewards: One episode step).

* :func:`episode_end`: what a round's end does to the episode (:data:`CONTINUES`, :data:`TERMINATED`,
  :data:`TRUNCATED`); :func:`round_reward`: each seat's reward for the round.  Pure functions of
  numbers, compiled as they are by the vector kernel (``lama_env._vector_kernel``).
* :func:`advance`: the scalar envs' one loop over a :class:`~lama_env.engine.LamaGame`'s round ends and
  the moves of the env's ``act(seat, legal)`` (opponents, forced decisions), keeping an :class:`Episode`
  book.  ``tests/test_architecture.py`` fails when another function decides an episode's end or loops
  over a game's round ends.
* :func:`illegal_move`: how the envs word an illegal move.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Protocol

from . import actions as A
from .errors import LamaDiceError
from .rules import RulesConfig, game_over, win_result

__all__ = ["CONTINUES", "TERMINATED", "TRUNCATED", "Episode", "EpisodeGame", "advance", "episode_end", "forced",
           "illegal_move", "round_reward"]

#: :func:`episode_end`: the episode goes on (the next round is dealt).
CONTINUES = 0
#: :func:`episode_end`: the episode is over (the game is over, or ``episode="round"``).
TERMINATED = 1
#: :func:`episode_end`: the episode is cut after ``max_rounds`` rounds, the game still going.
TRUNCATED = 2


def episode_end(game_over: bool, rounds_done: int, episode_round: bool, max_rounds: int) -> int:
    """What the round that just ended does to the episode: :data:`CONTINUES`, :data:`TERMINATED` or :data:`TRUNCATED`.

    ``game_over``: a total reached ``end_threshold``; ``rounds_done``: the episode's finished rounds, this one
    included; ``episode_round``: ``episode="round"``; ``max_rounds``: 0 for None (never cut).
    """
    if game_over or episode_round:
        return TERMINATED
    if max_rounds > 0 and rounds_done >= max_rounds:
        return TRUNCATED
    return CONTINUES


def round_reward(points: bool, terminated: bool, totals: Any, start: Any, n: int, p: int) -> Any:
    """Seat ``p``'s reward for the round that just ended (the rewards table of ``docs/environments.md``).

    ``points``: ``reward="points"`` (else ``"win"``); ``terminated``: :func:`episode_end` said :data:`TERMINATED`;
    ``totals``/``start``: the ``n`` seats' totals after the round / when it was dealt (sequences or arrays).
    Returns minus the change of ``p``'s total (``"points"``; an int for int totals), else ``p``'s zero-sum win
    reward (:func:`lama_env.rules.win_result`, a float) when terminated, else 0.
    """
    if points:
        return -(totals[p] - start[p])
    if terminated:
        return win_result(totals, n, p)[1]
    return 0


class EpisodeGame(Protocol):
    """What :class:`Episode` and :func:`advance` use of a :class:`lama_env.engine.LamaGame` (kernels import this)."""

    @property
    def rules(self) -> RulesConfig:
        """The game's rules."""

    @property
    def num_players(self) -> int:
        """The player count."""

    @property
    def rounds_finished(self) -> int:
        """How many rounds have ended (a step ended one when this grows)."""

    @property
    def totals(self) -> tuple[int, ...]:
        """The seats' chip totals."""

    @property
    def current_player(self) -> int:
        """Whose decision it is."""

    def legal_actions(self) -> tuple[int, ...]:
        """The current player's legal actions."""

    def step(self, action: int) -> None:
        """Apply ``action`` for the current player (an illegal one raises, changing nothing)."""


class Episode:
    """The book of one episode of ``game`` (as dealt), kept by :func:`advance`.

    ``reward``, ``episode``, ``max_rounds``: the env's options (``max_rounds`` None: never cut).

    Attributes:
        rounds: the game's ``rounds_finished`` when :func:`advance` last looked.
        start: the seats' totals when the current round was dealt.
        end: :data:`CONTINUES` until the episode ends, then :data:`TERMINATED` or :data:`TRUNCATED`.
        rewards: each seat's :func:`round_reward` for the rounds that ended in the last :func:`advance` call.
    """

    __slots__ = ("end", "episode_round", "max_rounds", "n", "points", "rewards", "rounds", "rules", "start")

    def __init__(self, game: EpisodeGame, reward: str, episode: str, max_rounds: int | None) -> None:
        """Open the book of ``game``'s episode (see the class docstring)."""
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


def advance(game: EpisodeGame, book: Episode, act: Callable[[int, tuple[int, ...]], int | None] | None = None,
            blame: Callable[[int, Exception], Exception] | None = None) -> int:
    """Play ``game`` on until a decision is left to the env's caller or the episode ends; the rounds that ended.

    Each round that ended since ``book`` last looked is settled (:func:`episode_end`, :func:`round_reward`
    into ``book.rewards``, ``book.end``); at each decision ``act(seat, legal)`` gives the action, or None to
    stop (``act=None``: stop at every decision; :func:`forced`: apply forced ones).  An illegal action
    raises the engine's :class:`~lama_env.engine.IllegalActionError`, or ``blame(seat, error)`` if given.
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
