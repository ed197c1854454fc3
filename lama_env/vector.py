"""A vector game: many games stepped at once by one compiled call, every seat, Pgx-style.

Usage, outputs, round ends, rewards, streams, branching, records and errors: docs/environments.md, Vector game.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from typing import Any, NamedTuple

import numpy as np

from . import _kernel, streams
from . import _vector_kernel as K
from . import actions as A
from .engine import IllegalActionError, LamaGame
from .errors import LamaDiceError
from .gamelog import log_to_record
from .observation import observation_size
from .rules import NUM_FACES, RulesConfig, check_num_players
from .snapshot import from_state

__all__ = ["EPISODES", "REWARDS", "PlayEnds", "VectorGame", "VectorGameError", "VectorIllegalActionError",
           "encoder_rules"]

REWARDS = ("win", "points")
EPISODES = ("game", "round")


class PlayEnds(NamedTuple):
    """:meth:`VectorGame.play`'s buffers besides the decision; ``fin``: an ended game's totals and 5 statistics."""

    rew: np.ndarray
    term: np.ndarray
    trunc: np.ndarray
    round_end: np.ndarray
    final_obs: np.ndarray
    rolled: np.ndarray
    fin: np.ndarray
    fin_rounds: np.ndarray

    @classmethod
    def zeros(cls, g: int, n: int, obs_size: int, rew_dtype: Any = np.float64) -> PlayEnds:
        """Fresh buffers for ``g`` games of ``n`` players (``rolled`` all -1)."""
        return cls(*K.outputs(g, n, obs_size, 0, rew_dtype)[3:])


class VectorGameError(LamaDiceError, ValueError):
    """A bad argument of :class:`VectorGame` (sizes, options, actions of the wrong shape) or a misuse."""


class VectorIllegalActionError(IllegalActionError):
    """An action that is not legal in its game (no game was changed)."""


#: The rules record with the observation's tables (:func:`lama_env._kernel.encoder_rules`).
encoder_rules = _kernel.encoder_rules

#: The outputs of a step in :meth:`VectorGame.state`: key -> the output buffer's attribute.
_STATE_OUTPUTS = {"observation": "obs", "action_mask": "mask", "current_player": "player", "rewards": "rew",
                  "terminated": "term", "truncated": "trunc", "final_observation": "final_obs",
                  "round_ended": "round_end", "rolled": "rolled"}


def _read_only(o: K.Outputs) -> dict[str, np.ndarray]:
    """Read-only views of the output buffer ``o``'s arrays, by field name."""
    views = {name: a.view() for name, a in zip(o._fields, o, strict=True)}
    for v in views.values():
        v.flags.writeable = False
    return views


def _clear(o: K.Outputs) -> None:
    for a in o:
        a.fill(0)
    o.rolled.fill(-1)


def _output(name: str, doc: str) -> Any:
    """A property: the last step's output ``name``, a read-only view."""
    def get(self: VectorGame) -> np.ndarray:
        self._need_reset()
        return self._views[self._k][name]
    return property(get, doc=doc)


def _field(name: str, doc: str, dtype: Any = np.int64, seats: bool = False) -> Any:
    """A property: the games' record field ``name`` (the first N seats' where ``seats``) as a new array."""
    def get(self: VectorGame) -> np.ndarray:
        a = self._s[name]
        return (a[:, :self.num_players] if seats else a).astype(dtype)
    return property(get, doc=doc)


