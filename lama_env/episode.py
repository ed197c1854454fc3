"""The episode step and the one episode driver: what the end of a round does to an episode, for every environment.

When a round ends, an env (:class:`~lama_env.gym_env.LamaDiceEnv`, the PettingZoo AEC env
:mod:`lama_env.lama_dice_v1`, :class:`~lama_env.vector.VectorGame` and the Gymnasium vector env
over it) asks two functions here what follows:

* :func:`episode_end`: whether the episode goes on (:data:`CONTINUES`, the next round is
  dealt), is over (:data:`TERMINATED`: the game is over, or ``episode="round"``) or is cut
  (:data:`TRUNCATED`: ``max_rounds`` rounds were played);
* :func:`round_reward`: what each seat gets for the round (``reward="points"``: minus the
  points it took in the round; ``reward="win"``: the zero-sum win rewards of
  :func:`lama_env.rules.win_result` when the episode terminates, else nothing).

The functions are pure and take numbers (and a sequence or array of totals), so that the
compiled vector kernel compiles this very text (``lama_env._vector_kernel.episode_end`` and
``round_reward``, called by its ``_end_round``), as it compiles the win rule.

The two scalar envs advance an episode through one driver, :func:`advance`: it plays a
:class:`~lama_env.engine.LamaGame` on from a step, through the round ends (each seat's reward,
the episode's end; the engine has dealt the next round already), applying what the env's
``act(seat, legal)`` returns (the Gymnasium env's opponents and forced decisions, the AEC env's
forced decisions) until ``act`` leaves a decision to the env's caller or the episode ends.  An
:class:`Episode` keeps its book (the rounds seen, the totals at the round's start, how the
episode ended, the rewards of the rounds the last call saw end).  Each env then does what its API
asks (its observation, info and statistics, or the rewards and flags of every agent).

``tests/test_architecture.py`` fails when another function decides an episode's end from
``max_rounds`` or the game's end, and when another function of ``lama_env`` loops over a game's
round ends (reads ``rounds_finished`` in a loop).
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

from .errors import LamaDiceError
from .rules import RulesConfig, game_over, win_result

__all__ = ["CONTINUES", "TERMINATED", "TRUNCATED", "Episode", "EpisodeGame", "advance", "episode_end", "forced",
           "round_reward"]

#: :func:`episode_end`: the episode goes on (the next round is dealt).
CONTINUES = 0
#: :func:`episode_end`: the episode is over (the game is over, or ``episode="round"``).
TERMINATED = 1
#: :func:`episode_end`: the episode is cut after ``max_rounds`` rounds, the game still going.
TRUNCATED = 2


def episode_end(game_over: bool, rounds_done: int, episode_round: bool, max_rounds: int) -> int:
    """What the round that just ended does to the episode: :data:`CONTINUES`, :data:`TERMINATED` or :data:`TRUNCATED`.

    Args:
        game_over: the round ended the game (a total reached ``end_threshold``).
        rounds_done: the rounds finished in the episode, this one included.
        episode_round: the env's ``episode="round"`` (every round ends its episode).
        max_rounds: the env's ``max_rounds``; 0 for None (never cut).
    """
    if game_over or episode_round:
        return TERMINATED
    if max_rounds > 0 and rounds_done >= max_rounds:
        return TRUNCATED
    return CONTINUES


def round_reward(points: bool, terminated: bool, totals: Any, start: Any, n: int, p: int) -> Any:
    """Seat ``p``'s reward for the round that just ended (the rewards table of ``docs/environments.md``).

    Args:
        points: the env's ``reward="points"`` (else ``"win"``).
        terminated: :func:`episode_end` said :data:`TERMINATED`.
        totals: the seats' chip totals after the round (a sequence or an array, ``n`` long).
        start: the seats' totals when the round was dealt.
        n: the player count.
        p: the seat.

    Returns:
        ``"points"``: minus the change of ``p``'s total over the round (an int for int totals);
        ``"win"``: ``p``'s zero-sum win reward (:func:`lama_env.rules.win_result`, a float) when
        the episode terminated, else 0.
    """
    if points:
        return -(totals[p] - start[p])
    if terminated:
        return win_result(totals, n, p)[1]
    return 0


class EpisodeGame(Protocol):
    """What :class:`Episode` and :func:`advance` use of a :class:`lama_env.engine.LamaGame`.

    (A protocol, not the engine's class: the engine's compiled kernels import this module.)
    """

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
    """The book of one episode of a :class:`~lama_env.engine.LamaGame`, kept by :func:`advance`.

    Args:
        game: the episode's game, as dealt (no round finished in the episode yet).
        reward: the env's ``reward`` (``"win"`` or ``"points"``).
        episode: the env's ``episode`` (``"game"`` or ``"round"``).
        max_rounds: the env's ``max_rounds`` (None: never cut).

    Attributes:
        rounds: the game's ``rounds_finished`` when :func:`advance` last looked (a step that
            ends a round makes the game's count differ: the env calls :func:`advance`).
        start: the seats' totals when the current round was dealt.
        end: :data:`CONTINUES` until the episode ends, then :data:`TERMINATED` or :data:`TRUNCATED`.
        rewards: each seat's reward (:func:`round_reward`) for the rounds that ended in the last
            call of :func:`advance` (zeros when none did).
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
    """Play ``game`` on until a decision is left to the env's caller or the episode ends.

    The one episode loop of the scalar envs, called after a step (and after the deal): each round
    that ended since ``book`` last looked is settled (:func:`episode_end`, each seat's
    :func:`round_reward` added to ``book.rewards``, ``book.end`` set when the episode is over, else
    the next round's start totals noted); at each decision, ``act(seat, legal)`` returns the action
    to apply, or None to stop there (``act=None``: stop at every decision).

    Args:
        game: the episode's game.
        book: its :class:`Episode`.
        act: who plays on (an env's opponents, its forced decisions: :func:`forced`).
        blame: ``blame(seat, error)`` is raised in place of the engine's error when the action
            ``act`` returned for ``seat`` is illegal (the Gymnasium env names the opponent);
            None: the error as it is.

    Returns:
        The number of rounds that ended (0: ``book.rewards`` are zeros).

    Raises:
        lama_env.engine.IllegalActionError: an action ``act`` returned is illegal (or ``blame``'s error).
    """
    n = book.n
    rewards = book.rewards = [0] * n
    ended = 0
    while True:
        if game.rounds_finished != book.rounds:  # the last step ended a round (and dealt the next, if any)
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
