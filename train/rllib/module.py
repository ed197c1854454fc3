"""The action-masking PPO RLModule of the RLlib trainer (``pip install "lama-dice[rllib]"``).

:class:`MaskedPPOTorchRLModule` is RLlib's default PPO torch module (an MLP
encoder, a policy head over the 129 actions, a value head) that reads the
PettingZoo env's dictionary observation as it is, ``{"observation": float32
vector, "action_mask": int8 vector}`` (see :mod:`lama_env.lama_dice_v1`), runs
the network on ``"observation"`` and adds ``log(mask)`` (clipped to a large
negative number) to the action logits, so that an illegal action is never
sampled and never gets a gradient towards it::

    from lama_dice.train.rllib.module import module_spec
    spec = module_spec(hidden=[128, 128], activation="tanh")   # an RLModuleSpec
    config.rl_module(rl_module_spec=MultiRLModuleSpec(rl_module_specs={"main": spec}))

RLlib's own example module (``ray.rllib.examples.rl_modules.classes.
action_masking_rlm``) expects the key ``"observations"`` and mutates the batch
it is given; this one keeps PettingZoo's key, never mutates its input and
accepts the ``int8`` mask, so the env needs no renaming wrapper.

:func:`masked_logits` is that masking on its own. A checkpoint names this
class, so loading one (:class:`lama_dice.agents.rllib_agent.RLlibPolicy`) imports this module.

This module imports ray and torch at import time: import it only where the
``rllib`` extra is installed.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import gymnasium as gym
import torch
from ray.rllib.algorithms.ppo.torch.default_ppo_torch_rl_module import DefaultPPOTorchRLModule
from ray.rllib.core.columns import Columns
from ray.rllib.core.rl_module.default_model_config import DefaultModelConfig
from ray.rllib.core.rl_module.rl_module import RLModuleSpec
from ray.rllib.utils.torch_utils import FLOAT_MIN

#: The observation keys of the PettingZoo env.
OBS_KEY = "observation"
MASK_KEY = "action_mask"

__all__ = ["MASK_KEY", "OBS_KEY", "MaskedPPOTorchRLModule", "masked_logits", "module_spec"]


def masked_logits(logits: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """``logits + max(log(mask), FLOAT_MIN)``: illegal actions (mask 0) get a huge negative logit.

    ``FLOAT_MIN`` is finite, so a row whose mask is all zeros (an agent's final
    observation once the game is over) gives finite, uniform-ish logits rather
    than NaNs.
    """
    return logits + torch.clamp(torch.log(mask.to(logits.dtype)), min=FLOAT_MIN)


class MaskedPPOTorchRLModule(DefaultPPOTorchRLModule):
    """PPO's default torch RLModule with the env's action mask applied to the logits.

    The arguments are those of RLlib's ``RLModule``.

    Args:
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
        """Check the ``Dict`` space and build the module for its ``"observation"`` part."""
        if not (isinstance(observation_space, gym.spaces.Dict)
                and OBS_KEY in observation_space.spaces and MASK_KEY in observation_space.spaces):
            raise ValueError(
                f"MaskedPPOTorchRLModule needs a Dict observation space with keys {OBS_KEY!r} and "
                f"{MASK_KEY!r} (the lama_dice_v1 PettingZoo env), got {observation_space}")
        self.observation_space_with_mask = observation_space
        super().__init__(observation_space=observation_space[OBS_KEY], **kwargs)

    def setup(self) -> None:
        """Build the networks (RLlib's PPO setup), then report the full ``Dict`` observation space."""
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
        """The value estimates of ``batch`` (its observation vector; the mask is not needed)."""
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
