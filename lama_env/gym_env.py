"""Gymnasium environment ``LamaDice-v1``: one learning seat against fixed opponents (docs/environments.md).

``import lama_env`` registers it::

    env = gymnasium.make("LamaDice-v1", num_players=3, opponents=["random"])
    obs, info = env.reset(seed=0)
    obs, reward, terminated, truncated, info = env.step(int(np.flatnonzero(info["action_mask"])[0]))

The other seats are played inside :meth:`LamaDiceEnv.step` by opponent policies
(:class:`lama_env.opponents.PolicyLike`: ``act(game, legal)`` and ``seed(seed)``) through the one
episode driver, :func:`lama_env.episode.advance`; all rules live in :class:`~lama_env.engine.LamaGame`.
The observation (``Box(0, 1, (15 N + 22,), float32)``, :func:`lama_env.observation.encode` from the
learner's seat), the actions (``Discrete(129)``, :mod:`lama_env.actions`), the mask (``env.action_masks()``,
``info["action_mask"]``), the rewards, the infos and the versions: docs/environments.md, Gymnasium and Versions.

Illegal actions: with ``illegal="lose"`` (default; what Gymnasium's and SB3's ``check_env`` need) one
ends the episode with ``illegal_reward``, ``terminated=True`` and ``info["illegal_action"]``, leaves the
game unchanged and issues an :class:`IllegalMoveWarning` through ``gymnasium.logger.warn``
(``gymnasium.logger.min_level = gymnasium.logger.ERROR`` or
``warnings.filterwarnings("ignore", category=IllegalMoveWarning)`` silences it); with ``"raise"``,
:meth:`LamaDiceEnv.step` raises :class:`~lama_env.engine.IllegalActionError`, the state unchanged.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from . import actions as A
from .engine import IllegalActionError, LamaGame
from .episode import CONTINUES, TERMINATED, advance, forced, illegal_move
from .observation import encode, observation_size
from .opponents import PolicyLike
from .options import (
    NO_EPISODE_STATS,
    IllegalMoveWarning,
    LamaEnvError,
    MaskCache,
    ScalarEnv,
    as_action,
    check_learner_seat,
    opponent_name,
    seat_opponents,
)
from .picture import render_text
from .rules import RulesConfig, win_shares


class LamaDiceEnv(ScalarEnv, gym.Env):
    """One learning seat of *Don't L.L.A.M.A. Dice* against opponent policies (see the module docstring).

    Args:
        num_players: 1..6 (1: the solo variant, no opponents).
        opponents: agent specs (``"random"``, ``"optimal"``, ``"threshold:0.2"``...: :mod:`lama_env.opponents`)
            or policy objects; one applies to every opponent seat, else one per opponent seat (turn order
            after the learner).  None: ``["random"]``.
        episode: ``"game"`` (rounds until a total reaches ``end_threshold``) or ``"round"`` (one round).
        reward: ``"win"`` or ``"points"``.
        learner_seat: a fixed seat for the learner; None rotates it by one every episode from a seat drawn
            at ``reset(seed=...)`` (``reset(options={"learner_seat": k})`` fixes it for one episode).  An
            episode starts at the learner's first decision: a game where it gets none is skipped for the
            next one along the same streams; a seat that can never act is refused
            (:func:`lama_env.options.check_learner_acts`).
        auto_forced: apply the learner's forced decisions (one legal action) without asking.
        illegal: ``"lose"`` (end the episode with ``illegal_reward``) or ``"raise"``.
        illegal_reward: reward of an illegal action under ``illegal="lose"``.
        max_rounds: truncate the episode after this many rounds (None: never).
        render_mode: None, ``"rgb_array"``, ``"ansi"`` or ``"human"`` (:meth:`render`).
        **rules: the rules fields (docs/RULES.md): ``triple_llama``, ``must_discard``, ``end_threshold``,
            ``dice``, ``max_round_turns`` (1000: a round still going after this many turns is cut and
            scored as it stands, ``ended_by == "turn_cap"``).

    Raises:
        TypeError: an unknown keyword (``"LamaDiceEnv.__init__() got an unexpected keyword argument 'x'"``).
        LamaEnvError: a bad option.
        lama_env.rules.RulesError: a bad value of a rules field.
        lama_dice.agents.registry.AgentSpecError: a bad opponent spec.
    """

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
        self._masks = MaskCache()
        self._learner = 0
        self._seat_offset: int | None = None
        self._episodes = 0
        self._done = True
        self._policies: list[Any] = [None] * n

    @property
    def learner_seat(self) -> int:
        """The learner's seat in the current episode."""
        return self._learner

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        """Start an episode; returns ``(observation, info)`` (``info`` as :meth:`step`'s)."""
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
        self._policies = [None] * n
        for i, opp in enumerate(self.opponents):
            self._policies[(learner + 1 + i) % n] = opp
        for i in range(1000):
            g = self._deal(seed if i == 0 else None)  # new streams from a seed, then on along them
            self._done = self._terminated = False
            self._illegal = 0
            self._advance(g)
            if not self._done:
                break
        else:  # pragma: no cover - would need 1000 games in a row where the learner never acts
            raise LamaEnvError("could not start an episode in which the learner gets a decision")
        if self.render_mode == "human":
            self.render()
        return encode(g, learner), self._info(g)

    def step(self, action: Any):
        """Apply the learner's action, then the opponents' moves until the learner's next decision.

        Returns:
            ``(observation, reward, terminated, truncated, info)``; ``info["episode_stats"]`` is all 0 until
            the step that ends the episode, then the learner's ``win`` (float: 1, ``1/k`` in a ``k``-way tie
            for the fewest points, else 0; the share of the lead when truncated), ``rounds``,
            ``points_per_round`` (float), ``final_points``, ``busts``, ``quits``, ``went_out`` and
            ``illegal`` (1 if an illegal action ended it) (docs/environments.md, Infos).

        Raises:
            IllegalActionError: an illegal action with ``illegal="raise"``.
            LamaEnvError: the episode is over (call ``reset()``) or was never started.
        """
        g = self._game
        if g is None or self._done:
            raise LamaEnvError("the episode is over or not started: call reset() first")
        action = as_action(action)
        learner = self._learner
        if action not in g.legal_actions():
            if self.illegal == "raise":
                g.step(action)  # raises IllegalActionError with the legal actions; the state is unchanged
            gym.logger.warn(
                "%s", f"LamaDice-v1: {illegal_move(action, 'the learner', g.legal_actions())}. The episode ends "
                f"with reward {self.illegal_reward} (illegal='lose').",
                category=IllegalMoveWarning, stacklevel=2,
            )
            self._done = self._terminated = True
            self._illegal = 1
            return encode(g, learner), self.illegal_reward, True, False, self._info(g, illegal=True)
        g.step(action)
        reward = self._advance(g)
        info = self._info(g)
        if self.render_mode == "human":
            self.render()
        return encode(g, learner), float(reward), self._terminated, self._done and not self._terminated, info

    def _advance(self, g: LamaGame) -> float:
        """Play ``g`` (:func:`lama_env.episode.advance`) to the learner's next decision or the end; its reward."""
        book = self._book
        advance(g, book, self._act, self._blame)
        if book.end != CONTINUES:
            self._done = True
            self._terminated = book.end == TERMINATED
        return float(book.rewards[self._learner])

    def _act(self, p: int, legal: tuple[int, ...]) -> int | None:
        """Seat ``p``'s action for the driver: an opponent's, the learner's forced one, or None (ask the learner)."""
        if p == self._learner:
            return forced(p, legal) if self.auto_forced else None
        return as_action(self._policies[p].act(self._game, legal))

    def _blame(self, p: int, e: Exception) -> Exception:
        """The error of an illegal action of the opponent at seat ``p`` (the learner's forced ones are legal)."""
        return IllegalActionError(f"opponent {opponent_name(self._policies[p])!r} at seat {p}: {e}")

    def _info(self, g: LamaGame, illegal: bool = False) -> dict[str, Any]:
        return {"action_mask": self.action_masks(), "learner_seat": self._learner, "illegal_action": illegal,
                "episode_stats": self._episode_stats(g) if self._done else dict(NO_EPISODE_STATS)}

    def _episode_stats(self, g: LamaGame) -> dict[str, float]:
        learner = self._learner
        st = g.statistics()
        rounds = st["rounds"]
        return {
            "win": 0.0 if self._illegal else win_shares(g.totals)[learner],
            "rounds": rounds,
            "points_per_round": st["points"][learner] / rounds if rounds else 0.0,
            "final_points": g.totals[learner],
            "busts": st["busts"][learner],
            "quits": st["quits"][learner],
            "went_out": st["went_out"][learner],
            "illegal": self._illegal,
        }

    def action_masks(self) -> np.ndarray:
        """The learner's legal actions as an int8 mask (all zeros once the episode is over)."""
        g = self._game
        return self._masks(None if g is None or self._done else g.legal_actions())

    def _draw(self, game: LamaGame, image: bool) -> Any:
        """The table (``image``: as a picture, else as text): the learner starred, the opponents by their specs."""
        names = [f"p{p}:{'learner' if p == self._learner else opponent_name(self._policies[p])}"
                 for p in range(self.num_players)]
        if image:
            from .picture import picture

            return picture(game, names, highlight=self._learner)
        return render_text(game, names, highlight=self._learner)


__all__ = ["IllegalMoveWarning", "LamaDiceEnv", "LamaEnvError"]
