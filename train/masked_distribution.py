"""A faster masked categorical distribution for MaskablePPO (same results, less time).

sb3-contrib masks an illegal action by setting its logit to -1e8 and then
normalises with ``logsumexp`` / ``softmax``. On a CPU, ``exp`` of such very
negative numbers takes a slow path (about ten times the normal cost), and with
129 actions of which a handful are legal almost every entry takes it: the
masked distribution then dominates PPO's update time.

:class:`FastMaskableCategorical` computes the same distribution without
exponentiating the masked entries: the normaliser is taken over the legal
actions only, masked logits are still -1e8 and masked probabilities exactly 0,
so log-probabilities, entropies and samples match sb3-contrib's (a test checks
this). :class:`LamaMaskablePolicy` is ``MaskableActorCriticPolicy`` with this
distribution; the trainer uses it (``MaskablePPO(LamaMaskablePolicy, ...)``).
"""

from __future__ import annotations

from typing import Any, cast

import torch as th
from gymnasium import spaces
from sb3_contrib.common.maskable.distributions import (
    MaskableCategorical,
    MaskableCategoricalDistribution,
    MaybeMasks,
)
from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy

_HUGE_NEG = -1e8  # sb3-contrib's masked logit


class FastMaskableCategorical(MaskableCategorical):
    """:class:`MaskableCategorical` whose masking never exponentiates a masked logit."""

    def apply_masking(self, masks: MaybeMasks) -> None:
        """Mask the logits (``None``: unmask) and set the normalised logits and probabilities directly."""
        if masks is None:
            super().apply_masking(None)
            return
        raw = self._original_logits
        m = th.as_tensor(masks, dtype=th.bool, device=raw.device).reshape(raw.shape)
        self.masks = m
        lowest = th.finfo(raw.dtype).min
        top = th.where(m, raw, lowest).amax(dim=-1, keepdim=True)
        z = th.where(m, raw - top, 0.0)           # masked entries: exp(0), zeroed just below
        e = th.exp(z) * m
        total = e.sum(dim=-1, keepdim=True)
        logits = th.where(m, z - th.log(total), _HUGE_NEG)
        # what Categorical.__init__(logits=...) sets, with the probabilities known already
        self.logits = logits
        self._param = logits
        self.__dict__["probs"] = e / total


class FastMaskableCategoricalDistribution(MaskableCategoricalDistribution):
    """:class:`MaskableCategoricalDistribution` built on :class:`FastMaskableCategorical`."""

    def proba_distribution(self, action_logits: th.Tensor) -> FastMaskableCategoricalDistribution:
        """Set the distribution to a :class:`FastMaskableCategorical` of ``action_logits``; return ``self``."""
        self.distribution = FastMaskableCategorical(logits=action_logits.view(-1, self.action_dim))
        return self


class LamaMaskablePolicy(MaskableActorCriticPolicy):
    """``MaskableActorCriticPolicy`` with :class:`FastMaskableCategoricalDistribution` (discrete actions)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        """Build the policy as ``MaskableActorCriticPolicy`` does, then swap in the fast distribution."""
        super().__init__(*args, **kwargs)
        n = cast(spaces.Discrete, self.action_space).n  # the policy is for discrete actions only
        self.action_dist = FastMaskableCategoricalDistribution(int(n))
