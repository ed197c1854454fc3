"""Old home of the RLlib trainer's env and RLModule, kept so that existing checkpoints load.

An RLlib checkpoint names its RLModule class by module path; checkpoints
written before the trainer became the :mod:`lama_dice.train.rllib` subpackage
name ``lama_dice.train.rllib.models.MaskedPPOTorchRLModule``. New code imports
from the modules that define these names:

* :mod:`lama_dice.train.rllib.module`: :class:`MaskedPPOTorchRLModule`, :func:`module_spec`, :func:`masked_logits`;
* :mod:`lama_dice.train.rllib.env`: :class:`LamaDiceRLlibEnv`;
* :mod:`lama_dice.train.rllib.metrics`: :class:`GameStatsCallback`, :data:`GAME_METRICS`.

Like those, this module needs the ``rllib`` extra.
"""

from __future__ import annotations

from .env import LamaDiceRLlibEnv
from .metrics import GAME_METRICS, GameStatsCallback
from .module import MASK_KEY, OBS_KEY, MaskedPPOTorchRLModule, masked_logits, module_spec

__all__ = [
    "GAME_METRICS",
    "MASK_KEY",
    "OBS_KEY",
    "GameStatsCallback",
    "LamaDiceRLlibEnv",
    "MaskedPPOTorchRLModule",
    "masked_logits",
    "module_spec",
]
