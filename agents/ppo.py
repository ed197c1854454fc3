"""Trained policy networks: the ``ppo:PATH`` spec.

``PATH`` is a weights-only agent file (``NAME.safetensors``, see
:mod:`lama_dice.agents.agentfile`; the shipped agents ``ppo:2p``... are such files),
a trainer checkpoint ``runs/2p-20250101-120000/best.zip``, or a run folder (its
``best.zip``).  The agent plays the network's policy: the seat's observation
is :func:`lama_env.observation.encode`, illegal actions are masked out and the
most likely legal action is played (``deterministic=False`` samples instead)::

    from lama_dice.agents.ppo import PPOPolicy
    agent = PPOPolicy("runs/x/best.zip")
    action = agent.act(game, game.legal_actions())

:meth:`PPOPolicy.act_batch` runs one forward pass for all the games it gets.

Each checkpoint ``X.zip`` written by the trainer has a JSON sidecar ``X.json``
(see :func:`write_sidecar`) naming its player count, rules, config and network.
Loading a checkpoint reads only that sidecar and the archive's ``policy.pth``
(``torch.load(weights_only=True)``): SB3's pickled ``data`` entries are never
opened, so nothing in the file can run.  A checkpoint whose sidecar does not
describe its network is refused, with the command that converts it, unless the
user opted in to unpickling (:mod:`lama_dice.agents.trust`).  A missing, corrupt
or incompatible checkpoint (trained for another player count, or not a
MaskablePPO policy for this game) raises :class:`CheckpointError` with a
one-line message.

Agent files run on NumPy (:class:`lama_dice.agents.mlp.MLP`), with the core install.  Reading a
trainer checkpoint's ``policy.pth`` needs torch, the ``train`` extra (a one-line
:class:`lama_env.extras.MissingExtraError` says how to install it where it is missing); its
network then runs on NumPy too.  Torch and Stable-Baselines3 are imported only when a
checkpoint is loaded, so that registering this agent costs nothing.
"""

from __future__ import annotations

import json
import os
import zipfile
from pathlib import Path
from typing import Any, cast

import numpy as np

from lama_dice.atomic import write_text
from lama_env.actions import NUM_ACTIONS
from lama_env.errors import LamaDiceError, bounded, clip
from lama_env.extras import require_extra

from .agentfile import (
    SUFFIX,
    CheckpointError,
    MLPActor,
    build_mlp,
    check_network,
    describe_layers,
    describe_sb3_policy,
    read_agent_file,
    sb3_actor_tensors,
)
from .base import Policy
from .learned import LearnedPolicy, observation_fingerprint, one_line, players_for_obs_size
from .mlp import MLP
from .registry import AgentSpecError, register
from .trust import FLAG, pickle_allowed, require_pickle_opt_in

#: The ``format`` tag of checkpoint sidecars.
SIDECAR_FORMAT = "lama-dice-checkpoint/1"
#: Checkpoints a run folder stands for, in order of preference.
RUN_DIR_CHECKPOINTS = ("best.zip", "final.zip", "interrupted.zip")


# ---------------------------------------------------------------------------
# sidecars and paths

def sidecar_path(checkpoint: str | os.PathLike) -> Path:
    """The sidecar of ``X.zip``: ``X.json``."""
    return Path(checkpoint).with_suffix(".json")


def write_sidecar(checkpoint: str | os.PathLike, *, num_players: int, rules: dict[str, Any],
                  config: str, timesteps: int, policy: Any = None, **extra: Any) -> Path:
    """Write the JSON sidecar of ``checkpoint`` (atomically) and return its path.

    Args:
        checkpoint: the ``.zip`` path.
        num_players: players the policy was trained for.
        rules: the rules config (``RulesConfig.to_dict()``).
        config: the training config's name.
        timesteps: learner steps trained so far.
        policy: the saved model's policy (``model.policy``): its actor network's description
            is recorded as ``network``, so that ``ppo:`` can rebuild the network from
            ``policy.pth`` alone, without unpickling anything.
        extra: more JSON-ready fields (episode, reward, ...).
    """
    from lama_env.observation import observation_size

    data = {
        "format": SIDECAR_FORMAT,
        "num_players": int(num_players),
        "rules": rules,
        "config": config,
        "timesteps": int(timesteps),
        "observation_size": int(observation_size(num_players)),
        "observation_layout": observation_fingerprint(num_players),
        "num_actions": NUM_ACTIONS,
        **({"network": describe_sb3_policy(policy, f"checkpoint {checkpoint}")} if policy is not None else {}),
        **extra,
    }
    path = sidecar_path(checkpoint)
    return write_text(path, json.dumps(data, indent=2) + "\n")


