"""The Gymnasium vector env of ``LamaDice-v1``: many learner seats in one compiled call.

``gymnasium.make_vec("LamaDice-v1", num_envs=256, vectorization_mode="vector_entry_point")`` (docs: Vector env).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple

import gymnasium as gym
import numpy as np
from gymnasium import spaces
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

from . import _vector_kernel as K
from . import actions as A
from . import options as opt
from ._kernel import AGENT_DTYPE
from .batched import NativePolicy, native_description
from .engine import IllegalActionError
from .opponents import PolicyLike
from .options import EnvOptions, LamaEnvError, check_learner_seat, opponent_name, seat_opponents
from .reader import check_seed
from .rules import RulesConfig
from .vector import PlayEnds, VectorGame, VectorIllegalActionError

__all__ = ["LamaDiceVectorEnv", "VectorStep"]

#: Python agents kept beyond those seated before the table of agents is pruned.
_SPARE_AGENTS = 64


class VectorStep(NamedTuple):
    """What :meth:`LamaDiceVectorEnv.step_arrays` returns: a step's arrays, without the infos built of them."""

    obs: np.ndarray
    rewards: np.ndarray
    terminated: np.ndarray
    truncated: np.ndarray
    final_obs: np.ndarray
    final_learner_seat: np.ndarray
    illegal: np.ndarray
    episode_stats: dict[str, np.ndarray]


def _allowed(actions: np.ndarray, masks: np.ndarray) -> np.ndarray:
    """``(B,)`` bool: whether ``actions[i]`` is an action that ``masks[i]`` allows."""
    ok = (actions >= 0) & (actions < A.NUM_ACTIONS)
    ok[ok] = masks[np.flatnonzero(ok), actions[ok]]
    return ok


