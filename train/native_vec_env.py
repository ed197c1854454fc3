"""``env.vec_env: native``: an SB3 ``VecEnv`` over the vector env of ``LamaDice-v1``, for MaskablePPO.

:class:`NativeVecEnv` puts all ``n_envs`` learner seats into one
:class:`lama_env.vector_env.LamaDiceVectorEnv` (one compiled step for all games, the native
opponents playing inside it) and speaks SB3's ``VecEnv`` protocol: ``reset()`` returns the
observations, ``step_wait()`` ``(obs, rewards, dones, infos)`` with an episode's last
observation in ``infos[i]["terminal_observation"]`` and the new episode's first one in
``obs[i]`` (the vector env runs in ``AutoresetMode.SAME_STEP``), ``TimeLimit.truncated`` and
the scalar env's ``episode_stats``, ``illegal_action`` and ``learner_seat`` in the infos of
finished episodes (other infos are empty), and ``action_masks()`` / ``env_method("action_masks")``
give the ``(n_envs, 129)`` masks that sb3-contrib's ``get_action_masks`` stacks.  Rewards are
multiplied by ``reward_scale``.

The opponents are the trainer's (:func:`lama_dice.train.trainer.make_opponents`):

* agent specs and policies: native ones play in the kernel; learned ones
  (:class:`~lama_dice.agents.learned.LearnedPolicy`: ``ppo:PATH``, self-play snapshots) are
  wrapped in :class:`ObservationPolicy`, one forward pass for all the games waiting on them;
  others (``optimal``, ``lookahead``) play on game views, at Python speed;
* a :class:`~lama_dice.train.selfplay.MixtureOpponent` becomes an :class:`EpisodeSeat`: at the
  start of every episode of every game it draws who plays the seat, as it does in each scalar
  env (a pool snapshot with probability ``selfplay.weight``, else a configured opponent by
  weight), and the draw plays as above.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from gymnasium.vector import AutoresetMode
from stable_baselines3.common.vec_env import VecEnv

from lama_dice.agents.learned import LearnedPolicy
from lama_dice.agents.registry import make_agent
from lama_env.options import NO_EPISODE_STATS, check_reward
from lama_env.rules import RULES_KEYWORDS, RulesConfig
from lama_env.vector_env import LamaDiceVectorEnv

from .selfplay import MixtureOpponent

__all__ = ["EpisodeSeat", "NativeVecEnv", "ObservationPolicy"]


class ObservationPolicy:
    """A learned policy as a batched opponent of the vector env: ``act_observations(obs, mask)``.

    One forward pass (:meth:`LearnedPolicy.logits`) for all the games given, then the policy's
    own choice: the most likely legal action (``deterministic``) or a sample of the masked
    distribution drawn with the policy's generator, as :meth:`LearnedPolicy.act_batch` does.
    """

    def __init__(self, policy: LearnedPolicy) -> None:
        """Wrap ``policy`` (shared, not copied)."""
        self.policy = policy
        self.spec = policy.spec

    def act_observations(self, obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """One action per row of ``obs`` (``(B, O)`` float32) among the legal ones of ``mask`` (``(B, 129)`` bool)."""
        return self.policy.act_observations(obs, mask)

    def act(self, game: Any, legal: Sequence[int]) -> int:
        """The wrapped policy's action in a game object."""
        return self.policy.act(game, legal)

    def seed(self, seed: int | None) -> None:
        """Reseed the wrapped policy."""
        self.policy.seed(seed)


class _Adapter:
    """Learned policies -> their :class:`ObservationPolicy` (one per policy object, kept while it is used)."""

    def __init__(self) -> None:
        self._wrapped: dict[int, tuple[LearnedPolicy, ObservationPolicy]] = {}

    def __call__(self, policy: Any) -> Any:
        if not isinstance(policy, LearnedPolicy):
            return policy
        hit = self._wrapped.get(id(policy))
        if hit is None or hit[0] is not policy:
            if len(self._wrapped) > 256:  # a long self-play run: drop the old snapshots' wrappers
                self._wrapped.clear()
            hit = self._wrapped[id(policy)] = (policy, ObservationPolicy(policy))
        return hit[1]


class EpisodeSeat:
    """A :class:`MixtureOpponent` as a per-episode opponent of the vector env (``episode_policy()``)."""

    def __init__(self, mixture: MixtureOpponent, adapt: Any, rules: RulesConfig) -> None:
        """Draw from ``mixture``; ``adapt`` turns a drawn policy into what the vector env plays best."""
        self.mixture = mixture
        self.spec = mixture.spec
        self._adapt = adapt

    def episode_policy(self) -> Any:
        """Draw who plays the seat for the next episode (the mixture's draw)."""
        self.mixture._draw()  # the draw MixtureOpponent makes when a new game starts
        return self._adapt(self.mixture.current)

    def seed(self, seed: int | None) -> None:
        """Reseed the draws and the configured opponents."""
        self.mixture.seed(seed)

    def act(self, game: Any, legal: Sequence[int]) -> int:
        """The mixture's own action (for a scalar env)."""
        return self.mixture.act(game, legal)