#: The largest sidecar read (bytes): a sidecar takes a few KB.
MAX_SIDECAR_BYTES = 1024 * 1024


def read_sidecar(checkpoint: str | os.PathLike) -> dict[str, Any] | None:
    """The sidecar of ``checkpoint`` as a dict, or None if there is none.

    Raises:
        CheckpointError: the sidecar exists but is not valid.
    """
    path = sidecar_path(checkpoint)
    if not path.is_file():
        return None
    from lama_env.reader import InputError, read_file, read_json

    try:
        data = read_json(read_file(path, MAX_SIDECAR_BYTES), "", allow_nan=True)  # the bounded reader
    except InputError as e:
        raise CheckpointError(f"checkpoint sidecar {path} is not valid JSON: {e}") from None
    if not isinstance(data, dict) or data.get("format") != SIDECAR_FORMAT:
        raise CheckpointError(f"{path} is not a lama-dice checkpoint sidecar (format {SIDECAR_FORMAT})")
    return data


#: The agents shipped with the package: ``ppo:solo``, ``ppo:2p``, ``ppo:3p``, ``ppo:4p``, ``ppo:5p``,
#: ``ppo:6p`` and the earlier ``ppo:2p-v4`` (the previous ``ppo:2p``), ``ppo:2p-v3``, ``ppo:2p-v2``, ``ppo:2p-v1``,
#: ``ppo:solo-v1``, ``ppo:4p-v1``.
PRETRAINED_DIR = Path(__file__).resolve().parent / "pretrained"


def pretrained_names() -> list[str]:
    """Names of the shipped agents (agent files ``agents/pretrained/ppo_NAME.safetensors``)."""
    return sorted(q.stem[len("ppo_"):] for q in PRETRAINED_DIR.glob(f"ppo_*{SUFFIX}"))


def shipped_players(name: str) -> int | None:
    """The table size a shipped agent's name says: ``solo`` 1, ``3p`` 3, ``2p-v1`` 2; None for another name.

    The shipped files are named so (``tests/test_ppo_agent.py`` checks every name against its file's
    player count), which lets a caller pick the network for a table without loading any file.
    """
    base = name.partition("-v")[0]
    if base == "solo":
        return 1
    return int(base[:-1]) if base.endswith("p") and base[:-1].isdigit() else None


def shipped_for(num_players: int) -> list[str]:
    """The shipped agents for a table of ``num_players`` as specs, the current one before its ``-vN`` versions.

    E.g. ``shipped_for(2) == ["ppo:2p", "ppo:2p-v4", "ppo:2p-v3", "ppo:2p-v2", "ppo:2p-v1"]``; an empty list if
    none plays that many.
    """
    names = [n for n in pretrained_names() if shipped_players(n) == num_players]
    return [f"ppo:{n}" for n in sorted(names, key=lambda n: ("-v" in n, [-ord(c) for c in n]))]


def resolve_checkpoint(path: str | os.PathLike) -> Path:
    """The file a path stands for: a shipped agent's name, the file itself, or a run folder's best checkpoint.

    A bare name such as ``2p`` that is not an existing path names a shipped agent
    (``agents/pretrained/ppo_2p.safetensors``). A folder resolves to the first of
    ``best.zip``, ``final.zip``, ``interrupted.zip`` it holds, else to its newest
    ``checkpoints/*.zip``.

    Raises:
        CheckpointError: nothing loadable is there.
    """
    p = Path(path).expanduser()
    if not p.exists() and str(path) in pretrained_names():
        return PRETRAINED_DIR / f"ppo_{path}{SUFFIX}"
    if p.is_dir():
        for name in RUN_DIR_CHECKPOINTS:
            if (p / name).is_file():
                return p / name
        periodic = sorted((p / "checkpoints").glob("*.zip")) if (p / "checkpoints").is_dir() else []
        if periodic:
            return max(periodic, key=lambda q: q.stat().st_mtime)
        raise CheckpointError(f"no checkpoint in folder {p} "
                              f"(looked for {', '.join(RUN_DIR_CHECKPOINTS)}, checkpoints/*.zip)")
    if not p.exists():
        shipped = ", ".join(pretrained_names()) or "none"
        raise CheckpointError(f"checkpoint {p} does not exist (shipped agents: {shipped})")
    if not p.is_file():
        raise CheckpointError(f"checkpoint {p} is not a file")
    return p


