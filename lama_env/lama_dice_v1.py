"""
# Don't L.L.A.M.A. Dice

A PettingZoo AEC environment for Reiner Knizia's dice game, from `lama-dice`.

| Import             | `from lama_env import lama_dice_v1`                          |
|--------------------|--------------------------------------------------------------|
| Creation           | `lama_dice_v1.env(num_players=2)` (`raw_env` is unwrapped)   |
| Actions            | Discrete                                                     |
| Parallel API       | No                                                           |
| Manual Control     | No                                                           |
| Agents             | `agents= ['player_0', 'player_1', ...]`                      |
| Agents             | 1 to 6 (`num_players`; 1 is the solo variant)                |
| Action Shape       | (1,)                                                         |
| Action Values      | Discrete(129)                                                |
| Observation Shape  | (15 N + 22,) (52 for 2 players), in a dict with the mask     |
| Observation Values | [0, 1]                                                       |

Players take turns rolling three dice to get rid of the cards in their display;
whoever quits, goes out or busts stops for the round, and each display's cards
score penalty points (10 for any llamas, plus each distinct number once). The
game ends after a round in which a total reaches 40; the fewest points win.
The rules are those of the project's `docs/RULES.md`; every one of its choices is a
keyword of `env()`.

### Arguments

``` python
lama_dice_v1.env(num_players=2, render_mode=None, episode="game", reward="win",
                 auto_forced=False, max_rounds=None, record=False,
                 triple_llama="chip_only", must_discard=True, end_threshold=40, dice=...)
```

`num_players`: 1..6 (1: the solo variant, where every roll that matches nothing busts).

`episode`: `"game"` plays rounds until a total reaches `end_threshold`; `"round"` ends
the episode after one round.

`reward`: `"win"` or `"points"` (see Rewards).

`auto_forced`: when True, a decision with exactly one legal action (a forced discard or
take) is applied automatically and the agent is not asked; by default it is asked anyway.

`max_rounds`: truncate the episode (all agents) after this many rounds; None: never.

`record`: keep the game record (`env.unwrapped.game.to_record()`); a little slower.

`triple_llama`, `must_discard`, `end_threshold`, `dice`, `max_round_turns`: the rules' choices
(`lama_env.RulesConfig`); `rules=RulesConfig(...)` is accepted too.

`render_mode`: `"rgb_array"` (`render()` returns the table as an RGB image, 640 x 360 for two
players), `"ansi"` (as text) or `"human"` (the image in a pygame window where a display is
available, else the text printed), after every step.

### Observation Space

The observation is a dictionary with an `'observation'` element, a flat `float32`
vector, and an `'action_mask'` element, described in the Legal Actions Mask section.

The vector (`lama_env.observation.encode`, shared with the Gymnasium env and with trained
agents) is seen from the observing agent's seat: each block with one entry per player lists
that agent first and the others in turn order. With N players it has 15 N + 22 entries, all
in [0, 1]. Its layout, block by block, is the observation table of the project's
`docs/environments.md` (generated from `lama_env.observation.observation_layout`, which
also gives the concrete slices for N players).

#### Legal Actions Mask

The legal moves of the agent to act are in the `action_mask` element of the dictionary
observation: an `int8` vector with one entry per action, 1 where the action is legal. It is
all zeros for every other agent and once the episode is over, and never empty for the agent
to act. Taking an illegal action through `env()` ends the game with a reward of -1 for the
offender and 0 for the others (PettingZoo's `TerminateIllegalWrapper`), reported as the
classic environments do, through PettingZoo's `EnvLogger` (`EnvLogger.suppress_output()`
silences it); the game state is never changed by it. The unwrapped `raw_env` raises
`lama_env.IllegalActionError` instead, also leaving the state unchanged.

### Action Space

One `Discrete(129)` space covers every decision (`lama_env.actions`): 0 roll and 1 quit at
the start of a turn, 2..8 take the row card `L`, `1`..`6` after a roll that matches nothing
in the display, 9..128 discard a multiset of faces (`lama_env.actions.DISCARDS[a - 9]`) after
a matching roll. When each is legal: the actions table of `docs/environments.md`.

### Rewards

`reward="win"` (default): at the end of the game (with `episode="round"`, of the round),
zero-sum: the winners (tied for the fewest points) share +1 and the others share -1; 0 for
everyone if all tie, so always 0 in the solo variant; nothing on truncation.
`reward="points"`: at the end of each round, to every agent, minus the change of its chip
total over the round. The exact definitions: the rewards table of `docs/environments.md`.

### Infos and the game's result

As in PettingZoo's classic environments, every agent's `info` is an empty dict at every step
(so infos stack in any library). The game's result is read from the game itself:
`env.unwrapped.game.totals` (chip totals by seat: `player_i` is seat `i`),
`env.unwrapped.game.result()["winners"]` (the seats tied for the fewest points once the game is over),
`env.unwrapped.game.result()` (per-round results) and `env.unwrapped.game.statistics()`.

### Version History

* v1: `reset(seed=s)` plays the compiled engine's game 0 of seed `s`: the deals and dice come
  from its streams (`lama_env.streams.Streams`), so the same seed and the same actions play the
  same game as `LamaGame(seed=s, game_id=0)`, game 0 of `lama_env.batched.play_batch(...,
  seed=s)` and slot 0 of a `VectorGame` after `reset(seed=s)`; later `reset()`s without a seed
  go on along those streams. Spaces, rewards and options are those of v0. (lama-dice 0.1.0,
  unreleased)
* v0: Initial release (lama-dice 0.1.0); its seeds drew from a NumPy generator, and played other
  games. Retired: `from lama_env import lama_dice_v0` raises `lama_env.options.DeprecatedEnvError`,
  naming v1.

"""  # noqa: D212, D415 (PettingZoo env-doc convention: the Markdown title on its own line)

