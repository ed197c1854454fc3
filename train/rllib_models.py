"""The RLlib-side pieces of the RLlib pipeline (``pip install "lama-dice[rllib]"``).

* :class:`MaskedPPOTorchRLModule`: the action-masking PPO RLModule;
* :class:`LamaDiceRLlibEnv`: the PettingZoo env through RLlib's ``PettingZooEnv``
  wrapper, with optional opponents (agent specs) played inside the env and the
  game's statistics in the final ``infos``;
* :class:`GameStatsCallback`: turns those statistics into RLlib metrics.

The driver (config, training loop, TensorBoard, checkpoints) is
:mod:`train.rllib_train`.

The RLModule
------------
:class:`MaskedPPOTorchRLModule` is RLlib's default PPO torch module (an MLP
encoder, a policy head over the 129 actions, a value head) that reads the
PettingZoo env's dictionary observation as it is, ``{"observation": float32
vector, "action_mask": int8 vector}`` (see :mod:`lama_env.lama_dice_v0`), runs
the network on ``"observation"`` and adds ``log(mask)`` (clipped to a large
negative number) to the action logits, so that an illegal action is never
sampled and never gets a gradient towards it::

    from train.rllib_models import module_spec
    spec = module_spec(hidden=[128, 128], activation="tanh")   # an RLModuleSpec
    config.rl_module(rl_module_spec=MultiRLModuleSpec(rl_module_specs={"main": spec}))

RLlib's own example module (``ray.rllib.examples.rl_modules.classes.
action_masking_rlm``) expects the key ``"observations"`` and mutates the batch
it is given; this one keeps PettingZoo's key, never mutates its input and
accepts the ``int8`` mask, so the env needs no renaming wrapper.

:func:`masked_logits` is that masking on its own. A checkpoint names this
class, so loading one (:class:`agents.rllib_agent.RLlibPolicy`) imports this module.

This module imports ray and torch at import time: import it only where the
``rllib`` extra is installed.
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

import gymnasium as gym
import numpy as np
import torch
from ray.rllib.callbacks.callbacks import RLlibCallback
from ray.rllib.env.wrappers.pettingzoo_env import PettingZooEnv
from ray.rllib.algorithms.ppo.torch.default_ppo_torch_rl_module import DefaultPPOTorchRLModule
from ray.rllib.core.columns import Columns
from ray.rllib.core.rl_module.default_model_config import DefaultModelConfig
from ray.rllib.core.rl_module.rl_module import RLModuleSpec
from ray.rllib.utils.torch_utils import FLOAT_MIN

from train.rllib_train import GAME_METRICS

#: The observation keys of the PettingZoo env.
OBS_KEY = "observation"
MASK_KEY = "action_mask"

__all__ = [
    "GAME_METRICS", "GameStatsCallback", "LamaDiceRLlibEnv", "MASK_KEY", "MaskedPPOTorchRLModule", "OBS_KEY",
    "masked_logits", "module_spec",
]


def masked_logits(logits: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """``logits + max(log(mask), FLOAT_MIN)``: illegal actions (mask 0) get a huge negative logit.

    ``FLOAT_MIN`` is finite, so a row whose mask is all zeros (an agent's final
    observation once the game is over) gives finite, uniform-ish logits rather
    than NaNs.
    """
    return logits + torch.clamp(torch.log(mask.to(logits.dtype)), min=FLOAT_MIN)


class MaskedPPOTorchRLModule(DefaultPPOTorchRLModule):
    """PPO's default torch RLModule with the env's action mask applied to the logits.

    Args (those of :class:`ray.rllib.core.rl_module.rl_module.RLModule`):
        observation_space: the env's ``Dict`` space with an ``"observation"``
            ``Box`` and an ``"action_mask"`` ``Box``; the network is built for
            the ``"observation"`` part.
        action_space: ``Discrete(129)``.
        model_config: RLlib's :class:`DefaultModelConfig` (or a dict of it):
            ``fcnet_hiddens``, ``fcnet_activation``, ``vf_share_layers``, ...

    Raises:
        ValueError: the observation space is not such a ``Dict``.
    """

    def __init__(self, *, observation_space: gym.Space | None = None, **kwargs: Any) -> None:
        if not (isinstance(observation_space, gym.spaces.Dict)
                and OBS_KEY in observation_space.spaces and MASK_KEY in observation_space.spaces):
            raise ValueError(
                f"MaskedPPOTorchRLModule needs a Dict observation space with keys {OBS_KEY!r} and "
                f"{MASK_KEY!r} (the lama_dice_v0 PettingZoo env), got {observation_space}")
        self.observation_space_with_mask = observation_space
        super().__init__(observation_space=observation_space[OBS_KEY], **kwargs)

    def setup(self) -> None:
        # The catalog builds the encoder for the vector part; afterwards the
        # module reports the full Dict space (what the env runners hand it).
        super().setup()
        self.observation_space = self.observation_space_with_mask

    # ------------------------------------------------------------------ helpers
    @staticmethod
    def _split(batch: dict[str, Any]) -> tuple[dict[str, Any], Any]:
        """A shallow copy of ``batch`` with the vector as ``OBS``, and the mask (``None`` if absent)."""
        obs = batch[Columns.OBS]
        if not isinstance(obs, dict):
            return batch, None
        out = dict(batch)
        out[Columns.OBS] = obs[OBS_KEY]
        return out, obs[MASK_KEY]

    @staticmethod
    def _mask(out: dict[str, Any], mask: Any) -> dict[str, Any]:
        if mask is not None:
            out[Columns.ACTION_DIST_INPUTS] = masked_logits(out[Columns.ACTION_DIST_INPUTS], mask)
        return out

    # ------------------------------------------------------------------ forwards
    def _forward(self, batch: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        inner, mask = self._split(batch)
        return self._mask(super()._forward(inner, **kwargs), mask)

    def _forward_train(self, batch: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        inner, mask = self._split(batch)
        return self._mask(super()._forward_train(inner, **kwargs), mask)

    def compute_values(self, batch: dict[str, Any], embeddings: Any = None) -> Any:
        inner, _ = self._split(batch)
        return super().compute_values(inner, embeddings)


def module_spec(hidden: Sequence[int] = (128, 128), activation: str = "tanh",
                vf_share_layers: bool = False) -> RLModuleSpec:
    """The :class:`RLModuleSpec` of a :class:`MaskedPPOTorchRLModule` MLP.

    Args:
        hidden: hidden layer sizes of the MLP (``fcnet_hiddens``).
        activation: ``"tanh"``, ``"relu"``, ... (``fcnet_activation``).
        vf_share_layers: share the hidden layers between policy and value.
    """
    return RLModuleSpec(
        module_class=MaskedPPOTorchRLModule,
        model_config=DefaultModelConfig(fcnet_hiddens=list(hidden), fcnet_activation=activation,
                                        vf_share_layers=vf_share_layers),
    )


# ---------------------------------------------------------------------------
# the environment

#: Per-episode counts each learner seat reports (summed per iteration by the callback).
_STAT_KEYS = ("episodes", "win", "rounds", "points", "final_points", "busts", "quits", "went_out", "steps")


class LamaDiceRLlibEnv(PettingZooEnv):
    """``lama_dice_v0`` as an RLlib ``MultiAgentEnv``, through RLlib's ``PettingZooEnv`` wrapper.

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
            :func:`lama_env.lama_dice_v0.env` (``num_players``, ``episode``,
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
        from agents.registry import make_agent
        from lama_env import lama_dice_v0

        cfg = dict(config or {})
        opponents = [(str(s), float(w)) for s, w in cfg.pop("opponents", ()) or ()]
        self.selfplay_weight = float(cfg.pop("selfplay_weight", 1.0))
        rules = dict(cfg.pop("rules", {}) or {})
        kwargs = {k: cfg[k] for k in ("num_players", "episode", "reward", "auto_forced", "max_rounds") if k in cfg}
        aec = lama_dice_v0.env(**kwargs, **rules)
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
            obs, rew, term, trunc, info = self._collect()
            if obs and not term["__all__"] and not trunc["__all__"]:
                return obs, {}
        raise RuntimeError("lama_dice_v0: the opponents ended 100 episodes before the learner acted")

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
        from lama_env.rules import winners

        g = self._raw.game
        p = self._seat[agent]
        won = winners(g.totals)
        st = g.statistics()
        rounds = st["rounds"]
        return {
            "win": 1.0 / len(won) if p in won else 0.0,
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


# ---------------------------------------------------------------------------
# the game-statistics callback

class GameStatsCallback(RLlibCallback):
    """Log each finished episode's game statistics per RLModule (``env_runners/lama_game/<module>/*``).

    For every agent of a finished episode whose final ``infos`` hold
    ``episode_stats`` (see :class:`LamaDiceRLlibEnv`), adds ``episodes`` (1),
    ``win``, ``rounds``, ``points``, ``final_points``, ``busts``, ``quits``,
    ``went_out`` and ``steps`` to per-iteration sums under the module the
    agent was mapped to. :func:`train.rllib_train.game_scalars` turns the sums
    into the SB3 pipeline's ``game/*`` scalars (win rate, points per round,
    bust / quit / went-out rates per round, ...).
    """

    def on_episode_end(self, *, episode: Any, metrics_logger: Any = None, **kwargs: Any) -> None:
        if metrics_logger is None:
            return
        for agent_id, sa in episode.agent_episodes.items():
            try:
                info = sa.get_infos(-1)
            except (IndexError, KeyError):
                continue
            stats = info.get("episode_stats") if isinstance(info, Mapping) else None
            if not stats:
                continue
            module = episode.module_for(agent_id)
            values = dict(stats, episodes=1)
            for key in _STAT_KEYS:
                metrics_logger.log_value((GAME_METRICS, str(module), key), float(values[key]), reduce="sum")