class NativeVecEnv(VecEnv):
    """``num_envs`` learner seats of ``LamaDice-v1`` as one SB3 ``VecEnv`` (see the module docstring).

    Args:
        num_envs: learner seats (games).
        num_players: players per game.
        opponents: agent specs, policies or :class:`MixtureOpponent` seats (one for all opponent
            seats, or one per seat).
        reward_scale: multiply every reward by this.
        **kwargs: the other keywords of :class:`~lama_env.vector_env.LamaDiceVectorEnv`
            (``episode``, ``reward``, ``rules`` or the rules fields, ...).
    """

    def __init__(self, num_envs: int, num_players: int = 2, opponents: Sequence[Any] | str | None = None,
                 reward_scale: float = 1.0, **kwargs: Any) -> None:
        """Build the vector env (see the class docstring)."""
        adapt = _Adapter()
        # the rules parsed once, here; the vector env gets the RulesConfig
        rules = RulesConfig.from_keywords({k: kwargs.pop(k) for k in RULES_KEYWORDS if k in kwargs},
                                          "NativeVecEnv.__init__()")
        opps: list[Any] | None = None
        if opponents is not None:
            opps = []
            for o in [opponents] if isinstance(opponents, str) else opponents:
                if isinstance(o, str):
                    o = make_agent(o)
                opps.append(EpisodeSeat(o, adapt, rules) if isinstance(o, MixtureOpponent) else adapt(o))
        self.env = LamaDiceVectorEnv(num_envs, num_players=num_players, opponents=opps,
                                     autoreset_mode=AutoresetMode.SAME_STEP, rules=rules, **kwargs)
        self.reward_scale = check_reward("reward_scale", reward_scale, positive=True)
        self._actions: np.ndarray | None = None
        super().__init__(num_envs, self.env.single_observation_space, self.env.single_action_space)

    # ------------------------------------------------------------------ VecEnv
    def reset(self) -> np.ndarray:
        """Start a new episode in every env (seeded by the last :meth:`seed`, if any)."""
        seed = self._seeds[0]
        obs, _info = self.env.reset(seed=seed)
        self._reset_seeds()
        self._reset_options()
        self.reset_infos = [{} for _ in range(self.num_envs)]
        return obs

    def step_async(self, actions: np.ndarray) -> None:
        """Keep the actions for :meth:`step_wait`."""
        self._actions = np.asarray(actions)

    def step_wait(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[dict[str, Any]]]:
        """Step every game; a finished episode's env is reset at once (its ``terminal_observation`` in the info)."""
        assert self._actions is not None, "step_async() first"
        r = self.env.step_arrays(self._actions)
        self._actions = None
        obs, rew, term, trunc = r.obs, r.rewards, r.terminated, r.truncated
        dones = term | trunc
        infos: list[dict[str, Any]] = [{} for _ in range(self.num_envs)]
        if dones.any():
            stats = r.episode_stats
            for i in np.flatnonzero(dones).tolist():
                infos[i] = {"terminal_observation": r.final_obs[i],
                            "TimeLimit.truncated": bool(trunc[i] and not term[i]),
                            "episode_stats": {k: stats[k][i].item() for k in NO_EPISODE_STATS},
                            "learner_seat": int(r.final_learner_seat[i]), "illegal_action": bool(r.illegal[i])}
        if self.reward_scale != 1.0:
            rew = rew * self.reward_scale
        return obs, rew.astype(np.float32), dones, infos

    def action_masks(self) -> np.ndarray:
        """``(num_envs, 129)`` bool: every learner's legal actions."""
        return self.env.action_masks()

    def close(self) -> None:
        """Close the vector env."""
        self.env.close()

    def get_attr(self, attr_name: str, indices: Any = None) -> list[Any]:
        """The vector env's attribute ``attr_name``, once per env of ``indices``."""
        value = getattr(self.env, attr_name)
        return [value] * len(list(self._get_indices(indices)))

    def set_attr(self, attr_name: str, value: Any, indices: Any = None) -> None:
        """Set the vector env's attribute (all envs share it)."""
        setattr(self.env, attr_name, value)

    def env_method(self, method_name: str, *method_args: Any, indices: Any = None, **method_kwargs: Any) -> list[Any]:
        """``action_masks``: each env's mask (what sb3-contrib's ``get_action_masks`` asks for).

        Raises:
            AttributeError: any other method (the envs are not separate objects).
        """
        if method_name != "action_masks" or method_args or method_kwargs:
            raise AttributeError(f"NativeVecEnv has no per-env method {method_name!r} (only action_masks)")
        masks = self.env.action_masks()
        return list(masks if indices is None else masks[list(self._get_indices(indices))])

    def env_is_wrapped(self, wrapper_class: Any, indices: Any = None) -> list[bool]:
        """No env is wrapped in a Gymnasium wrapper."""
        return [False] * len(list(self._get_indices(indices)))