# ---------------------------------------------------------------------------
# loading

class _Actor:
    """The actor half of an in-memory MaskableActorCriticPolicy, for inference: obs -> logits."""

    def __init__(self, policy: Any) -> None:
        import torch.nn as nn
        from stable_baselines3.common.torch_layers import FlattenExtractor

        # With the default flatten features extractor (a 1-D Box), the actor is
        # just the policy MLP and the action head: skip SB3's generic plumbing.
        extractor = getattr(policy, "pi_features_extractor", policy.features_extractor)
        fast = isinstance(extractor, FlattenExtractor)
        self.mlp = MLPActor(nn.Sequential(policy.mlp_extractor.policy_net, policy.action_net) if fast
                            else _SB3Forward(policy))

    def logits(self, obs: np.ndarray) -> np.ndarray:
        return self.mlp.logits(obs)


class _SB3Forward:
    """SB3's generic actor forward (a custom features extractor): obs tensor -> logits tensor."""

    def __init__(self, policy: Any) -> None:
        self.policy = policy

    def __call__(self, t: Any) -> Any:
        features = self.policy.extract_features(t, self.policy.pi_features_extractor)
        return self.policy.action_net(self.policy.mlp_extractor.forward_actor(features))


_CACHE: dict[tuple[str, float, int, tuple[float, int], bool], tuple[MLP, dict[str, Any] | None, int]] = {}


def is_checkpoint_archive(p: Path) -> bool:
    """Whether ``p`` is read as a trainer checkpoint (a ``.zip``, or a zip archive not named ``.safetensors``)."""
    return p.suffix != SUFFIX and (p.suffix == ".zip" or zipfile.is_zipfile(p))


def load_policy(path: str | os.PathLike) -> tuple[MLP, dict[str, Any] | None, int]:
    """Load the policy network of an agent file or a trainer checkpoint on the CPU (cached per file version).

    An agent file (``.safetensors``) is read by :func:`lama_dice.agents.agentfile.read_agent_file`.
    Of a trainer checkpoint ``X.zip`` only ``policy.pth`` (with ``torch.load(weights_only=True)``)
    and the sidecar ``X.json`` are read: the archive's other members (SB3's pickled ``data``
    entries, the optimizer) are never opened.  A checkpoint whose sidecar does not describe
    its network is refused unless unpickling is allowed (:mod:`lama_dice.agents.trust`).

    Returns:
        ``(network: obs -> logits, a NumPy MLP; description or sidecar, num_players)``.

    Raises:
        CheckpointError: missing, corrupt, or not a policy for this game.
        UntrustedFileError: loading it would unpickle, and the user did not opt in.
    """
    p = resolve_checkpoint(path)
    try:
        st = p.stat()
    except OSError as e:
        raise CheckpointError(f"cannot read checkpoint {p}: {e.strerror or e}") from None
    try:  # the network of a checkpoint comes from its sidecar too
        side = sidecar_path(p).stat()
        side_stamp: tuple[float, int] = (side.st_mtime, side.st_size)
    except OSError:
        side_stamp = (0.0, -1)
    key = (str(p.resolve()), st.st_mtime, st.st_size, side_stamp, pickle_allowed())
    if key in _CACHE:
        return _CACHE[key]
    if not is_checkpoint_archive(p):
        description, net = read_agent_file(p)
        _CACHE[key] = (net, description, int(description["num_players"]))
        return _CACHE[key]
    if not zipfile.is_zipfile(p):
        raise CheckpointError(f"checkpoint {p} is not a MaskablePPO .zip file (not a zip archive)")
    sidecar = read_sidecar(p)
    network = (sidecar or {}).get("network")
    if network is None:
        require_pickle_opt_in(
            f"checkpoint {p} has {'no sidecar' if sidecar is None else 'no network description in its sidecar'} "
            "(an older lama-dice or another program wrote it): only unpickling it could rebuild the network",
            f"convert it once with `lama-dice export ppo:{bounded(str(path), 200)} AGENT.safetensors {FLAG}`")
        net = _legacy_sb3_network(p)
    else:
        net = _read_policy_weights(p, check_network(network, f"checkpoint {p} (its sidecar)"))
    n_obs = net.inputs
    num_players = players_for_obs_size(n_obs)
    if num_players is None:
        raise CheckpointError(f"checkpoint {p} has observations of size {n_obs}, "
                              "which fits no player count of this game")
    if sidecar is not None and sidecar.get("num_players", num_players) != num_players:
        raise CheckpointError(f"checkpoint {p}: its sidecar says {clip(sidecar.get('num_players'))} players "
                              f"but its network is for {num_players}")
    layout = sidecar.get("observation_layout") if sidecar is not None else None
    if layout is not None and layout != observation_fingerprint(num_players):
        raise CheckpointError(f"checkpoint {p} was trained on another observation layout than this version's "
                              f"(lama_env.observation changed since); train it again")
    _CACHE[key] = (net, sidecar, num_players)
    return _CACHE[key]


