"""What the envs share: option checks (one message per bad value, whichever env), errors, the opponents' seating."""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Sequence
from typing import Any

import gymnasium
import numpy as np

from . import actions as A
from .engine import LamaGame, as_action
from .episode import Episode
from .errors import LamaDiceError, RetiredError, clip
from .opponents import resolve as resolve_opponent
from .rules import RulesConfig, check_num_players
from .streams import Streams
from .viewer import HumanView

__all__ = ["EPISODES", "ILLEGAL_MODES", "MASKS", "NO_EPISODE_STATS", "REWARDS", "DeprecatedEnvError", "EnvOptions",
           "IllegalMoveWarning", "LamaEnvError", "ScalarEnv", "action_mask", "as_action", "check_choice",
           "check_learner_seat", "check_reward", "opponent_name", "seat_opponents"]

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
        raise LamaEnvError(f"{name} must be a finite number{' above 0' if positive else ''}, got {clip(value)}")
    return number


class EnvOptions:
    """The options every env takes (docs/environments.md, Common keywords), set by :meth:`_check_options`."""

    def _check_options(self, rules: RulesConfig, num_players: Any, episode: Any, reward: Any, auto_forced: Any,
                       max_rounds: Any, learner: dict[str, Any] | None = None) -> None:
        """Check the options and set them (``learner``: the learner envs' ``learner_seat``, ``illegal``...)."""
        self.rules = rules
        self.num_players = n = check_num_players(num_players, LamaEnvError)  # 1..6
        self.episode = check_choice("episode", episode, EPISODES)
        self.reward_mode = check_choice("reward", reward, REWARDS)
        self.auto_forced = bool(auto_forced)
        if max_rounds is not None and (isinstance(max_rounds, bool) or not isinstance(max_rounds, (int, np.integer))
                                       or max_rounds < 1):
            raise LamaEnvError(f"max_rounds must be a positive integer or None, got {max_rounds!r}")
        self.max_rounds = None if max_rounds is None else int(max_rounds)
        if learner is not None:
            self.illegal = check_choice("illegal", learner["illegal"], ILLEGAL_MODES)
            self.illegal_reward = check_reward("illegal_reward", learner["illegal_reward"])
            self.learner_seat_option = check_learner_seat(self, learner["learner_seat"])
        if n == 1 and self.reward_mode == "win":
            warnings.warn('reward="win" is always 0 in the solo variant (num_players=1); use reward="points" to '
                          'learn from it', UserWarning, stacklevel=3)


def check_learner_seat(env: EnvOptions, seat: Any, what: str = "learner_seat") -> int | None:
    """``seat`` (``learner_seat``: also None, any seat) if it is a seat of ``env`` that acts, else LamaEnvError.

    Round ``r`` starts at seat ``r`` and ends after ``max_round_turns`` turns: some seats may never get a decision.
    """
    n, max_round_turns, episode = env.num_players, env.rules.max_round_turns, env.episode
    if seat is not None or what != "learner_seat":
        if isinstance(seat, bool) or not isinstance(seat, (int, np.integer)) or not 0 <= seat < n:
            kind = "None or an integer" if what == "learner_seat" else "an integer"
            raise LamaEnvError(f"{what} must be {kind} 0..{n - 1}, got {seat!r}")
        seat = int(seat)
    rounds = 1 if episode == "round" else env.max_rounds
    reach = 0 if rounds is None else rounds + max_round_turns - 1  # seats 0..reach - 1 get a first turn
    if rounds is None or reach >= n or (seat is not None and seat < reach):
        return seat
    low = reach if seat is None else seat
    seats = f"seat {low} never gets" if low == n - 1 or seat is not None else f"seats {low}..{n - 1} never get"
    how = "episode='round'" if episode == "round" else f"max_rounds={rounds}"
    raise LamaEnvError(f"with {how} and max_round_turns={max_round_turns}, {seats} a decision "
                       f"({n} players; round r starts at seat r and ends after max_round_turns turns): give "
                       f"max_round_turns >= {n - rounds + 1} or {what} below {reach}")