from __future__ import annotations

from typing import Any, ClassVar

import gymnasium
import numpy as np
from gymnasium import spaces
from gymnasium.utils import EzPickle
from pettingzoo import AECEnv

from . import actions as A
from .aec_wrappers import AssertOutOfBounds, OrderEnforcing, TerminateIllegal
from .engine import LamaGame
from .episode import CONTINUES, TERMINATED, Episode, advance, forced
from .observation import encode, observation_size
from .options import (
    EPISODES,
    REWARDS,
    LamaEnvError,
    MaskCache,
    as_action,
    check_choice,
    check_max_rounds,
    check_num_players,
    warn_solo_win,
)
from .render import render_text
from .rules import RulesConfig
from .streams import Streams
from .viewer import HumanView

__all__ = ["env", "raw_env"]



def env(**kwargs: Any) -> AECEnv:
    """The environment wrapped as PettingZoo's classic environments are.

    ``TerminateIllegalWrapper(illegal_reward=-1)``, then ``AssertOutOfBoundsWrapper``,
    then ``OrderEnforcingWrapper`` (lama-dice's subclasses of these three wrappers,
    :mod:`lama_env.aec_wrappers`: the same behaviour, with the attributes read every step
    forwarded directly to the environment rather than through ``__getattr__``). Keyword
    arguments are those of :class:`raw_env`.
    """
    e: AECEnv = raw_env(**kwargs)
    e = TerminateIllegal(e, illegal_reward=-1)
    e = AssertOutOfBounds(e)
    e = OrderEnforcing(e)
    return e


