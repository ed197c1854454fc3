"""Trained RLlib agents: the ``rllib:PATH`` spec (needs ``pip install "lama-dice[rllib]"``).

``rllib:runs/rllib_2p-20250101-120000`` plays the ``"main"`` RLModule of an
RLlib checkpoint written by :mod:`lama_dice.train.rllib.trainer`, so an RLlib-trained
policy is compared with every other agent by the same evaluation harness::

    lama-dice evaluate rllib:runs/rllib_2p-20250101-120000 optimal --games 2000 --allow-pickle

``PATH`` may be

* a run folder of :mod:`lama_dice.train.rllib.trainer` (its ``final/`` checkpoint, else
  ``interrupted/``, else the newest ``checkpoints/iter-N/``);
* an RLlib algorithm checkpoint (a folder holding ``learner_group/``), from
  this project or any RLlib PPO run on ``lama_dice_v1`` that used
  :class:`lama_dice.train.rllib.module.MaskedPPOTorchRLModule` -- its module
  ``"main"`` (or the one its ``lama_dice.json`` sidecar names);
* a single RLModule checkpoint folder (``.../rl_module/main``).

The seat's observation is :func:`lama_env.observation.encode`, illegal actions
are masked out and the most likely legal action is played
(``deterministic=False`` samples instead); :meth:`RLlibPolicy.act_batch` runs
one forward pass for all the games it gets.

Ray's checkpoints are pickles (``RLModule.from_checkpoint`` unpickles the module's
class and constructor arguments), so loading one can run code from the file:
``rllib:PATH`` loads only after the user opted in (``--allow-pickle`` or
``LAMA_DICE_ALLOW_PICKLE=1``, see :mod:`lama_dice.agents.trust`) and otherwise
raises :class:`~lama_dice.agents.trust.UntrustedFileError` naming the safe way:
``lama-dice export rllib:PATH AGENT.safetensors --allow-pickle`` once, then
``ppo:AGENT.safetensors`` everywhere.

This module imports neither ray nor torch: registering the agent costs
nothing, and without the extra ``rllib:PATH`` raises
:class:`RLlibMissingError`. A missing, corrupt or incompatible checkpoint
raises :class:`RLlibCheckpointError` (one line).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np

from lama_env.actions import NUM_ACTIONS
from lama_env.errors import LamaDiceError, bounded, clip
from lama_env.extras import MissingExtraError, missing_extra
from lama_env.reader import read_file, read_json

from .base import Policy
from .learned import LearnedPolicy, one_line, players_for_obs_size
from .registry import AgentSpecError, register
from .trust import FLAG, require_pickle_opt_in

#: The sidecar :mod:`lama_dice.train.rllib.trainer` writes into each checkpoint folder.
SIDECAR_NAME = "lama_dice.json"
#: Its ``format`` tag.
SIDECAR_FORMAT = "lama-dice-rllib-checkpoint/1"
#: The RLModule id of the trained (shared) policy.
DEFAULT_MODULE_ID = "main"
#: Checkpoints a run folder stands for, in order of preference (then the newest ``checkpoints/iter-N``).
RUN_DIR_CHECKPOINTS = ("final", "interrupted")
class RLlibMissingError(MissingExtraError):
    """Ray RLlib is not installed (the ``rllib`` extra)."""


class RLlibCheckpointError(LamaDiceError):
    """An RLlib checkpoint that is missing, corrupt, or does not fit the game."""


def require_ray(what: str = "rllib:PATH") -> None:
    """Raise :class:`RLlibMissingError` (naming ``what`` and the install command) unless RLlib imports."""
    try:
        import ray.rllib  # noqa: F401
    except ImportError:  # ray, or one of the extra's dependencies, is missing: the same remedy
        raise missing_extra("rllib", what, error=RLlibMissingError) from None


# ---------------------------------------------------------------------------
# checkpoints

def read_sidecar(checkpoint: str | os.PathLike) -> dict[str, Any] | None:
    """The ``lama_dice.json`` sidecar of an algorithm checkpoint folder, or None when absent or unreadable."""
    p = Path(checkpoint) / SIDECAR_NAME
    try:
        data = read_json(read_file(p, 1024 * 1024), "", allow_nan=True)  # the bounded reader
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def _is_module_dir(p: Path) -> bool:
    return (p / "class_and_ctor_args.pkl").is_file() and not (p / "learner_group").exists()


def resolve_checkpoint(path: str | os.PathLike) -> tuple[Path, Path | None]:
    """``(RLModule folder, algorithm checkpoint folder or None)`` of ``path`` (see the module docstring).

    Raises:
        RLlibCheckpointError: nothing there, or not an RLlib checkpoint.
    """
    p = Path(path).expanduser()
    if not p.exists():
        raise RLlibCheckpointError(f"RLlib checkpoint {path} does not exist")
    if not p.is_dir():
        raise RLlibCheckpointError(f"RLlib checkpoint {path} is not a folder (an RLlib checkpoint is a folder)")
    if _is_module_dir(p):
        return p, None
    if not (p / "learner_group").is_dir():  # a run folder?
        for name in RUN_DIR_CHECKPOINTS:
            if (p / name / "learner_group").is_dir():
                p = p / name
                break
        else:
            iters = sorted((q for q in (p / "checkpoints").glob("iter-*") if (q / "learner_group").is_dir()),
                           key=lambda q: q.name)
            if not iters:
                raise RLlibCheckpointError(
                    f"{path} is not an RLlib checkpoint (no learner_group/), nor a run folder holding one "
                    f"({', '.join(RUN_DIR_CHECKPOINTS)} or checkpoints/iter-N)")
            p = iters[-1]
    sidecar = read_sidecar(p)
    module_id = str((sidecar or {}).get("module_id", DEFAULT_MODULE_ID))
    module_dir = p / "learner_group" / "learner" / "rl_module" / module_id
    if not _is_module_dir(module_dir):
        raise RLlibCheckpointError(f"RLlib checkpoint {p} has no RLModule {clip(module_id)} (looked in {module_dir})")
    return module_dir, p


_CACHE: dict[tuple[str, float], tuple[Any, dict[str, Any] | None, int]] = {}


def load_module(path: str | os.PathLike) -> tuple[Any, dict[str, Any] | None, int]:
    """Load the RLModule of an RLlib checkpoint on the CPU (cached per checkpoint version).

    Returns:
        ``(module, sidecar or None, num_players)``; the player count comes from the
        module's observation size.

    Raises:
        RLlibMissingError: ray is not installed.
        RLlibCheckpointError: missing, corrupt, or not a policy for this game.
    """
    require_ray()
    module_dir, algo_dir = resolve_checkpoint(path)
    require_pickle_opt_in(f"rllib:{bounded(str(path), 200)} is read by Ray's RLModule.from_checkpoint, which unpickles",
                          f"convert it once with `lama-dice export rllib:{bounded(str(path), 200)} AGENT.safetensors "
                          f"{FLAG}` and use ppo:AGENT.safetensors")
    try:
        stamp = max(f.stat().st_mtime for f in module_dir.iterdir())
    except (OSError, ValueError) as e:
        raise RLlibCheckpointError(f"cannot read RLlib checkpoint {module_dir}: {e}") from None
    key = (str(module_dir.resolve()), stamp)
    if key in _CACHE:
        return _CACHE[key]
    sidecar = read_sidecar(algo_dir) if algo_dir is not None else None
    module = _load_rl_module(module_dir)
    obs_space: Any = getattr(module, "observation_space", None)  # a gymnasium Dict space, checked below
    try:
        n_obs = int(np.prod(obs_space["observation"].shape))
        n_act = int(module.action_space.n)
    except Exception:
        raise RLlibCheckpointError(
            f"RLlib checkpoint {module_dir} is not a lama-dice policy (observation space {obs_space})") from None
    if n_act != NUM_ACTIONS:
        raise RLlibCheckpointError(f"RLlib checkpoint {module_dir} has {n_act} actions, not {NUM_ACTIONS}")
    num_players = players_for_obs_size(n_obs)
    if num_players is None:
        raise RLlibCheckpointError(
            f"RLlib checkpoint {module_dir} has observations of size {n_obs}, which fits no player count")
    if sidecar is not None and int(sidecar.get("num_players", num_players)) != num_players:
        raise RLlibCheckpointError(f"RLlib checkpoint {algo_dir}: its sidecar says {sidecar.get('num_players')} "
                                   f"players but its network is for {num_players}")
    _CACHE[key] = (module, sidecar, num_players)
    return _CACHE[key]


def _load_rl_module(module_dir: Path) -> Any:
    import warnings

    from ray.rllib.core.rl_module.rl_module import RLModule

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            module = RLModule.from_checkpoint(module_dir)
    except Exception as e:  # corrupt pickle, missing state file, foreign class...
        raise RLlibCheckpointError(f"RLlib checkpoint {module_dir} does not load: {one_line(e)}") from None
    sub = getattr(module, "_rl_modules", None)  # a MultiRLModule folder: take its shared module
    if isinstance(sub, dict):
        if DEFAULT_MODULE_ID not in sub:
            raise RLlibCheckpointError(f"RLlib checkpoint {module_dir} holds modules {sorted(sub)}, "
                                       f"not {DEFAULT_MODULE_ID!r}")
        module = sub[DEFAULT_MODULE_ID]
    module.eval()
    return module


# ---------------------------------------------------------------------------
# the agent

class RLlibPolicy(LearnedPolicy):
    """Play the policy of an RLlib checkpoint (the :class:`~lama_dice.train.rllib.module.MaskedPPOTorchRLModule`).

    Args:
        path: a run folder, an algorithm checkpoint or an RLModule folder.
        deterministic: play the most likely legal action (default); else
            sample from the masked policy distribution with :attr:`rng`.

    Raises:
        RLlibMissingError: the ``rllib`` extra is not installed.
        RLlibCheckpointError: the checkpoint is missing, corrupt or not for this game.
    """

    spec = "rllib"
    error_type = RLlibCheckpointError
    checkpoint_kind = "RLlib checkpoint"

    def __init__(self, path: str | os.PathLike, deterministic: bool = True) -> None:
        """Load the checkpoint at ``path`` (see the class docstring)."""
        super().__init__()
        module, sidecar, num_players = load_module(path)
        self.path = str(path)
        self.spec = f"rllib:{path}"
        self._init(module, num_players, sidecar, deterministic)

    @classmethod
    def from_module(cls, module: Any, num_players: int, deterministic: bool = True,
                    spec: str = "rllib:current") -> RLlibPolicy:
        """Wrap an in-memory RLModule (shared, not copied), e.g. to evaluate during training."""
        self = cls.__new__(cls)
        Policy.__init__(self)
        self.path = None
        self.spec = spec
        self._init(module, num_players, None, deterministic)
        return self

    def _init(self, module: Any, num_players: int, sidecar: dict[str, Any] | None, deterministic: bool) -> None:
        self.module = module
        self._setup(num_players, sidecar, deterministic, self.path)

    # --------------------------------------------------------------- acting
    def logits(self, obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """The module's masked action logits for a batch of observations and int8/bool masks."""
        import torch

        threads = torch.get_num_threads()
        if threads != 1:  # a small MLP on a few hundred states is fastest on one thread
            torch.set_num_threads(1)
        try:
            with torch.no_grad():
                batch = {"obs": {"observation": torch.as_tensor(obs, dtype=torch.float32),
                                 "action_mask": torch.as_tensor(mask, dtype=torch.float32)}}
                out = self.module.forward_inference(batch)
                return out["action_dist_inputs"].numpy()
        finally:
            if threads != 1:
                torch.set_num_threads(threads)


def _make(arg: str | None) -> RLlibPolicy:
    if not arg:
        raise AgentSpecError("agent spec 'rllib' needs a checkpoint: rllib:PATH (a run folder or an RLlib checkpoint)")
    require_ray()
    return RLlibPolicy(arg)


register("rllib", _make, "rllib:PATH",
         "a Ray RLlib checkpoint from lama-dice train (rllib-ppo configs) (needs the rllib extra; Ray unpickles "
         "it, which can run code: only with --allow-pickle, for files you trust)")