def seat_opponents(opponents: Any, num_players: int, accepts: Callable[[Any], bool], what: str) -> list[Any]:
    """The opponents' policies, one per opponent seat (specs resolved; ``accepts``: the objects the env takes)."""
    k = num_players - 1
    if opponents is None:
        opponents = ["random"] if k else []
    if isinstance(opponents, str) or accepts(opponents):
        opponents = [opponents]
    if not isinstance(opponents, (list, tuple)):
        raise LamaEnvError(f"opponents must be a list of agent specs or policy objects, got {opponents!r}")
    if k == 0:
        if opponents:  # as a list of the wrong length is refused for any other table
            raise LamaEnvError(f"opponents must be empty (or None) for 1 player (the solo variant has no opponent "
                               f"seat), got {len(opponents)}")
        return []
    if len(opponents) not in (1, k):
        raise LamaEnvError(f"opponents must list 1 or {k} agents for {num_players} players, got {len(opponents)}")
    out = []
    for spec in list(opponents) * (k // len(opponents)):  # a spec resolved per seat: a policy object each
        if not isinstance(spec, str) and not accepts(spec):
            raise LamaEnvError(f"an opponent must be {what}, got {spec!r}")
        out.append(resolve_opponent(spec) if isinstance(spec, str) else spec)
    return out


def opponent_name(policy: Any) -> str:
    """How an opponent is named in messages: its spec, else its class."""
    return str(getattr(policy, "spec", type(policy).__name__))


#: The int8 action mask of each legal-action tuple, shared by the scalar envs (they hand out copies).
MASKS: dict[tuple[int, ...], np.ndarray] = {(): A.legal_mask(())}


def action_mask(legal: tuple[int, ...] | None) -> np.ndarray:
    """A fresh int8 mask of ``legal`` (all zeros for None or no legal action)."""
    legal = legal or ()
    m = MASKS.get(legal)
    if m is None:
        m = MASKS[legal] = A.legal_mask(legal)
    return m.copy()


class ScalarEnv(EnvOptions):
    """What the Gymnasium env and the AEC env share: their game, its deal, the render modes, copies."""

    _title = ""  # the env's name, in the window's title and the messages
    _view: HumanView | None = None  # the window of render_mode="human", opened on the first render()
    _game: LamaGame | None = None
    _streams: Streams | None = None  # the games' streams, from reset(seed=...) on
    metadata: dict[str, Any]
    render_mode: str | None
    _draw: Callable[[LamaGame, bool], Any]  # the table: an (H, W, 3) uint8 picture (image=True) or text

    def _check_render_mode(self, render_mode: str | None) -> None:
        if render_mode is not None:
            check_choice("render_mode", render_mode, self.metadata["render_modes"])
        self.render_mode = render_mode

    def __getstate__(self) -> dict[str, Any]:
        """Everything but the ``human`` window: ``pickle``/``deepcopy`` copy a game in progress."""
        return {k: v for k, v in self.__dict__.items() if k != "_view"}

    def __setstate__(self, state: dict[str, Any]) -> None:
        """Restore what :meth:`__getstate__` kept (not ``EzPickle``'s arguments)."""
        self.__dict__.update(state)

    @property
    def game(self) -> LamaGame | None:
        """The current game (read it, don't change it)."""
        return self._game

    def _deal(self, seed: int | None, record: bool = False) -> LamaGame:
        """A new game and its :class:`~lama_env.episode.Episode` book (new streams from ``seed`` when given)."""
        if seed is not None or self._streams is None:
            self._streams = Streams.of_game(seed, 0, LamaEnvError)
        # the game ends with the episode's last round (episode="round", max_rounds): no deal after it
        self._game = g = LamaGame(self.num_players, self.rules, rng=self._streams, record=record,
                                  max_rounds=1 if self.episode == "round" else self.max_rounds)
        self._book = Episode(g, self.reward_mode, self.episode, self.max_rounds)
        return g

    def render(self) -> str | np.ndarray | None:
        """Draw the table: an ``(H, W, 3)`` uint8 image, text, or a window (docs/environments.md, Pictures)."""
        if self.render_mode is None:
            gymnasium.logger.warn(f"{self._title}: render() called without a render_mode "
                                  "(use 'rgb_array', 'ansi' or 'human')")
            return None
        game = self._game
        if game is None:
            return None
        if self.render_mode == "rgb_array":
            return self._draw(game, True)
        if self.render_mode == "human":
            if self._view is None:
                self._view = HumanView(self._title, self.metadata["render_fps"])
            if self._view.show(lambda: self._draw(game, True)):
                return None
        text = self._draw(game, False)
        if self.render_mode == "ansi":
            return text
        print(f"{text}\n")
        return None

    def close(self) -> None:
        """Close the ``human`` render mode's window, if open."""
        if self._view is not None:
            self._view.close()
        super().close()  # type: ignore[misc]