class LamaDiceVectorEnv(EnvOptions, VectorEnv):
    """``num_envs`` learner seats of ``LamaDice-v1`` in one vector env (docs/environments.md, Vector env)."""

    metadata = {"autoreset_mode": AutoresetMode.NEXT_STEP, "render_modes": []}  # noqa: RUF012 (gymnasium's)

    def __init__(self, num_envs: int = 16, num_players: int = 2, opponents: Sequence[Any] | str | None = None,
                 episode: str = "game", reward: str = "win", learner_seat: int | None = None, auto_forced: bool = False,
                 illegal: str = "lose", illegal_reward: float = -1.0, max_rounds: int | None = None,
                 render_mode: str | None = None, autoreset_mode: AutoresetMode | str = AutoresetMode.NEXT_STEP,
                 record: bool = False, max_episode_steps: int | None = None, **rules: Any) -> None:
        """Check the options, build the opponents and the vector game (see the class docstring)."""
        # first: an unknown keyword is a TypeError (named after this __init__'s own keywords)
        rules_config = RulesConfig.from_keywords(rules, f"{type(self).__name__}.__init__()")
        self._check_options(rules_config, num_players, episode, reward, auto_forced, max_rounds,
                            {"learner_seat": learner_seat, "illegal": illegal, "illegal_reward": illegal_reward})
        if isinstance(num_envs, bool) or not isinstance(num_envs, (int, np.integer)) or num_envs < 1:
            raise LamaEnvError(f"num_envs must be an integer >= 1, got {num_envs!r}")
        self.num_envs = g = int(num_envs)
        n = self.num_players
        if render_mode is not None:
            raise LamaEnvError(f"the vector env of LamaDice-v1 draws nothing: render_mode must be None, got "
                               f"{render_mode!r} (render a scalar gymnasium.make('LamaDice-v1') env)")
        self.render_mode = None
        if max_episode_steps is not None:
            raise LamaEnvError("max_episode_steps is not supported by the vector env: use max_rounds")
        try:
            self.autoreset_mode = AutoresetMode(autoreset_mode)
        except ValueError:
            self.autoreset_mode = AutoresetMode.DISABLED  # refused below
        if self.autoreset_mode == AutoresetMode.DISABLED:
            raise LamaEnvError(f"autoreset_mode must be AutoresetMode.NEXT_STEP or SAME_STEP, got {autoreset_mode!r}")
        self.metadata = {**type(self).metadata, "autoreset_mode": self.autoreset_mode}
        self.record = bool(record)

        self.opponents = seat_opponents(opponents, n, lambda o: isinstance(o, (PolicyLike, NativePolicy)) or any(
            callable(getattr(o, m, None)) for m in ("act_observations", "act_batch", "episode_policy")),
            "an agent spec, a policy object (act(game, legal)), a native description, or have act_observations "
            "/ episode_policy")
        self._agents: list[Any] = []
        self._index: dict[int, int] = {}
        self._agent_table = np.zeros(0, AGENT_DTYPE)  # per agent: its native kind (-1: Python) and tables
        # per opponent position: a fixed agent index, or an object with episode_policy()
        self._sources: list[int | Any] = [opp if callable(getattr(opp, "episode_policy", None)) else self._agent(opp)
                                          for opp in self.opponents]
        self._fixed = sorted({k for k in self._sources if isinstance(k, int)})

        self._vg = VectorGame(g, n, record=self.record, reward=self.reward_mode, episode=self.episode,
                              max_rounds=self.max_rounds, rules=self.rules)
        obs_size = self._vg.observation_size
        self.single_observation_space = spaces.Box(0.0, 1.0, (obs_size,), dtype=np.float32)
        self.single_action_space = spaces.Discrete(A.NUM_ACTIONS)
        self.observation_space = batch_space(self.single_observation_space, g)
        self.action_space = batch_space(self.single_action_space, g)
        self._learner = np.zeros(g, dtype=np.int64)
        self._seat_agent = np.zeros((g, n), dtype=np.int64)
        self._offset = np.zeros(g, dtype=np.int64)
        self._episodes = np.zeros(g, dtype=np.int64)
        self._autoreset = np.zeros(g, dtype=np.bool_)
        self._status = np.zeros(g, dtype=np.int64)
        self._none = np.full(g, -1, dtype=np.int64)
        self._ends = PlayEnds.zeros(g, n, obs_size, np.float64)  # float64: the scalar env's rewards, bit for bit
        # the learner's rewards of one step (over several kernel calls)
        self._lrew = np.zeros(g, dtype=np.float64)
        self._slots: list[int] = []  # the slot of each record waiting in the vector game (record=True)
        self._started = False
        self.closed = False

    def _agent(self, agent: Any) -> int:
        """The index of ``agent`` in the table of agents (added on first sight: native or Python)."""
        k = self._index.get(id(agent))
        if k is not None:
            return k
        desc = native_description(agent, self.rules)
        if desc is None and not any(callable(getattr(agent, m, None))
                                    for m in ("act_observations", "act_batch", "act")):
            raise LamaEnvError(f"episode_policy() gave {agent!r}: not a policy (no act, act_batch, "
                               "act_observations or native description)")
        k = len(self._agents)
        self._agents.append(agent)
        self._index[id(agent)] = k
        row = np.zeros(1, self._agent_table.dtype)
        row["kind"] = -1  # a Python agent: no tables
        if desc is not None:
            row["kind"], row["quit_table"], row["take_rank"] = desc.kind, desc.quit_table, desc.take_rank
        self._agent_table = np.concatenate([self._agent_table, row])
        return k

    def _prune_agents(self) -> None:
        """Forget the per-episode agents no game seats any more (a self-play pool moves on)."""
        keep = sorted(set(np.unique(self._seat_agent).tolist()) | set(self._fixed))
        remap = np.zeros(len(self._agents), dtype=np.int64)
        remap[keep] = np.arange(len(keep))
        self._agents = [self._agents[k] for k in keep]
        self._index = {id(a): i for i, a in enumerate(self._agents)}
        self._agent_table = self._agent_table[keep]
        self._seat_agent = remap[self._seat_agent]
        self._sources = [int(remap[s]) if isinstance(s, int) else s for s in self._sources]
        self._fixed = sorted({int(remap[k]) for k in self._fixed})

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        """Start a new episode in every sub-env (``options``: ``reset_mask``, ``learner_seat``); ``(obs, infos)``."""
        if seed is not None:
            check_seed(seed, LamaEnvError)  # 0..MAX_SEED, the one bound of a seed (lama_env.reader)
        options = dict(options or {})
        sel = options.pop("reset_mask", None)
        seat = options.pop("learner_seat", None)
        if options:
            raise LamaEnvError(f"unknown reset options {sorted(options)} (valid: learner_seat, reset_mask)")
        n, vg = self.num_players, self._vg
        if seat is not None:
            seat = check_learner_seat(self, seat, "options['learner_seat']")
        if sel is not None:
            sel = np.asarray(sel)
            if sel.shape != (self.num_envs,) or sel.dtype != np.bool_ or not sel.any():
                raise LamaEnvError(f"options['reset_mask'] must be a bool array of shape ({self.num_envs},) with "
                                   "at least one True")
            if not self._started or seed is not None:
                raise LamaEnvError("options['reset_mask'] needs a first reset() and no seed")
            vg.reset_slots(sel)
        else:
            sel = np.ones(self.num_envs, dtype=np.bool_)
            if seed is not None or not self._started:
                rng = np.random.default_rng(seed)
                vg.reset(seed=None if seed is None else int(seed))
                self._offset = rng.integers(n, size=self.num_envs).astype(np.int64)
                self._episodes.fill(0)
                if seed is not None:
                    for opp in self.opponents:
                        if callable(getattr(opp, "seed", None)):
                            opp.seed(int(rng.integers(2**31)))
            else:
                vg.reset_slots(sel)
        self._started = True
        self._autoreset[sel] = False
        self._begin(sel, seat)
        return vg.observation.copy(), self._infos(keys=sel)

    def step(self, actions: Any):
        """Apply each learner's action, then play the opponents until every game waits on its learner."""
        r = self.step_arrays(actions)
        done = r.terminated | r.truncated
        if self.autoreset_mode == AutoresetMode.NEXT_STEP:
            infos = self._infos(done, stats=r.episode_stats, illegal=r.illegal)
        else:
            infos = self._infos()
            infos["final_obs"], infos["_final_obs"] = r.final_obs, done.copy()
            if done.any():
                infos["final_info"] = self._infos(done, stats=r.episode_stats, illegal=r.illegal, keys=done,
                                                  seats=r.final_learner_seat)
                infos["_final_info"] = done.copy()
        return r.obs, r.rewards, r.terminated, r.truncated, infos

    def step_arrays(self, actions: Any) -> VectorStep:
        """:meth:`step` without building the infos: the arrays they are made of (a :class:`VectorStep`)."""
        if not self._started:
            raise LamaEnvError("call reset() before step()")
        acts = np.asarray(actions)
        if acts.shape != (self.num_envs,) or acts.dtype.kind not in "iu":
            raise LamaEnvError(f"actions must be integers of shape ({self.num_envs},), got {acts.dtype} of shape "
                               f"{acts.shape}")
        vg = self._vg
        resetting = self._autoreset.copy()
        stepping = ~resetting
        a64 = acts.astype(np.int64)
        ok = _allowed(a64, vg.action_mask)
        illegal = stepping & ~ok
        any_illegal = bool(illegal.any())
        if any_illegal:
            first = int(np.flatnonzero(illegal)[0])
            if self.illegal == "raise":
                raise VectorIllegalActionError(vg.illegal_message(first, acts[first]))
            bad = ", ".join(str(int(x)) for x in np.flatnonzero(illegal)[:5])
            gym.logger.warn(
                "%s", f"LamaDice-v1 (vector): illegal action in sub-env{'s' if illegal.sum() > 1 else ''} {bad}"
                f"{'...' if illegal.sum() > 5 else ''} (e.g. {int(acts[first])!r} in sub-env {first}); those episodes "
                f"end with reward {self.illegal_reward} (illegal='lose').",
                category=opt.IllegalMoveWarning, stacklevel=3)
        play = stepping & ok
        self._lrew.fill(0.0)
        ended = self._play(play, np.where(play, a64, -1), record_end=True)
        rewards = np.where(play, self._lrew, 0.0)
        e = self._ends  # where an episode ended, its end (the kernel leaves the ended games' ends alone)
        term = ended & e.term
        trunc = ended & ~e.term
        obs = vg.observation.copy()
        stats = self._episode_stats(ended, illegal)
        if any_illegal:
            rewards[illegal] = self.illegal_reward
            term |= illegal
            e.final_obs[illegal] = obs[illegal]  # the game unchanged, seen from the learner
            vg.reset_slots(illegal)  # the game is dropped: a new one waits in the slot
        done = term | trunc
        any_done = bool(done.any())
        seats = self._learner.copy()
        if self.autoreset_mode == AutoresetMode.NEXT_STEP:
            if resetting.any():
                self._begin(resetting)
                obs[resetting] = vg.observation[resetting]
            if any_done:
                obs[done] = e.final_obs[done]
            self._autoreset = done
            final_obs = obs
        else:
            final_obs = np.zeros_like(obs)
            if any_done:
                final_obs[done] = e.final_obs[done]
                self._begin(done)
                obs[done] = vg.observation[done]
        return VectorStep(obs, rewards, term, trunc, final_obs, seats, illegal, stats)

    def action_masks(self) -> np.ndarray:
        """``(N, 129)`` bool: each learner's legal actions (all False for an episode that ended, NEXT_STEP)."""
        if not self._started:
            raise LamaEnvError("call reset() first")
        m = self._vg.action_mask.copy()
        m[self._autoreset] = False
        return m

    def records(self) -> list[tuple[int, dict]]:
        """``(sub-env, record)`` of each game ended since the last call (``record=True``; illegal ones dropped)."""
        if not self.record:
            raise LamaEnvError("records() needs record=True")
        recs = self._vg.records()
        slots, self._slots = self._slots, []
        return list(zip(slots, recs, strict=True))

    @property
    def learner_seats(self) -> np.ndarray:
        """``(N,)``: each sub-env's learner seat in its current episode (a copy)."""
        return self._learner.copy()

    @property
    def vector_game(self) -> VectorGame:
        """The games (read them, don't step them)."""
        return self._vg

    def _begin(self, sel: np.ndarray, seat: int | None = None) -> None:
        """Start a new episode in the slots of ``sel`` (their games already dealt): seats, opponents, play."""
        n = self.num_players
        for _ in range(1000):
            idx = np.flatnonzero(sel)
            fixed = seat if seat is not None else self.learner_seat_option
            learner = (self._offset[idx] + self._episodes[idx]) % n if fixed is None else np.full(len(idx), fixed)
            self._episodes[idx] += 1
            self._learner[idx] = learner
            for i, src in enumerate(self._sources):
                seats = (learner + 1 + i) % n
                if isinstance(src, int):
                    self._seat_agent[idx, seats] = src
                else:
                    self._seat_agent[idx, seats] = [self._agent(src.episode_policy()) for _ in range(len(idx))]
            if len(self._agents) > len(self._fixed) + _SPARE_AGENTS:
                self._prune_agents()
            sel = self._play(sel, self._none, record_end=False)
            if not sel.any():
                return
            # a game that ended before its learner's first decision is dropped, as the scalar env's reset does
        raise LamaEnvError("could not start an episode in which the learner gets a decision")  # pragma: no cover

    def _play(self, sel: np.ndarray, actions: np.ndarray, record_end: bool) -> np.ndarray:
        """Play ``sel`` (first ``actions``, -1 none) until each waits on its learner; the slots that ended."""
        vg, e = self._vg, self._ends
        ended_all = np.zeros(self.num_envs, dtype=np.bool_)
        lrew = self._lrew if record_end else np.zeros(self.num_envs, dtype=np.float64)
        keep = record_end and self.record
        while True:
            ended = vg.play(self._agent_table, actions, sel, self._learner, self._seat_agent, self.auto_forced,
                            self._status, lrew, e, keep_records=keep)
            status = self._status
            ended_all |= ended
            if keep and ended.any():
                self._slots.extend(np.flatnonzero(ended).tolist())
            waiting = sel & (status == K.WAIT_OPPONENT)
            paused = sel & (status == K.PAUSED)
            if not waiting.any() and not paused.any():
                return ended_all
            actions = np.full(self.num_envs, -1, dtype=np.int64)
            if waiting.any():
                self._opponents_act(np.flatnonzero(waiting), actions)
            sel = waiting | paused

    def _opponents_act(self, idx: np.ndarray, actions: np.ndarray) -> None:
        """Ask the Python opponents to act in the games ``idx`` (one call per agent); write ``actions``."""
        vg = self._vg
        seats = vg.current_player[idx]
        agents = self._seat_agent[idx, seats]
        for k in np.unique(agents):
            games = idx[agents == k]
            agent = self._agents[int(k)]
            masks = vg.action_mask[games]
            batched = getattr(agent, "act_observations", None)
            if callable(batched):
                acts = np.asarray(batched(vg.observation[games], masks.copy())).reshape(-1)
            else:
                views = [vg.game(int(x)) for x in games]
                legals = [v.legal_actions() for v in views]
                act_batch = getattr(agent, "act_batch", None)
                if callable(act_batch):
                    acts = np.asarray(act_batch(views, legals)).reshape(-1)
                else:
                    acts = np.asarray([agent.act(v, legal) for v, legal in zip(views, legals, strict=True)])
            if acts.shape != (len(games),) or acts.dtype.kind not in "iu":
                raise IllegalActionError(f"opponent {opponent_name(agent)!r} gave {acts!r} for {len(games)} games, "
                                         "not one integer action per game")
            legal = _allowed(acts, masks)
            if not legal.all():
                j = int(np.flatnonzero(~legal)[0])
                gj = int(games[j])
                raise IllegalActionError(f"opponent {opponent_name(agent)!r} at seat {int(vg.current_player[gj])} of "
                                         f"sub-env {gj}: {vg.illegal_message(gj, acts[j])}")
            actions[games] = acts

    def _episode_stats(self, ended: np.ndarray, illegal: np.ndarray) -> dict[str, np.ndarray]:
        """The learner's ``episode_stats`` arrays: the ended episodes' (and the illegal ones'), zeros elsewhere."""
        g = self.num_envs
        fst = np.zeros((2, g), dtype=np.float64)
        ist = np.zeros((6, g), dtype=np.int64)
        rows = np.flatnonzero(ended | illegal)
        if len(rows):
            if illegal.any():  # the game as it stands (an unfinished round: its quits count, its points not yet)
                vg, b, e = self._vg, np.flatnonzero(illegal), self._ends
                e.fin[b, 0] = vg.totals[b]
                e.fin[b, 1:] = vg.statistics[b]
                e.fin_rounds[b] = vg.round_index[b]
            K.stats_kernel(rows, self._learner, self._ends.fin, self._ends.fin_rounds, illegal, fst, ist)
        return {"win": fst[0], "rounds": ist[0], "points_per_round": fst[1], "final_points": ist[1],
                "busts": ist[2], "quits": ist[3], "went_out": ist[4], "illegal": ist[5]}

    def _infos(self, done: np.ndarray | None = None, stats: dict[str, np.ndarray] | None = None,
               illegal: np.ndarray | None = None, keys: np.ndarray | None = None,
               seats: np.ndarray | None = None) -> dict[str, Any]:
        """The infos, as SyncVectorEnv stacks those of the scalar env (``keys``: the ``_key`` masks; None: all)."""
        g = self.num_envs
        keys = np.ones(g, dtype=np.bool_) if keys is None else keys
        m = self._vg.action_mask.astype(np.int8)
        if done is not None:
            m[done] = 0
        if stats is None:
            stats = {k: np.zeros(g, dtype=np.float64 if isinstance(v, float) else np.int64)
                     for k, v in opt.NO_EPISODE_STATS.items()}
        es: dict[str, Any] = {}
        for k, v in stats.items():
            es[k], es[f"_{k}"] = v, keys.copy()
        return {
            "action_mask": m, "_action_mask": keys.copy(),
            "learner_seat": self._learner.copy() if seats is None else seats, "_learner_seat": keys.copy(),
            "illegal_action": np.zeros(g, dtype=np.bool_) if illegal is None else illegal.copy(),
            "_illegal_action": keys.copy(),
            "episode_stats": es, "_episode_stats": keys.copy(),
        }

    def __repr__(self) -> str:
        """Show the size and the options."""
        return (f"LamaDiceVectorEnv(num_envs={self.num_envs}, num_players={self.num_players}, "
                f"opponents={[opponent_name(o) for o in self.opponents]}, episode={self.episode!r}, "
                f"reward={self.reward_mode!r}, autoreset_mode={self.autoreset_mode.name})")

