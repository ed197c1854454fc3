"""The episode step: what the end of a round does to an episode, for every environment.

When a round ends, an env (:class:`~lama_env.gym_env.LamaDiceEnv`, the PettingZoo AEC env
:mod:`lama_env.lama_dice_v1`, :class:`~lama_env.vector.VectorGame` and the Gymnasium vector env
over it) asks two functions here what follows:

* :func:`episode_end`: whether the episode goes on (:data:`CONTINUES`, the next round is
  dealt), is over (:data:`TERMINATED`: the game is over, or ``episode="round"``) or is cut
  (:data:`TRUNCATED`: ``max_rounds`` rounds were played);
* :func:`round_reward`: what each seat gets for the round (``reward="points"``: minus the
  points it took in the round; ``reward="win"``: the zero-sum win rewards of
  :func:`lama_env.rules.win_result` when the episode terminates, else nothing).

Each env then does what its API asks (the next deal, or the final observation and statistics,
and in the vector game a new game in the slot).  The functions are pure and take numbers (and a
sequence or array of totals), so that the compiled vector kernel compiles this very text
(``lama_env._vector_kernel.episode_end`` and ``round_reward``), as it compiles the win rule;
``tests/test_architecture.py`` fails when another function decides an episode's end from
``max_rounds`` or the game's end.
"""

from __future__ import annotations

from typing import Any

from .rules import win_result

__all__ = ["CONTINUES", "TERMINATED", "TRUNCATED", "episode_end", "round_reward"]

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