#: The archive member of an SB3 checkpoint holding the policy's state dict (a torch file).
POLICY_MEMBER = "policy.pth"
#: The most bytes ``policy.pth`` may have (a policy for this game is well under a megabyte).
MAX_POLICY_BYTES = 256 << 20


def read_policy_state(p: Path) -> dict[str, Any]:
    """The state dict in a trainer checkpoint's ``policy.pth``, read weights-only (no code can run).

    Raises:
        CheckpointError: no such member, or not a weights-only state dict of tensors.
    """
    import io

    require_extra("train", f"reading the trainer checkpoint {p}")
    import torch

    try:
        with zipfile.ZipFile(p) as z:
            try:
                info = z.getinfo(POLICY_MEMBER)
            except KeyError:
                raise CheckpointError(f"checkpoint {p} is not a MaskablePPO checkpoint (no {POLICY_MEMBER})") from None
            if info.file_size > MAX_POLICY_BYTES:
                raise CheckpointError(f"checkpoint {p}: {POLICY_MEMBER} is {info.file_size} bytes, "
                                      "too large for a policy of this game")
            raw = z.read(info)
    except (zipfile.BadZipFile, OSError, EOFError, RuntimeError, ValueError) as e:
        raise CheckpointError(f"checkpoint {p} is corrupt or not a MaskablePPO checkpoint: {one_line(e)}") from None
    try:
        state = torch.load(io.BytesIO(raw), map_location="cpu", weights_only=True)
    except Exception as e:  # not a torch file, or one holding more than tensors
        raise CheckpointError(f"checkpoint {p}: {POLICY_MEMBER} is not a weights-only torch state dict "
                              f"(refused, nothing of it ran): {one_line(e)}") from None
    if not isinstance(state, dict) or not all(isinstance(v, torch.Tensor) for v in state.values()):
        raise CheckpointError(f"checkpoint {p}: {POLICY_MEMBER} is not a state dict of tensors")
    return state


def _read_policy_weights(p: Path, network: dict[str, Any]) -> MLP:
    """The actor network of a checkpoint from its sidecar's ``network`` and ``policy.pth`` (nothing unpickled)."""
    where = f"checkpoint {p}"
    state = read_policy_state(p)
    return build_mlp(network, sb3_actor_tensors(state, network, where), where)


def _legacy_sb3_network(p: Path) -> MLP:
    """The actor network of a checkpoint by SB3's own loader, which unpickles (only after the user opted in)."""
    policy = load_sb3_policy(p)
    net, tensors = describe_layers([policy.mlp_extractor.policy_net, policy.action_net], f"checkpoint {p}")
    return build_mlp(net, tensors, f"checkpoint {p}")


