"""Gymnasium environment ``LamaDice-v1``: one learning seat against fixed opponents (docs/environments.md).

``import lama_env`` registers it::

    env = gymnasium.make("LamaDice-v1", num_players=3, opponents=["random"])
    obs, info = env.reset(seed=0)
    obs, reward, terminated, truncated, info = env.step(int(np.flatnonzero(info["action_mask"])[0]))

The other seats are played inside :meth:`LamaDiceEnv.step` by opponent policies
(:class:`lama_env.opponents.PolicyLike`: ``act(game, legal)`` and ``seed(seed)``) through the one
episode driver, :func:`lama_env.episode.advance`; all rules live in :class:`~lama_env.engine.LamaGame`.

================  ============================================================
Observation       ``Box(0, 1, (15 N + 22,), float32)``: :func:`lama_env.observation.encode`
                  from the learner's seat (docs/environments.md, Observation)
Action            ``Discrete(129)``: :mod:`lama_env.actions` (0 roll, 1 quit,
                  2..8 take a row card, 9..128 discard a multiset)
Action mask       ``env.action_masks()`` (what sb3-contrib's ``MaskablePPO`` calls) and
                  ``info["action_mask"]`` (int8, one entry per action)
Reward            ``"win"``: at the episode's end, the learner's zero-sum share (winners
                  share +1, the others -1; 0 if all tie, so always 0 solo; 0 on truncation);
                  ``"points"``: at each round's end, minus the change of the learner's
                  total (docs/environments.md, Rewards)
Info              the same keys, types and shapes after every reset and step:
                  ``action_mask``, ``learner_seat`` (int), ``illegal_action`` (bool),
                  ``episode_stats`` (:meth:`LamaDiceEnv.step`)
================  ============================================================

Illegal actions: with ``illegal="lose"`` (default; what Gymnasium's and SB3's ``check_env`` need) one
ends the episode with ``illegal_reward``, ``terminated=True`` and ``info["illegal_action"]``, leaves the
game unchanged and issues an :class:`IllegalMoveWarning` through ``gymnasium.logger.warn``
(``gymnasium.logger.min_level = gymnasium.logger.ERROR`` or
``warnings.filterwarnings("ignore", category=IllegalMoveWarning)`` silences it); with ``"raise"``,
:meth:`LamaDiceEnv.step` raises :class:`~lama_env.engine.IllegalActionError`, the state unchanged.

Version history (docs/environments.md, Versions):

* v1: ``reset(seed=s)`` plays the compiled engine's game 0 of seed ``s`` (:class:`lama_env.streams.Streams`:
  as ``LamaGame(seed=s, game_id=0)`` and sub-env 0 of ``gymnasium.make_vec("LamaDice-v1")``, the
  opponents' ``random`` included), later episodes going on along those streams; the learner's starting
  seat and the opponents' seeds come from ``env.np_random``.  Spaces, rewards, options and infos are v0's.
* v0: its seeds drew the game from ``env.np_random``.  Retired: ``gymnasium.make("LamaDice-v0")`` names v1.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from . import actions as A
from .engine import IllegalActionError, LamaGame
from .episode import CONTINUES, TERMINATED, Episode, advance
from .observation import encode, observation_size
from .opponents import PolicyLike
from .opponents import resolve as resolve_opponent
from .options import (
    EPISODES,
    ILLEGAL_MODES,
    NO_EPISODE_STATS,
    REWARDS,
    IllegalMoveWarning,
    LamaEnvError,
    MaskCache,
    as_action,
    check_choice,
    check_learner_acts,
    check_learner_seat,
    check_max_rounds,
    check_num_players,
    check_reward,
    opponent_name,
    seat_opponents,
    warn_solo_win,
)
from .render import render_text
from .rules import RulesConfig, win_shares
from .streams import Streams
from .viewer import HumanView


class LamaDiceEnv(gym.Env):
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
    _view: HumanView | None = None  # the window of render_mode="human", opened on the first render()

    def __init__(self, num_players: int = 2, opponents: Sequence[Any] | str | None = None, episode: str = "game",
                 reward: str = "win", learner_seat: int | None = None, auto_forced: bool = False,
                 illegal: str = "lose", illegal_reward: float = -1.0, max_rounds: int | None = None,
                 render_mode: str | None = None, **rules: Any) -> None:
        """Check the options and build the opponents (see the class docstring)."""
        super().__init__()
        # first: an unknown keyword is a TypeError
        self.rules = RulesConfig.from_keywords(rules, f"{type(self).__name__}.__init__()")
        self.num_players = n = check_num_players(num_players)
        self.episode = check_choice("episode", episode, EPISODES)
        self.reward_mode = check_choice("reward", reward, REWARDS)
        self.illegal = check_choice("illegal", illegal, ILLEGAL_MODES)
        self.illegal_reward = check_reward("illegal_reward", illegal_reward)
        self.auto_forced = bool(auto_forced)
        self.max_rounds = check_max_rounds(max_rounds)
        if render_mode is not None:
            check_choice("render_mode", render_mode, self.metadata["render_modes"])
        self.render_mode = render_mode
        self.learner_seat_option = check_learner_seat(learner_seat, n)
        check_learner_acts(n, self.rules.max_round_turns, self.episode, self.max_rounds, self.learner_seat_option)
        if n == 1 and self.reward_mode == "win":
            warn_solo_win()
        self.opponents = self._build_opponents(opponents)
        self.observation_space = spaces.Box(0.0, 1.0, (observation_size(n),), dtype=np.float32)
        self.action_space = spaces.Discrete(A.NUM_ACTIONS)
        self._masks = MaskCache()
        self._game: LamaGame | None = None
        self._streams: Streams | None = None  # the games' streams, from reset(seed=...) on
        self._learner = 0
        self._seat_offset: int | None = None
        self._episodes = 0
        self._done = True
        self._policies: list[Any] = [None] * n

    def __getstate__(self) -> dict[str, Any]:
        """Everything but the ``human`` window: ``pickle``/``deepcopy`` copy a game in progress (streams, opponents)."""
        state = self.__dict__.copy()
        state.pop("_view", None)
        return state

    def _build_opponents(self, opponents: Sequence[Any] | str | None) -> list[Any]:
        out = []
        for spec in seat_opponents(opponents, self.num_players, lambda o: isinstance(o, (str, PolicyLike))):
            if not isinstance(spec, (str, PolicyLike)):
                raise LamaEnvError(f"an opponent must be an agent spec or a policy object "
                                   f"(with act(game, legal) and seed(seed)), got {spec!r}")
            out.append(resolve_opponent(spec) if isinstance(spec, str) else spec)
        return out

    @property
    def game(self) -> LamaGame | None:
        """The current game (read it, don't change it)."""
        return self._game

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
            self._streams = Streams.of_game(seed, 0, LamaEnvError)
            self._seat_offset = int(rng.integers(n))
            self._episodes = 0
            if seed is not None:
                for opp in self.opponents:
                    opp.seed(int(rng.integers(2**31)))
        seat = self.learner_seat_option
        if options and "learner_seat" in options:
            seat = options["learner_seat"]
            if isinstance(seat, bool) or not isinstance(seat, (int, np.integer)) or not 0 <= seat < n:
                raise LamaEnvError(f"options['learner_seat'] must be an integer 0..{n - 1}, got {seat!r}")
            check_learner_acts(n, self.rules.max_round_turns, self.episode, self.max_rounds, int(seat),
                               "options['learner_seat']")
        if seat is None:
            seat = (self._seat_offset + self._episodes) % n
        self._episodes += 1
        self._learner = learner = int(seat)
        self._policies = [None] * n
        for i, opp in enumerate(self.opponents):
            self._policies[(learner + 1 + i) % n] = opp
        for _ in range(1000):
            g = self._start_game()
            self._advance(g)
            if not self._done:
                break
        else:  # pragma: no cover - would need 1000 games in a row where the learner never acts
            raise LamaEnvError("could not start an episode in which the learner gets a decision")
        if self.render_mode == "human":
            self.render()
        return encode(g, learner), self._info(g)

    def _start_game(self) -> LamaGame:
        # the game ends with the episode's last round (episode="round", max_rounds): no deal after it
        self._game = g = LamaGame(self.num_players, self.rules, rng=self._streams, record=False,
                                  max_rounds=1 if self.episode == "round" else self.max_rounds)
        self._book = Episode(g, self.reward_mode, self.episode, self.max_rounds)
        self._done = self._terminated = False
        self._illegal = 0
        return g

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
            try:
                name = A.describe(int(action))
            except (TypeError, ValueError):
                name = "not an action"
            gym.logger.warn(
                "%s", f"LamaDice-v1: illegal action {action!r} ({name}) by the learner; legal: "
                f"{', '.join(A.describe(a) for a in g.legal_actions())}. The episode ends with reward "
                f"{self.illegal_reward} (illegal='lose').",
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
            return legal[0] if self.auto_forced and len(legal) == 1 else None
        return as_action(self._policies[p].act(self._game, legal))

    def _blame(self, p: int, e: Exception) -> Exception:
        """The error of an illegal action of the opponent at seat ``p`` (the learner's forced ones are legal)."""
        return IllegalActionError(f"opponent {opponent_name(self._policies[p])!r} at seat {p}: {e}")

    def _info(self, g: LamaGame, illegal: bool = False) -> dict[str, Any]:
        return {"action_mask": self._mask(), "learner_seat": self._learner, "illegal_action": illegal,
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

    def _mask(self) -> np.ndarray:
        g = self._game
        return self._masks(None if g is None or self._done else g.legal_actions())

    def action_masks(self) -> np.ndarray:
        """The learner's legal actions as an int8 mask (all zeros once the episode is over)."""
        return self._mask()

    def render(self) -> str | np.ndarray | None:
        """Draw the table, the learner's seat starred.

        ``"rgb_array"``: an ``(H, W, 3)`` uint8 image (:mod:`lama_env.picture`; 640 x 360 for two players);
        ``"ansi"``: the table as text; ``"human"``: the image in a pygame window where one can be shown
        (:mod:`lama_env.viewer`), else the text printed.
        """
        if self.render_mode is None:
            gym.logger.warn("LamaDice-v1: render() called without a render_mode (use 'rgb_array', 'ansi' or 'human')")
            return None
        game = self._game
        if game is None:
            return None
        names = [f"p{p}:{'learner' if p == self._learner else opponent_name(self._policies[p])}"
                 for p in range(self.num_players)]
        if self.render_mode != "ansi":
            from .picture import picture

            if self.render_mode == "rgb_array":
                return picture(game, names, highlight=self._learner)
            if self._view is None:
                self._view = HumanView("LamaDice-v1", self.metadata["render_fps"])
            if self._view.show(lambda: picture(game, names, highlight=self._learner)):
                return None
        text = render_text(game, names, highlight=self._learner)
        if self.render_mode == "ansi":
            return text
        print(text + "\n")
        return None

    def close(self) -> None:
        """Close the ``human`` render mode's window, if open."""
        if self._view is not None:
            self._view.close()
        super().close()


__all__ = ["IllegalMoveWarning", "LamaDiceEnv", "LamaEnvError"]