class VectorGame:
    """``num_envs`` games stepped together, one decision of the player to act per game.

    The arguments and outputs: docs/environments.md, Vector game.  A bad argument raises :class:`VectorGameError`
    (a rules field's value: :class:`lama_env.rules.RulesError`; an unknown keyword: TypeError).
    """

    def __init__(self, num_envs: int, num_players: int = 2, seed: int | None = None, record: bool = False,
                 reward: str = "win", episode: str = "game", max_rounds: int | None = None, **rules: Any) -> None:
        """Set up the state arrays (call :meth:`reset` to deal the first games)."""
        if isinstance(num_envs, bool) or not isinstance(num_envs, (int, np.integer)) or num_envs < 1:
            raise VectorGameError(f"num_envs must be an integer >= 1, got {num_envs!r}")
        self.num_envs = g = int(num_envs)
        self.num_players = n = check_num_players(num_players, VectorGameError)
        self.rules = RulesConfig.from_keywords(rules, "VectorGame()")
        for name, value, options in (("reward", reward, REWARDS), ("episode", episode, EPISODES)):
            if not isinstance(value, str) or value not in options:
                raise VectorGameError(f"{name} must be one of {', '.join(repr(o) for o in options)}, got {value!r}")
        self.reward, self.episode = reward, episode
        if max_rounds is not None and (isinstance(max_rounds, bool) or not isinstance(max_rounds, (int, np.integer))
                                       or max_rounds < 1):
            raise VectorGameError(f"max_rounds must be a positive integer or None, got {max_rounds!r}")
        self.max_rounds = None if max_rounds is None else int(max_rounds)
        if not isinstance(record, (bool, np.bool_)):
            raise VectorGameError(f"record must be true or false, got {record!r}")
        self.record = bool(record)
        if n == 1 and self.reward == "win":
            warnings.warn('reward="win" is always 0 in the solo variant (num_players=1); use reward="points" '
                          "to learn from it", UserWarning, stacklevel=2)
        self.observation_size = observation_size(n)
        self.num_actions = A.NUM_ACTIONS
        self._seed = streams.kernel_seed(seed, VectorGameError)
        self._started = False
        self._s = _kernel.new_state(g)
        self._hands_view = self._s["hands"][:, :n]
        self._hands_view.flags.writeable = False
        self._log = np.zeros((g, 1024) if self.record else (0, 0), dtype=np.int32)
        self._longest = 0
        self._finished: list[np.ndarray] = []
        self._r = _kernel.make_rules(
            n, self.rules, self.record, points=self.reward == "points", win=self.reward == "win",
            episode_round=self.episode == "round", max_rounds=self.max_rounds or 0,
            **_kernel.observation_tables(self.rules))[()]
        self._all = np.ones(g, dtype=np.bool_)
        self._slots = np.arange(g, dtype=np.int64)
        self._no_keys = np.zeros(g, dtype=np.uint64)
        self._out = tuple(K.outputs(g, n, self.observation_size, A.NUM_ACTIONS) for _ in range(2))
        self._views = tuple(_read_only(o) for o in self._out)
        self._room = _kernel.LOG_ROOM + 8 * n  # log entries one step may add at most
        self._k = 0

    # ------------------------------------------------------------------ API
    def reset(self, seed: int | None = None) -> None:
        """Deal a new game in every slot (games in progress dropped), the streams restarted from ``seed`` if given."""
        reseed = not self._started or seed is not None
        if seed is not None:
            self._seed = streams.kernel_seed(seed, VectorGameError)
        self._started = True
        for out in self._out:
            _clear(out)
        self._k = 0
        self._deal(self._all, reseed)

    def _deal(self, sel: np.ndarray, reseed: bool = False) -> None:
        o = self._out[self._k]
        K.reset_kernel(self._s, self._r, self._log, sel, reseed, self._seed, self._slots, o.obs, o.mask, o.player)
        self._longest = int(self._s["logpos"].max())

    # ------------------------------------------------------------------ the driver API (lama_env.vector_env)
    def reset_slots(self, sel: np.ndarray) -> None:
        """Deal a new game in the slots where ``sel`` (a ``(G,)`` bool array; games in progress dropped)."""
        self._need_reset()
        sel = np.asarray(sel)
        if sel.shape != (self.num_envs,) or sel.dtype != np.bool_:
            raise VectorGameError(f"sel must be a bool array of shape ({self.num_envs},), got {sel.dtype} of shape "
                                  f"{sel.shape}")
        self._deal(sel)

    def play(self, agents: np.ndarray, actions: np.ndarray, sel: np.ndarray, learner: np.ndarray,
             seat_agent: np.ndarray, auto_forced: bool, status: np.ndarray, learner_rewards: np.ndarray,
             ends: PlayEnds, keep_records: bool = True) -> np.ndarray:
        """Apply ``actions``, then play the native seats until each game of ``sel`` waits on Python; return the ended.

        ``status[g]``: ``WAIT_LEARNER``, ``WAIT_OPPONENT``, ``ENDED`` or ``PAUSED`` (call again); the learner's rewards
        add up in ``learner_rewards``; ended games' records are kept if ``keep_records`` (docs/environments.md,
        Vector game, Driving it).
        """
        self._need_reset()
        if self.record and self._longest + self._room > self._log.shape[1]:
            self._grow_log()
        o = self._out[self._k]
        self._longest = K.play_kernel(self._s, self._r, self._log, agents, actions, sel, learner, seat_agent,
                                      auto_forced, self._room, status, learner_rewards,
                                      K.Outputs(o.obs, o.mask, o.player, *ends))
        ended = sel & (status == K.ENDED)
        if self.record and ended.any():
            self._harvest(ended)
            if not keep_records:
                del self._finished[len(self._finished) - int(ended.sum()):]
        if (sel & (status == K.PAUSED)).any():
            self._grow_log()
        return ended

    @property
    def statistics(self) -> np.ndarray:
        """``(G, 5, N)`` int64: each seat's round points, busts, quits, went out and triple llamas so far."""
        return self._s["stats"][:, :, :self.num_players].astype(np.int64)

    def illegal_message(self, g: int, action: Any) -> str:
        """The one-line message of :class:`VectorIllegalActionError` for ``action`` in game ``g``."""
        a = int(action)
        if not 0 <= a < A.NUM_ACTIONS:
            return f"game {g}: action {a} is not an action (valid: 0..{A.NUM_ACTIONS - 1}); no game was changed"
        legal = ", ".join(A.describe(int(x)) for x in np.flatnonzero(self.action_mask[g]))
        return (f"game {g}: illegal action {a} ({A.describe(a)}) for player {int(self._s['cur'][g])}; legal: {legal}; "
                "no game was changed")

    def step(self, actions: Any) -> None:
        """Apply ``actions[g]`` (integers, shape ``(num_envs,)``) for the player to act in every game ``g``.

        An illegal action raises :class:`VectorIllegalActionError` naming the first, and no game is changed.
        """
        if not self._started:
            raise VectorGameError("call reset() before step()")
        acts = np.asarray(actions)
        if acts.shape != (self.num_envs,) or acts.dtype.kind not in "iu":
            raise VectorGameError(f"actions must be integers of shape ({self.num_envs},), got "
                                  f"{acts.dtype} of shape {acts.shape}")
        a64 = acts.astype(np.int64, copy=False)
        bad = K.check_kernel(a64, self._s, self._r)
        if bad >= 0:  # (a uint64 beyond int64 wraps to a negative action: illegal too)
            raise VectorIllegalActionError(self.illegal_message(bad, acts[bad]))
        if self.record and self._longest + self._room > self._log.shape[1]:
            self._grow_log()
        self._k ^= 1
        o = self._out[self._k]
        self._longest = K.step_kernel(self._s, self._r, self._log, a64, self._slots, o)
        if self.record and (o.term.any() or o.trunc.any()):
            self._harvest(o.term | o.trunc)

    def records(self) -> list[dict]:
        """The ``lama-dice-record/1`` records of the games ended since the last call (``record=True``)."""
        if not self.record:
            raise VectorGameError("records() needs VectorGame(..., record=True)")
        logs, self._finished = self._finished, []
        return [log_to_record(log, self.num_players, self.rules) for log in logs]

    def game(self, g: int) -> LamaGame:
        """Slot ``g``'s game now, as a :class:`~lama_env.engine.LamaGame` (:func:`lama_env.snapshot.from_state`)."""
        self._need_reset()
        if isinstance(g, bool) or not isinstance(g, (int, np.integer)) or not 0 <= g < self.num_envs:
            raise VectorGameError(f"g must be a slot 0..{self.num_envs - 1}, got {g!r}")
        return from_state(self._s[int(g)], self.num_players, self.rules)

    def observe(self, seats: Any) -> np.ndarray:
        """Every game seen from ``seats`` (an int, or one per game), as a new ``(G, O)`` float32 array."""
        self._need_reset()
        s = np.broadcast_to(np.asarray(seats), (self.num_envs,))
        if s.dtype.kind not in "iu" or (s < 0).any() or (s >= self.num_players).any():
            raise VectorGameError(f"seats must be integers 0..{self.num_players - 1}")
        out = np.empty((self.num_envs, self.observation_size), dtype=np.float32)
        K.observe_kernel(out, np.ascontiguousarray(s, dtype=np.int64), self._s, self._r)
        return out

    def sample_actions(self, rng: np.random.Generator | None = None) -> np.ndarray:
        """A uniformly random legal action per game (``(G,)`` int64), as the ``random`` agent draws.

        From each slot's second stream, or one 64-bit draw of ``rng`` (a :class:`numpy.random.Generator`) per game.
        """
        self._need_reset()
        if rng is not None and not isinstance(rng, np.random.Generator):
            raise VectorGameError(f"rng must be None or a numpy.random.Generator, got {type(rng).__name__}")
        out = np.empty(self.num_envs, dtype=np.int64)
        keys = self._no_keys if rng is None else rng.bit_generator.random_raw(self.num_envs).astype(np.uint64)
        K.sample_kernel(self._s, self._r, keys, rng is not None, out)
        return out

    def state(self) -> dict[str, np.ndarray]:
        """A copy of everything the games' future depends on, for :meth:`set_state` (``numpy.savez`` saves it).

        Keys: ``games`` (:data:`lama_env._kernel.STATE_DTYPE` records), ``log``, ``seed`` and the last step's
        outputs under their property names.
        """
        self._need_reset()
        o = self._out[self._k]
        return {"games": self._s.copy(), "log": self._log.copy(), "seed": np.array(self._seed, dtype=np.uint64),
                **{key: getattr(o, name).copy() for key, name in _STATE_OUTPUTS.items()}}

    def set_state(self, state: Mapping[str, np.ndarray]) -> None:
        """Restore a :meth:`state` of a vector game of the same size and options (uncollected records dropped)."""
        o = self._out[0]
        want = {"games": self._s, "seed": np.zeros((), np.uint64),
                **{key: getattr(o, name) for key, name in _STATE_OUTPUTS.items()}}
        missing = sorted((set(want) | {"log"}) - set(state))
        if missing:
            raise VectorGameError(f"set_state: missing {', '.join(missing)} (pass what state() returned)")
        for key, ref in want.items():
            a = np.asarray(state[key])
            if a.shape != ref.shape or a.dtype != ref.dtype:
                raise VectorGameError(f"set_state: {key!r} must be {ref.dtype} of shape {ref.shape}, got {a.dtype} "
                                      f"of shape {a.shape} (a state of another vector game?)")
        log = np.asarray(state["log"])
        if log.dtype != np.int32 or log.ndim != 2 or log.shape[0] != self._log.shape[0]:
            raise VectorGameError(f"set_state: 'log' must be int32 with {self._log.shape[0]} rows, got {log.dtype} "
                                  f"of shape {log.shape}")
        self._s[...] = state["games"]
        self._log = log.copy()
        self._seed = np.uint64(state["seed"])
        self._k = 0
        for key, name in _STATE_OUTPUTS.items():
            getattr(o, name)[...] = state[key]
        _clear(self._out[1])
        self._finished = []
        self._started = True
        self._longest = int(self._s["logpos"].max())

    # ---------------------------------------------------------- the step's outputs (read-only views)
    observation = _output("obs", "``(G, O)`` float32: each game seen from its player to act (``encode``).")
    action_mask = _output("mask", "``(G, 129)`` bool: the legal actions of the player to act.")
    current_player = _output("player", "``(G,)`` int64: whose decision it is in each game.")
    rewards = _output("rew", "``(G, N)`` float32: the reward each seat got from the last step (zeros after a reset).")
    terminated = _output("term", "``(G,)`` bool: the game (or round: ``episode``) ended on the last step, reset.")
    truncated = _output("trunc", "``(G,)`` bool: the last step ended the ``max_rounds``-th round; it was reset.")
    final_observation = _output("final_obs", "``(G, O)`` float32: the ended games seen from their last actor (else 0).")
    round_ended = _output("round_end", "``(G,)`` bool: a round ended on the last step (the next one is dealt).")
    rolled = _output("rolled", "``(G, 3)`` int8: the dice of the last step's roll (face indices); -1 where no roll.")

    @property
    def final_totals(self) -> np.ndarray:
        """``(G, N)`` int64: the ended games' totals (stale where no episode ended)."""
        self._need_reset()
        return self._views[self._k]["fin"][:, 0, :]

    # ---------------------------------------------------------- the games' state (copies)
    displays = _field("disp", "``(G, N, 7)``: each display's cards per face index.", seats=True)
    totals = _field("tot", "``(G, N)``: chip totals.", seats=True)
    quit = _field("quit", "``(G, N)`` bool: who has quit this round.", np.bool_, seats=True)
    num_active = _field("active", "``(G,)``: players who have not quit this round.")
    phase = _field("phase", "``(G,)``: the decision asked, as :class:`lama_env.engine.Phase` values.")
    start_player = _field("start", "``(G,)``: each round's start player.")
    round_index = _field("nround", "``(G,)``: the current round of each game, 0-based.")

    @property
    def hands(self) -> np.ndarray:
        """``(G, N, 6)`` int8: each game's deal of the current round, in deal order (a read-only view)."""
        self._need_reset()
        return self._hands_view

    @property
    def row(self) -> np.ndarray:
        """``(G, 7)`` int8: 1 where the row card of that face is still there."""
        return ((self._s["row"][:, None] >> np.arange(NUM_FACES)) & 1).astype(np.int8)

    @property
    def dice(self) -> np.ndarray:
        """``(G, 3)``: the pending roll of a discard or take decision (face indices), -1 at a turn."""
        return np.where((self._s["phase"] != K.TURN)[:, None], self._s["dice"].astype(np.int64), -1)

    def _need_reset(self) -> None:
        if not self._started:
            raise VectorGameError("call reset() first")

    def _grow_log(self) -> None:
        self._log = np.concatenate([self._log, np.zeros_like(self._log)], axis=1)

    def _harvest(self, term: np.ndarray) -> None:
        """Keep the logs of the games that ended in the slots of ``term``; the new games' logs move to the front."""
        log, s = self._log, self._s
        for g in np.flatnonzero(term):
            d, p = int(s["done_len"][g]), int(s["logpos"][g])
            self._finished.append(log[g, :d].copy())
            log[g, :p - d] = log[g, d:p]
            s["logpos"][g] = p - d
        self._longest = int(s["logpos"].max())

    def __repr__(self) -> str:
        """Show the size and the options."""
        cut = "" if self.max_rounds is None else f", max_rounds={self.max_rounds}"
        return (f"VectorGame(num_envs={self.num_envs}, num_players={self.num_players}, reward={self.reward!r}, "
                f"episode={self.episode!r}{cut}, record={self.record})")
