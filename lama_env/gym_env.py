"""Gymnasium environment ``LamaDice-v1``: one learning seat against opponents (docs/environments.md, Gymnasium).

The opponents play inside :meth:`LamaDiceEnv.step` through the one episode driver, :func:`lama_env.episode.advance`.
An illegal action warns (``gymnasium.logger.min_level = gymnasium.logger.ERROR`` silences it).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from . import actions as A
from .engine import IllegalActionError, LamaGame
from .episode import CONTINUES, TERMINATED, TRUNCATED, advance, forced, illegal_move
from .observation import encode, observation_size
from .opponents import PolicyLike
from .options import (
    NO_EPISODE_STATS,
    IllegalMoveWarning,
    LamaEnvError,
    ScalarEnv,
    action_mask,
    as_action,
    check_learner_seat,
    opponent_name,
    seat_opponents,
)
from .picture import render_text
from .rules import RulesConfig, win_shares


class LamaDiceEnv(ScalarEnv, gym.Env):
    """One learning seat against opponent policies (keywords: docs/environments.md, Gymnasium, Common keywords)."""

    # gymnasium declares Env.metadata as an instance variable, so a ClassVar here fails mypy
    metadata = {"render_modes": ["human", "ansi", "rgb_array"], "render_fps": 4}  # noqa: RUF012 (gymnasium's)
    _title = "LamaDice-v1"

    def __init__(self, num_players: int = 2, opponents: Sequence[Any] | str | None = None, episode: str = "game",
                 reward: str = "win", learner_seat: int | None = None, auto_forced: bool = False,
                 illegal: str = "lose", illegal_reward: float = -1.0, max_rounds: int | None = None,
                 render_mode: str | None = None, **rules: Any) -> None:
        """Check the options and build the opponents (see the class docstring)."""
        super().__init__()
        # first: an unknown keyword is a TypeError (named after this __init__'s own keywords)
        rules_config = RulesConfig.from_keywords(rules, f"{type(self).__name__}.__init__()")
        self._check_options(rules_config, num_players, episode, reward, auto_forced, max_rounds,
                            {"learner_seat": learner_seat, "illegal": illegal, "illegal_reward": illegal_reward})
        self._check_render_mode(render_mode)
        n = self.num_players
        self.opponents = seat_opponents(opponents, n, lambda o: isinstance(o, PolicyLike),
                                        "an agent spec or a policy object (with act(game, legal) and seed(seed))")
        self.observation_space = spaces.Box(0.0, 1.0, (observation_size(n),), dtype=np.float32)
        self.action_space = spaces.Discrete(A.NUM_ACTIONS)
        self._learner = self._episodes = self._illegal = 0
        self._seat_offset: int | None = None
        self._policies: list[Any] = [None] * n

    @property
    def learner_seat(self) -> int:
        """The learner's seat in the current episode."""
        return self._learner

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        """Start an episode at the learner's first decision; returns ``(observation, info)``."""
        super().reset(seed=seed)
        n = self.num_players
        rng = self.np_random
        if seed is not None or self._seat_offset is None:
            self._seat_offset = int(rng.integers(n))
            self._episodes = 0
            if seed is not None:
                for opp in self.opponents:
                    opp.seed(int(rng.integers(2**31)))
        seat = self.learner_seat_option
        if options and "learner_seat" in options:
            seat = check_learner_seat(self, options["learner_seat"], "options['learner_seat']")
        if seat is None:
            seat = (self._seat_offset + self._episodes) % n
        self._episodes += 1
        self._learner = learner = int(seat)
        ring = [None, *self.opponents]  # the seats from the learner's on, in turn
        self._policies = [ring[(p - learner) % n] for p in range(n)]
        self._illegal = 0
        for i in range(1000):  # a game where the learner gets no decision is skipped for the next one
            g = self._deal(seed if i == 0 else None)  # new streams from a seed, then on along them
            advance(g, self._book, self._act, self._blame)
            if self._book.end == CONTINUES:
                break
        else:  # pragma: no cover - would need 1000 games in a row where the learner never acts
            raise LamaEnvError("could not start an episode in which the learner gets a decision")
        if self.render_mode == "human":
            self.render()
        return encode(g, learner), self._info(g)

    def step(self, action: Any):
        """Apply the learner's action, then the opponents' moves until the learner's next decision or the end."""
        g = self._game
        if g is None or self._book.end != CONTINUES:
            raise LamaEnvError("the episode is over or not started: call reset() first")
        action = as_action(action)
        learner, book = self._learner, self._book
        if action not in g.legal_actions():
            if self.illegal == "raise":
                g.step(action)  # raises IllegalActionError with the legal actions; the state is unchanged
            gym.logger.warn(
                "%s", f"LamaDice-v1: {illegal_move(action, 'the learner', g.legal_actions())}. The episode ends "
                f"with reward {self.illegal_reward} (illegal='lose').",
                category=IllegalMoveWarning, stacklevel=2,
            )
            book.end, self._illegal = TERMINATED, 1
            return encode(g, learner), self.illegal_reward, True, False, self._info(g)
        g.step(action)
        advance(g, book, self._act, self._blame)
        info = self._info(g)
        if self.render_mode == "human":
            self.render()
        end = book.end
        return encode(g, learner), float(book.rewards[learner]), end == TERMINATED, end == TRUNCATED, info

    def _act(self, p: int, legal: tuple[int, ...]) -> int | None:
        """Seat ``p``'s action for the driver: an opponent's, the learner's forced one, or None (ask the learner)."""
        if p == self._learner:
            return forced(p, legal) if self.auto_forced else None
        return as_action(self._policies[p].act(self._game, legal))

    def _blame(self, p: int, e: Exception) -> Exception:
        """The error of an illegal action of the opponent at seat ``p`` (the learner's forced ones are legal)."""
        return IllegalActionError(f"opponent {opponent_name(self._policies[p])!r} at seat {p}: {e}")

    def _info(self, g: LamaGame) -> dict[str, Any]:
        info = {"action_mask": self.action_masks(), "learner_seat": self._learner,
                "illegal_action": bool(self._illegal), "episode_stats": dict(NO_EPISODE_STATS)}
        if self._book.end != CONTINUES:
            learner, st = self._learner, g.statistics()
            rounds = st["rounds"]
            info["episode_stats"] = {
                "win": 0.0 if self._illegal else win_shares(g.totals)[learner], "rounds": rounds,
                "points_per_round": st["points"][learner] / rounds if rounds else 0.0,
                "final_points": g.totals[learner], "busts": st["busts"][learner], "quits": st["quits"][learner],
                "went_out": st["went_out"][learner], "illegal": self._illegal}
        return info

    def action_masks(self) -> np.ndarray:
        """The learner's legal actions as an int8 mask (all zeros once the episode is over)."""
        g = self._game
        return action_mask(None if g is None or self._book.end != CONTINUES else g.legal_actions())

    def _draw(self, game: LamaGame, image: bool) -> Any:
        """The table (``image``: as a picture, else as text): the learner starred, the opponents by their specs."""
        names = [f"p{p}:{'learner' if p == self._learner else opponent_name(self._policies[p])}"
                 for p in range(self.num_players)]
        if image:
            from .picture import picture

            return picture(game, names, highlight=self._learner)
        return render_text(game, names, highlight=self._learner)


__all__ = ["IllegalMoveWarning", "LamaDiceEnv", "LamaEnvError"]