class raw_env(AECEnv, EzPickle):  # noqa: N801 (PettingZoo's name)
    """The unwrapped AEC environment (see the module docstring; :func:`env` wraps it).

    Raises:
        TypeError: an unknown keyword (``"raw_env.__init__() got an unexpected keyword argument 'x'"``).
        lama_env.options.LamaEnvError: a bad option.
        lama_env.rules.RulesError: a bad value of a rules keyword.
    """

    metadata: ClassVar[dict[str, Any]] = {
        "render_modes": ["human", "ansi", "rgb_array"],
        "name": "lama_dice_v1",
        "is_parallelizable": False,
        "render_fps": 2,
    }
    _view: HumanView | None = None  # the window of render_mode="human", opened on the first render()

    def __init__(
        self,
        num_players: int = 2,
        render_mode: str | None = None,
        episode: str = "game",
        reward: str = "win",
        auto_forced: bool = False,
        max_rounds: int | None = None,
        record: bool = False,
        **rules: Any,
    ) -> None:
        """Check the options and build the spaces (the keywords are in the module docstring)."""
        EzPickle.__init__(
            self, num_players=num_players, render_mode=render_mode, episode=episode, reward=reward,
            auto_forced=auto_forced, max_rounds=max_rounds, record=record, **rules,
        )
        super().__init__()
        # first: an unknown keyword is a TypeError
        self.rules = RulesConfig.from_keywords(rules, f"{type(self).__name__}.__init__()")
        self.num_players = n = check_num_players(num_players)
        self.episode = check_choice("episode", episode, EPISODES)
        self.reward_mode = check_choice("reward", reward, REWARDS)
        if render_mode is not None:
            check_choice("render_mode", render_mode, self.metadata["render_modes"])
        self.render_mode = render_mode
        self.auto_forced = bool(auto_forced)
        self.max_rounds = check_max_rounds(max_rounds)
        self.record = bool(record)
        if n == 1 and self.reward_mode == "win":
            warn_solo_win()
        self.possible_agents = [f"player_{i}" for i in range(n)]
        self._names = tuple(self.possible_agents)
        self._seat = {a: i for i, a in enumerate(self.possible_agents)}
        size = observation_size(n)
        self.observation_spaces = {
            a: spaces.Dict({
                "observation": spaces.Box(0.0, 1.0, (size,), dtype=np.float32),
                "action_mask": spaces.Box(0, 1, (A.NUM_ACTIONS,), dtype=np.int8),
            })
            for a in self.possible_agents
        }
        self.action_spaces = {a: spaces.Discrete(A.NUM_ACTIONS) for a in self.possible_agents}
        self._masks = MaskCache()
        self._mask_table = self._masks.table
        self._rng: Streams | None = None  # the game's streams, from reset(seed=...) on
        self._game: LamaGame | None = None
        self._over = True
        self._dirty = False

    def __getstate__(self) -> dict[str, Any]:
        """Everything, so that ``pickle`` and ``copy.deepcopy`` keep a game in progress.

        ``EzPickle`` (which ``raw_env`` derives from, as PettingZoo's classic envs do) would keep
        only the constructor's arguments: a copy that has forgotten the game.  The copy continues
        exactly as the original (the game's random stream is copied with it); only the window of
        ``render_mode="human"`` is left out (the copy opens its own on its first render).
        """
        state = self.__dict__.copy()
        state.pop("_view", None)
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        """Restore what :meth:`__getstate__` kept."""
        self.__dict__.update(state)

    # ------------------------------------------------------------------ spaces
    def observation_space(self, agent: str) -> spaces.Space:
        """The observation space of ``agent``: a ``Dict`` of ``observation`` and ``action_mask``."""
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Space:
        """The action space of ``agent``: ``Discrete(NUM_ACTIONS)``."""
        return self.action_spaces[agent]

    @property
    def game(self) -> LamaGame | None:
        """The engine's game (read it, don't change it)."""
        return self._game

    # -------------------------------------------------------------------- API
    def reset(self, seed: int | None = None, options: dict | None = None) -> None:
        """Start a new game (a new random stream when ``seed`` is given)."""
        if seed is not None or self._rng is None:
            self._rng = Streams.of_game(seed, 0, LamaEnvError)
        # the game ends with the episode's last round (episode="round", max_rounds): no deal after it
        self._game = g = LamaGame(self.num_players, self.rules, rng=self._rng, record=self.record,
                                  max_rounds=1 if self.episode == "round" else self.max_rounds)
        self._book = Episode(g, self.reward_mode, self.episode, self.max_rounds)
        self.agents = list(self.possible_agents)
        self.rewards: dict[str, float] = dict.fromkeys(self.agents, 0)
        self._cumulative_rewards: dict[str, float] = dict.fromkeys(self.agents, 0)
        self.terminations = dict.fromkeys(self.agents, False)
        self.truncations = dict.fromkeys(self.agents, False)
        self.infos: dict[str, dict[str, Any]] = {a: {} for a in self.agents}
        self._over = False
        self._dirty = False
        self._skip_agent_selection = None
        if self.auto_forced:  # else nothing to settle: a decision is asked
            self._settle(g)
        self.agent_selection = self._names[g.current_player]

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        """``{"observation": encode(game, seat), "action_mask": ...}`` for ``agent`` (new arrays every call)."""
        g = self._game
        assert g is not None  # agent_selection is set: reset() has dealt a game
        if agent == self.agent_selection and not self._over:
            legal = g.legal_actions()
            mask = self._mask_table.get(legal)  # the MaskCache's masks, looked up inline
            mask = self._masks(legal) if mask is None else mask.copy()
        else:
            mask = self._masks(None)
        return {"observation": encode(g, self._seat[agent]), "action_mask": mask}

    def step(self, action: Any) -> None:
        """Apply ``action`` for ``agent_selection``.

        Raises:
            lama_env.IllegalActionError: an illegal action (the state is unchanged).
        """
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        self._play(agent, action if type(action) is int else as_action(action))

    def _play(self, agent: str, action: Any) -> None:
        """:meth:`step` for ``agent``, the live agent to act (the wrappers' fast path calls it directly)."""
        g = self._game
        assert g is not None  # agent_selection is set: reset() has dealt a game
        g.step(action)  # raises before changing anything
        if self._dirty:
            self._clear_rewards()
            self._dirty = False
        self._cumulative_rewards[agent] = 0
        # the fast path: the driver only when a round ended or a forced decision is to be applied
        if g.rounds_finished != self._book.rounds or (self.auto_forced and len(g.legal_actions()) == 1):
            self._settle(g)
        self.agent_selection = self._names[g.current_player]
        if self._dirty:
            self._accumulate_rewards()
        if self.render_mode == "human":
            self.render()

    def _settle(self, g: LamaGame) -> None:
        """Handle ``g``'s round ends (rewards, the episode's end) and forced decisions: the episode driver.

        :func:`lama_env.episode.advance` plays them (with ``auto_forced``, the forced decisions); every
        agent gets its rewards, and the episode's end sets every agent's termination or truncation.
        """
        book = self._book
        if not advance(g, book, forced if self.auto_forced else None):
            return
        rewards = self.rewards
        for a, r in zip(self._names, book.rewards, strict=True):
            rewards[a] += r
        self._dirty = True
        if book.end == CONTINUES:
            return
        self._over = True
        if book.end == TERMINATED:
            self.terminations = dict.fromkeys(self._names, True)
        else:
            self.truncations = dict.fromkeys(self._names, True)

    # -------------------------------------------------------------- rendering
    def render(self) -> str | np.ndarray | None:
        """Draw the table.

        ``"rgb_array"``: an ``(H, W, 3)`` uint8 image (:mod:`lama_env.picture`; 640 x 360 for two
        players); ``"ansi"``: the table as text; ``"human"``: the image in a pygame window where one
        can be shown (:mod:`lama_env.viewer`), else the text printed.
        """
        if self.render_mode is None:
            gymnasium.logger.warn(
                "You are calling render method without specifying any render mode "
                "(use 'rgb_array', 'ansi' or 'human')."
            )
            return None
        game = self._game
        if game is None:
            return None
        if self.render_mode != "ansi":
            from .picture import picture

            if self.render_mode == "rgb_array":
                return picture(game, self._names)
            if self._view is None:
                self._view = HumanView("lama_dice_v1", self.metadata["render_fps"])
            if self._view.show(lambda: picture(game, self._names)):
                return None
        text = render_text(game, self._names)
        if self.render_mode == "ansi":
            return text
        print(text + "\n")
        return None

    def close(self) -> None:
        """Close the ``human`` render mode's window, if open."""
        if self._view is not None:
            self._view.close()