def load_sb3_policy(p: Path) -> Any:
    """The whole MaskableActorCriticPolicy of a checkpoint by SB3's loader (unpickles: callers check the opt-in).

    Raises:
        CheckpointError: corrupt, or not a MaskablePPO checkpoint for this game.
    """
    require_extra("train", f"reading the trainer checkpoint {p}")
    import torch
    from gymnasium import spaces
    from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy
    from stable_baselines3.common.save_util import load_from_zip_file

    if not zipfile.is_zipfile(p):
        raise CheckpointError(f"checkpoint {p} is not a MaskablePPO .zip file (not a zip archive)")
    # The schedules are not needed to act: skip them.
    skip = {"learning_rate": 0.0, "lr_schedule": lambda _: 0.0, "clip_range": lambda _: 0.0,
            "clip_range_vf": None, "_last_obs": None, "_last_episode_starts": None}
    try:
        data, params, _ = load_from_zip_file(p, device="cpu", custom_objects=skip)
    except Exception as e:  # corrupt archive, truncated file, foreign pickle...
        raise CheckpointError(f"checkpoint {p} is corrupt or not a MaskablePPO checkpoint: {one_line(e)}") from None
    if not data or "policy" not in (params or {}):
        raise CheckpointError(f"checkpoint {p} is not a MaskablePPO checkpoint (no policy weights)")
    obs_space, act_space = data.get("observation_space"), data.get("action_space")
    if not isinstance(act_space, spaces.Discrete) or int(act_space.n) != NUM_ACTIONS:
        raise CheckpointError(f"checkpoint {p} has action space {clip(act_space)}, not Discrete({NUM_ACTIONS})")
    if not isinstance(obs_space, spaces.Box) or len(obs_space.shape) != 1:
        raise CheckpointError(f"checkpoint {p} has observation space {clip(obs_space)}, not a 1-D Box")
    kwargs = dict(data.get("policy_kwargs") or {})
    try:
        policy = MaskableActorCriticPolicy(obs_space, act_space, lambda _: 0.0, **kwargs)
        # SB3 types the saved params as dict[str, Tensor], but each entry is a module's state dict
        policy.load_state_dict(cast("dict[str, Any]", params["policy"]))
    except Exception as e:
        raise CheckpointError(f"checkpoint {p} does not hold a MaskablePPO MLP policy: {one_line(e)}") from None
    policy.set_training_mode(False)
    policy.to(torch.device("cpu"))
    return policy


# ---------------------------------------------------------------------------
# the agent

class PPOPolicy(LearnedPolicy):
    """Play a trained MaskablePPO checkpoint.

    Args:
        path: a ``.zip`` checkpoint or a run folder (its ``best.zip``).
        deterministic: play the most likely legal action (default); else
            sample from the masked policy distribution with :attr:`rng`.

    Raises:
        CheckpointError: the checkpoint is missing, corrupt or not for this game.
    """

    spec = "ppo"
    error_type = CheckpointError

    def __init__(self, path: str | os.PathLike, deterministic: bool = True) -> None:
        """Load the checkpoint at ``path`` (see the class docstring)."""
        super().__init__()
        net, sidecar, num_players = load_policy(path)
        self.path = resolve_checkpoint(path)
        self.spec = f"ppo:{path}"
        self._init(net, num_players, sidecar, deterministic)

    @classmethod
    def from_sb3(cls, policy: Any, num_players: int, deterministic: bool = True,
                 spec: str = "ppo:current") -> PPOPolicy:
        """Wrap an in-memory SB3 policy (``model.policy``, shared, not copied), e.g. to evaluate during training."""
        self = cls.__new__(cls)
        Policy.__init__(self)
        self.path = None
        self.spec = spec
        self._init(_Actor(policy), num_players, None, deterministic)
        return self

    def check_compatible(self, num_players: int) -> None:
        """As :meth:`LearnedPolicy.check_compatible`, the error naming the shipped agent for that table if one ships."""
        try:
            super().check_compatible(num_players)
        except LamaDiceError as e:
            fits = shipped_for(int(num_players))
            if not fits:
                raise
            raise type(e)(f"{e} (the shipped agent for {num_players}: {fits[0]})") from None

    def _init(self, actor: Any, num_players: int, sidecar: dict[str, Any] | None, deterministic: bool) -> None:
        self._setup(num_players, sidecar, deterministic, self.path)
        self._actor = actor

    def logits(self, obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """Action logits of the policy network; ``mask`` is unused (the caller masks the logits)."""
        return self._actor.logits(obs)

    @property
    def mlp(self) -> MLP | None:
        """The NumPy network the policy runs (None for an in-memory SB3 policy: :meth:`from_sb3`)."""
        return self._actor if isinstance(self._actor, MLP) else None


def _make(arg: str | None) -> PPOPolicy:
    if not arg:
        raise AgentSpecError("agent spec 'ppo' needs a file: ppo:PATH (an agent file .safetensors, "
                             "a trainer checkpoint .zip or a run folder)")
    return PPOPolicy(arg)


register("ppo", _make, "ppo:PATH",
         "a trained policy network: an agent file (.safetensors, lama-dice export), a trainer checkpoint "
         "(.zip, a run folder: its best.zip), or a shipped agent: ppo:solo, ppo:2p, ppo:3p, ppo:4p, ppo:5p, "
         "ppo:6p and the earlier ppo:2p-v4, ppo:2p-v3, ppo:2p-v2, ppo:2p-v1, ppo:solo-v1, ppo:4p-v1")
