"""What the env front-ends share: option checks (one message per bad value, whichever env), errors, warnings.

Used by :mod:`lama_env.gym_env`, :mod:`lama_env.lama_dice_v1` and :mod:`lama_env.vector_env`; the rules
keywords are parsed by :meth:`lama_env.rules.RulesConfig.from_keywords`.  Also: the empty episode statistics
(:data:`NO_EPISODE_STATS`), :func:`win_rewards` (re-exported from :mod:`lama_env.rules`), :func:`as_action`,
:class:`MaskCache`.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from . import actions as A
from .errors import LamaDiceError, RetiredError, clip
from .rules import check_num_players as _check_num_players
from .rules import win_rewards  # the rule lives in rules; re-exported for the envs

__all__ = ["EPISODES", "ILLEGAL_MODES", "NO_EPISODE_STATS", "REWARDS", "DeprecatedEnvError", "IllegalMoveWarning",
           "LamaEnvError", "MaskCache", "as_action", "check_choice", "check_learner_acts", "check_learner_seat",
           "check_max_rounds", "check_num_players", "check_reward", "opponent_name", "seat_opponents",
           "warn_solo_win", "win_rewards"]

#: The ``episode`` option: a whole game, or one round.
EPISODES = ("game", "round")
#: ``info["episode_stats"]`` before the episode's end: the keys and types of the final one, all zero.
NO_EPISODE_STATS: dict[str, float] = {"win": 0.0, "rounds": 0, "points_per_round": 0.0, "final_points": 0,
                                      "busts": 0, "quits": 0, "went_out": 0, "illegal": 0}
#: The ``reward`` option (the rewards table of ``docs/environments.md``).
REWARDS = ("win", "points")
#: The ``illegal`` option: an illegal action ends the episode, or raises.
ILLEGAL_MODES = ("lose", "raise")


class LamaEnvError(LamaDiceError, ValueError):
    """A bad environment option (player count, opponents, episode, reward...) or a misuse of an env."""


class DeprecatedEnvError(RetiredError, ImportError):
    """A retired version of an environment was asked for; the message names the current one."""


class IllegalMoveWarning(UserWarning):
    """Issued (through ``gymnasium.logger.warn``) when an illegal action ends a ``LamaDice-v1`` episode."""


def check_choice(name: str, value: Any, options: Sequence[str]) -> str:
    """Return ``value`` if it is one of ``options``, else raise :class:`LamaEnvError`."""
    if not isinstance(value, str) or value not in options:
        raise LamaEnvError(f"{name} must be one of {', '.join(repr(o) for o in options)}, got {value!r}")
    return value


def check_reward(name: str, value: Any, positive: bool = False) -> float:
    """``value`` as a finite float (``illegal_reward``, ``reward_scale``; ``positive``: above 0), else LamaEnvError."""
    try:
        number = float(value) if not isinstance(value, bool | str | bytes) else math.nan
    except (TypeError, ValueError, OverflowError):
        number = math.nan
    if not math.isfinite(number) or (positive and number <= 0):
        what = "a finite number above 0" if positive else "a finite number"
        raise LamaEnvError(f"{name} must be {what}, got {clip(value)}")
    return number


def check_num_players(num_players: Any) -> int:
    """Validate a player count (1..6)."""
    return _check_num_players(num_players, LamaEnvError)


def check_max_rounds(max_rounds: Any) -> int | None:
    """Validate ``max_rounds`` (None or a positive integer)."""
    if max_rounds is None:
        return None
    if isinstance(max_rounds, bool) or not isinstance(max_rounds, (int, np.integer)) or max_rounds < 1:
        raise LamaEnvError(f"max_rounds must be a positive integer or None, got {max_rounds!r}")
    return int(max_rounds)


def check_learner_seat(learner_seat: Any, num_players: int) -> int | None:
    """Validate a fixed learner seat (None, or an integer ``0..num_players - 1``)."""
    if learner_seat is None:
        return None
    if isinstance(learner_seat, bool) or not isinstance(learner_seat, (int, np.integer)) \
            or not 0 <= learner_seat < num_players:
        raise LamaEnvError(f"learner_seat must be None or an integer 0..{num_players - 1}, got {learner_seat!r}")
    return int(learner_seat)


def check_learner_acts(num_players: int, max_round_turns: int, episode: str, max_rounds: int | None,
                       learner_seat: int | None, what: str = "learner_seat") -> None:
    """Raise :class:`LamaEnvError` if a seat the learner may take (None: any) never gets a decision in an episode.

    Round ``r`` starts at seat ``r`` and ends after ``max_round_turns`` turns, so an episode of at most ``R``
    rounds (1 with ``episode="round"``, else ``max_rounds``) reaches only seats ``0..R + max_round_turns - 2``.
    """
    rounds = 1 if episode == "round" else max_rounds
    if rounds is None or rounds + max_round_turns - 1 >= num_players:
        return
    reach = rounds + max_round_turns - 1  # seats 0..reach - 1 get a first turn
    if learner_seat is not None and learner_seat < reach:
        return
    low = reach if learner_seat is None else learner_seat
    seats = f"seat {low} never gets" if low == num_players - 1 or learner_seat is not None else \
        f"seats {low}..{num_players - 1} never get"
    how = "episode='round'" if episode == "round" else f"max_rounds={rounds}"
    raise LamaEnvError(f"with {how} and max_round_turns={max_round_turns}, {seats} a decision "
                       f"({num_players} players; round r starts at seat r and ends after max_round_turns turns): give "
                       f"max_round_turns >= {num_players - rounds + 1} or {what} below {reach}")


def seat_opponents(opponents: Any, num_players: int, is_single: Callable[[Any], bool]) -> list[Any]:
    """The opponents' list, one entry per opponent seat (else :class:`LamaEnvError`).

    ``None``: ``["random"]``; one entry (``is_single``, or a one-item list) fills every seat; the solo
    variant (one player) has no opponent seat: any opponent given is refused.
    """
    k = num_players - 1
    if opponents is None:
        opponents = ["random"] if k else []
    if is_single(opponents):
        opponents = [opponents]
    if not isinstance(opponents, (list, tuple)):
        raise LamaEnvError(f"opponents must be a list of agent specs or policy objects, got {opponents!r}")
    if k == 0:
        if opponents:  # as a list of the wrong length is refused for any other table
            raise LamaEnvError(f"opponents must be empty (or None) for 1 player (the solo variant has no opponent "
                               f"seat), got {len(opponents)}")
        return []
    if len(opponents) == 1:
        return list(opponents) * k
    if len(opponents) != k:
        raise LamaEnvError(f"opponents must list 1 or {k} agents for {num_players} players, got {len(opponents)}")
    return list(opponents)


def opponent_name(policy: Any) -> str:
    """How an opponent is named in messages: its spec, else its class."""
    return str(getattr(policy, "spec", type(policy).__name__))


def warn_solo_win() -> None:
    """Warn that ``reward="win"`` is always 0 in the solo variant."""
    warnings.warn('reward="win" is always 0 in the solo variant (num_players=1); use reward="points" to learn from it',
                  UserWarning, stacklevel=3)


def as_action(action: Any) -> Any:
    """``action`` as a Python int when it is an integer (NumPy scalars, 0-d arrays), else unchanged (for the engine)."""
    if type(action) is int:
        return action
    if isinstance(action, (np.integer, int)) and not isinstance(action, bool):
        return int(action)
    if isinstance(action, np.ndarray) and action.shape in ((), (1,)) and np.issubdtype(action.dtype, np.integer):
        return int(action.reshape(()))
    return action


class MaskCache:
    """int8 action masks per legal-action tuple (a fresh copy each call; ``table`` holds the originals)."""

    def __init__(self) -> None:
        """Start with an empty table."""
        self.table: dict[tuple[int, ...], np.ndarray] = {}
        self._zero = A.legal_mask(())

    def __call__(self, legal: tuple[int, ...] | None) -> np.ndarray:
        """A fresh copy of the mask of ``legal`` (all zeros for None or no legal action)."""
        if not legal:
            return self._zero.copy()
        m = self.table.get(legal)
        if m is None:
            m = self.table[legal] = A.legal_mask(legal)
        return m.copy()

