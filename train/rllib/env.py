"""The env of the RLlib trainer: the PettingZoo env ``lama_dice_v1`` as an RLlib ``MultiAgentEnv``.

:class:`LamaDiceRLlibEnv` wraps the env through RLlib's ``PettingZooEnv``
wrapper, plays optional opponents (agent specs) inside the env, and puts each
learner seat's game statistics in its final ``infos`` (``episode_stats``, which
:mod:`lama_dice.train.rllib.metrics` turns into metrics).

This module imports ray at import time: import it only where the ``rllib``
extra is installed.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
from ray.rllib.env.wrappers.pettingzoo_env import PettingZooEnv

from lama_env.rules import RulesConfig

__all__ = ["LamaDiceRLlibEnv"]


class LamaDiceRLlibEnv(PettingZooEnv):
    """``lama_dice_v1`` as an RLlib ``MultiAgentEnv``, through RLlib's ``PettingZooEnv`` wrapper.

    Every seat that is not an opponent is an RLlib agent (``player_0`` ..),
    mapped to an RLModule by the algorithm's policy mapping (the shared
    ``"main"`` module: self-play). Optionally some seats are played *inside*
    the env by agents built from specs (``optimal``, ``threshold:20``, a frozen
    ``ppo:PATH`` or ``rllib:PATH`` checkpoint...): at each reset one seat is
    drawn as the learner's, and every other seat is the learner's own policy
    with probability ``selfplay_weight`` (or whenever ``opponents`` is empty),
    else an opponent drawn by weight. Opponent seats never appear in what the
    env returns; their moves are applied between the learner's.

    Args:
        config: RLlib's ``env_config``, a mapping with the keys of
            :func:`lama_env.lama_dice_v1.env` (``num_players``, ``episode``,
            ``reward``, ``auto_forced``, ``max_rounds``, ``rules``: a mapping of
            rules fields) and ``opponents`` (a list of ``[spec, weight]``),
            ``selfplay_weight`` (float in [0, 1], default 1).

    When the episode ends, each returned agent's ``infos`` holds
    ``episode_stats``: ``win`` (1, ``1/k`` in a ``k``-way tie for the fewest
    points, else 0), ``rounds``, ``points`` (round points over the episode),
    ``points_per_round``, ``final_points`` (chip total), ``busts``, ``quits``,
    ``went_out`` and ``steps`` (the seat's decisions) -- the names of the
    Gymnasium env's ``episode_stats``. A bust is credited to the seat whose
    roll ended the round (a roll is never a forced action, so that is always
    the acting seat).

    Raises:
        lama_env.errors.LamaDiceError: a bad option, rules field or opponent spec.
    """

    def __init__(self, config: Mapping[str, Any] | None = None) -> None:
        """Build the AEC env and the opponents from ``config`` (see the class docstring for its keys)."""
        from lama_dice.agents.registry import make_agent
        from lama_env import lama_dice_v1

        cfg = dict(config or {})
        opponents = [(str(s), float(w)) for s, w in cfg.pop("opponents", ()) or ()]
        self.selfplay_weight = float(cfg.pop("selfplay_weight", 1.0))
        rules = RulesConfig.from_dict(cfg.pop("rules", None))  # plain data across RLlib's env_config; parsed here
        kwargs = {k: cfg[k] for k in ("num_players", "episode", "reward", "auto_forced", "max_rounds") if k in cfg}
        aec = lama_dice_v1.env(**kwargs, rules=rules)
        super().__init__(aec)
        self._raw = aec.unwrapped
        self.num_players = self._raw.num_players
        self._names = tuple(self._raw.possible_agents)
        self._seat = {a: i for i, a in enumerate(self._names)}
        self._opponent_specs = [s for s, _ in opponents]
        w = np.array([w for _, w in opponents], dtype=float)
        self._opponent_p = w / w.sum() if len(w) else w
        self._opponent_policies = [make_agent(s) for s in self._opponent_specs]
        self._rng = np.random.default_rng()
        self._opponents: dict[str, Any] = {}
        self._visible: set[str] = set(self._names)

    # ------------------------------------------------------------------ API
    def reset(self, *, seed: int | None = None, options: dict | None = None):
        """Start a new game; draw the opponent seats; play them until a learner seat is to act."""
        if seed is not None:
            self._rng = np.random.default_rng(seed)
            for i, pol in enumerate(self._opponent_policies):
                pol.seed(int(self._rng.integers(2**31)) + i)
        for _ in range(100):
            self.env.reset(seed=seed, options=options)
            seed = None  # a re-deal continues the same stream
            self._draw_seats()
            obs, _rew, term, trunc, _info = self._collect()
            if obs and not term["__all__"] and not trunc["__all__"]:
                return obs, {}
        raise RuntimeError("lama_dice_v1: the opponents ended 100 episodes before the learner acted")

    def step(self, action: Mapping[str, Any]):
        """Apply the acting learner seat's action, then the opponents' until a learner seat is to act."""
        agent = self.env.agent_selection
        self._act(agent, action[agent])
        return self._collect()

    # ------------------------------------------------------------- internals
    def _draw_seats(self) -> None:
        n = self.num_players
        self._opponents = {}
        if self._opponent_policies and n > 1:
            learner = int(self._rng.integers(n))
            for p in range(n):
                if p == learner or self._rng.random() < self.selfplay_weight:
                    continue
                k = int(self._rng.choice(len(self._opponent_policies), p=self._opponent_p))
                self._opponents[self._names[p]] = self._opponent_policies[k]
        self._visible = {a for a in self._names if a not in self._opponents}
        self._steps = [0] * n

    def _act(self, agent: str, action: Any) -> None:
        """Step the AEC env with ``agent``'s action, counting the seat's decisions."""
        self._steps[self._seat[agent]] += 1
        self.env.step(action)

    def _episode_stats(self, agent: str) -> dict[str, float]:
        from lama_env.rules import win_shares

        g = self._raw.game
        p = self._seat[agent]
        st = g.statistics()
        rounds = st["rounds"]
        return {
            "win": win_shares(g.totals)[p],
            "rounds": rounds,
            "points": st["points"][p],
            "points_per_round": st["points"][p] / rounds if rounds else 0.0,
            "final_points": g.totals[p],
            "busts": st["busts"][p],
            "quits": st["quits"][p],
            "went_out": st["went_out"][p],
            "steps": self._steps[p],
        }

    def _collect(self):
        """Like ``PettingZooEnv.step``'s loop, with opponent seats played here and left out of the dicts."""
        aec = self.env
        obs_d: dict[str, Any] = {}
        rew_d: dict[str, float] = {}
        term_d: dict[str, bool] = {}
        trunc_d: dict[str, bool] = {}
        info_d: dict[str, dict] = {}
        while aec.agents:
            agent = aec.agent_selection
            obs, rew, term, trunc, info = aec.last()
            done = term or trunc
            if agent in self._visible:
                obs_d[agent] = obs
                rew_d[agent] = rew
                term_d[agent] = term
                trunc_d[agent] = trunc
                info_d[agent] = dict(info)
                if done:
                    info_d[agent]["episode_stats"] = self._episode_stats(agent)
            if done:
                aec.step(None)
            elif agent in self._visible:
                break
            else:
                g = self._raw.game
                self._act(agent, self._opponents[agent].act(g, g.legal_actions()))
        all_gone = not aec.agents
        term_d["__all__"] = all_gone and all(term_d.values())
        trunc_d["__all__"] = all_gone and all(trunc_d.values())
        return obs_d, rew_d, term_d, trunc_d, info_d
