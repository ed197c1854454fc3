"""Weights-only agent files: a policy network as data, never code.

An agent file (``NAME.safetensors``) is one `safetensors <https://huggingface.co/docs/safetensors>`_
file: the policy network's float32 tensors, and in the header's metadata (key ``lama_dice``)
a JSON description of the agent::

    {"format": "lama-dice-agent/1",
     "num_players": 2,
     "rules": {"triple_llama": "chip_only", "must_discard": true, "end_threshold": 40},
     "observation": {"size": 52, "layout": "877dee001376"},
     "network": {"kind": "mlp", "inputs": 52, "hidden": [128, 128], "activation": "tanh", "outputs": 129},
     "training": {"algorithm": "MaskablePPO", "config": "ppo_2p", "timesteps": 8011776, ...}}

The network is an MLP: ``hidden`` linear layers each followed by ``activation``, then a
linear layer to the ``outputs`` action logits; its tensors are named ``hidden.I.weight``,
``hidden.I.bias``, ``logits.weight``, ``logits.bias``.  Loading builds that network from
the description and fills in the tensors: safetensors holds only numbers and a JSON header,
so nothing in the file can run.  The network runs on NumPy (:class:`lama_dice.agents.mlp.MLP`):
playing an agent file needs no torch (the core install).  A file whose tensors are not exactly those of its
description (missing, extra, wrong shape or type) or are not all finite numbers is refused;
so is a description past the size limits (:data:`SIZE_LIMITS`, checked before anything is
allocated), a file larger than such a network, and a file that is not safetensors at all
(a zip archive or a pickle is named as such).  Fields of the description this version does
not know are ignored (``training`` is free-form).

``lama-dice export SPEC OUT`` writes one from a trainer checkpoint or an RLlib checkpoint
(:mod:`lama_dice.cli.commands.export`); ``ppo:FILE.safetensors`` plays it, and the shipped
agents (``ppo:2p``...) are such files.
"""

from __future__ import annotations

import itertools
import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from lama_dice.atomic import write_bytes
from lama_env.actions import NUM_ACTIONS
from lama_env.errors import LamaDiceError, clip
from lama_env.reader import read_json

from .learned import observation_fingerprint, one_line
from .mlp import ACTIVATIONS as MLP_ACTIVATIONS
from .mlp import MLP, tensor_shapes

#: The ``format`` tag of agent files.
AGENT_FORMAT = "lama-dice-agent/1"
#: The file name suffix of agent files.
SUFFIX = ".safetensors"
#: The safetensors metadata key holding the JSON description.
META_KEY = "lama_dice"
#: Hidden-layer activations an agent file may name (torch's defaults for each: :mod:`lama_dice.agents.mlp`).
ACTIVATIONS = tuple(MLP_ACTIVATIONS)
#: The most hidden layers a network may have (an agent file's, or one a training config asks for).
MAX_HIDDEN_LAYERS = 64
#: The most units of one layer (and of the inputs and outputs).
MAX_LAYER_SIZE = 1 << 16
#: The most parameters (weights and biases) of one network: 2**25 float32 numbers, 128 MiB.
MAX_PARAMETERS = 1 << 25
#: Why the limits: said with every refusal of a network's sizes.
SIZE_LIMITS = (f"a network here has at most {MAX_HIDDEN_LAYERS} hidden layers of 1 to {MAX_LAYER_SIZE:,} units "
               f"and {MAX_PARAMETERS:,} parameters (128 MiB of float32), so that no config or agent file can make "
               "lama-dice allocate more; the shipped agents have about 40,000")
#: The largest agent file read: the most parameters, plus room for the header.
MAX_FILE_BYTES = 4 * MAX_PARAMETERS + (16 << 20)
#: The first bytes of a zip archive (an SB3 checkpoint ``.zip``, a torch.save file) and of a pickle (protocol 2+).
_ZIP_MAGIC = (b"PK\x03\x04", b"PK\x05\x06")
_PICKLE_MAGIC = tuple(bytes([0x80, v]) for v in range(2, 6))


class CheckpointError(LamaDiceError):
    """A checkpoint or agent file that is missing, corrupt, or does not fit the game."""


# ---------------------------------------------------------------------------
# the network

def check_network(net: Any, where: str) -> dict[str, Any]:
    """The validated ``network`` description (``kind``, ``inputs``, ``hidden``, ``activation``, ``outputs``).

    Raises:
        CheckpointError: not an MLP description this version can build.
    """
    if not isinstance(net, dict):
        raise CheckpointError(f"{where}: no network description")
    if net.get("kind") != "mlp":
        raise CheckpointError(f"{where}: network kind {clip(net.get('kind'))} is not 'mlp'")
    hidden: Any = net.get("hidden")
    inputs: Any = net.get("inputs")
    outputs: Any = net.get("outputs")
    for name, v in (("inputs", inputs), ("outputs", outputs)):
        if type(v) is not int or not 0 < v <= MAX_LAYER_SIZE:
            raise CheckpointError(f"{where}: network {name} {clip(v)} is not an integer from 1 to {MAX_LAYER_SIZE:,}")
    problem = network_size_problem(inputs, hidden, outputs)
    if problem is not None:
        raise CheckpointError(f"{where}: network hidden sizes {clip(hidden)}: {problem}")
    if outputs != NUM_ACTIONS:
        raise CheckpointError(f"{where}: the network has {outputs} outputs, not the game's {NUM_ACTIONS} actions")
    if net.get("activation") not in ACTIVATIONS:
        raise CheckpointError(f"{where}: activation {clip(net.get('activation'))} is not one of "
                              f"{', '.join(ACTIVATIONS)}")
    return {"kind": "mlp", "inputs": inputs, "hidden": list(hidden), "activation": net["activation"],
            "outputs": outputs}


def network_size_problem(inputs: int, hidden: Any, outputs: int) -> str | None:
    """What is wrong with an MLP's hidden sizes ``hidden`` between ``inputs`` and ``outputs`` (None if nothing).

    The limits (:data:`MAX_HIDDEN_LAYERS`, :data:`MAX_LAYER_SIZE`, :data:`MAX_PARAMETERS`) are the same for
    agent files and training configs (so that every network trained here exports); the message says them
    and why (:data:`SIZE_LIMITS`).
    """
    if not isinstance(hidden, list):
        return f"not a list of layer sizes ({SIZE_LIMITS})"
    if len(hidden) > MAX_HIDDEN_LAYERS:
        return f"{len(hidden)} hidden layers, more than {MAX_HIDDEN_LAYERS} ({SIZE_LIMITS})"
    for h in hidden:
        if type(h) is not int:
            return f"{clip(h)} is not an integer ({SIZE_LIMITS})"
        if not 0 < h <= MAX_LAYER_SIZE:
            return f"{h:,} is not from 1 to {MAX_LAYER_SIZE:,} ({SIZE_LIMITS})"
    sizes = [inputs, *hidden, outputs]
    count = sum(a * b + b for a, b in itertools.pairwise(sizes))
    if count > MAX_PARAMETERS:
        return f"{count:,} parameters, more than {MAX_PARAMETERS:,} ({SIZE_LIMITS})"
    return None


def check_finite(tensors: Mapping[str, Any], where: str) -> None:
    """Refuse tensors holding NaN or infinite numbers (a network with them plays nonsense).

    Raises:
        CheckpointError: naming the first such tensor and how many of its numbers are not finite.
    """
    for name, t in tensors.items():
        a = t.detach().cpu().numpy() if hasattr(t, "detach") else np.asarray(t)
        if a.dtype.kind == "f" and not np.isfinite(a).all():
            nan, inf = int(np.isnan(a).sum()), int(np.isinf(a).sum())
            raise CheckpointError(f"{where}: its weights are not all finite numbers (tensor {name} holds {nan:,} "
                                  f"NaN and {inf:,} infinite of {a.size:,}); a network with them plays nonsense")


def build_mlp(net: Mapping[str, Any], tensors: Mapping[str, Any], where: str) -> MLP:
    """The NumPy :class:`~lama_dice.agents.mlp.MLP` of ``net`` with ``tensors`` (NumPy arrays or torch tensors).

    Raises:
        CheckpointError: the tensors are not exactly those of the description (names, shapes, float32).
    """
    shapes = tensor_shapes(net)
    missing = [k for k in shapes if k not in tensors]
    extra = [k for k in tensors if k not in shapes]
    if missing or extra:
        raise CheckpointError(f"{where}: its tensors do not match its network description "
                              f"(missing: {clip(missing)}; unexpected: {clip(extra)})")
    for k, shape in shapes.items():
        t = tensors[k]
        dtype = str(t.dtype).removeprefix("torch.")
        if tuple(t.shape) != shape or dtype != "float32":
            raise CheckpointError(f"{where}: tensor {k} is {dtype} {tuple(t.shape)}, "
                                  f"the description needs float32 {shape}")
    check_finite(tensors, where)
    return MLP(net, {k: _numpy(v) for k, v in tensors.items()})


def _numpy(t: Any) -> np.ndarray:
    """A tensor's values as a NumPy array (a torch tensor is detached first; nothing else is imported)."""
    if hasattr(t, "detach"):
        t = t.detach().cpu()
    return np.asarray(t)


def describe_layers(modules: list[Any], where: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """``(network description, tensors)`` of a chain of torch modules: Linear, activation, ..., Linear.

    Nested containers (``Sequential``...) are flattened; anything else than ``Linear`` and the
    :data:`ACTIVATIONS` at torch's default settings is refused.

    Raises:
        CheckpointError: the chain is not such an MLP.
    """
    import torch

    names = {torch.nn.Tanh: "tanh", torch.nn.ReLU: "relu", torch.nn.ELU: "elu", torch.nn.LeakyReLU: "leaky_relu"}
    leaves = [m for top in modules for m in top.modules() if not list(m.children())]
    linears = [m for m in leaves if isinstance(m, torch.nn.Linear)]
    acts = [m for m in leaves if not isinstance(m, torch.nn.Linear)]
    kinds = {type(m) for m in acts}
    if (not linears or any(type(m) not in names for m in acts) or len(kinds) > 1
            or any(isinstance(m, torch.nn.ELU) and m.alpha != 1.0 for m in acts)
            or any(isinstance(m, torch.nn.LeakyReLU) and m.negative_slope != 0.01 for m in acts)):
        found = clip([type(m).__name__ for m in leaves])
        raise CheckpointError(f"{where}: the policy network is not an MLP of Linear layers and one of the "
                              f"activations {', '.join(ACTIVATIONS)} (found {found})")
    expected = [torch.nn.Linear, type(acts[0]) if acts else None] * (len(linears) - 1) + [torch.nn.Linear]
    if [type(m) for m in leaves] != expected:
        raise CheckpointError(f"{where}: the policy network's layers are not Linear, activation, ..., Linear "
                              f"(found {clip([type(m).__name__ for m in leaves])})")
    net = {"kind": "mlp", "inputs": int(linears[0].in_features), "hidden": [int(m.out_features) for m in linears[:-1]],
           "activation": names[type(acts[0])] if acts else "tanh", "outputs": int(linears[-1].out_features)}
    tensors: dict[str, Any] = {}
    for i, m in enumerate(linears[:-1]):
        tensors[f"hidden.{i}.weight"] = m.weight.detach().to("cpu", torch.float32).contiguous().clone()
        tensors[f"hidden.{i}.bias"] = m.bias.detach().to("cpu", torch.float32).contiguous().clone()
    tensors["logits.weight"] = linears[-1].weight.detach().to("cpu", torch.float32).contiguous().clone()
    tensors["logits.bias"] = linears[-1].bias.detach().to("cpu", torch.float32).contiguous().clone()
    return check_network(net, where), tensors


def describe_sb3_policy(policy: Any, where: str = "policy") -> dict[str, Any]:
    """The ``network`` description of a MaskablePPO policy's actor (for checkpoint sidecars).

    Raises:
        CheckpointError: the actor is not an MLP on the flat observation.
    """
    return describe_layers(_sb3_actor_modules(policy, where), where)[0]


def _sb3_actor_modules(policy: Any, where: str) -> list[Any]:
    from stable_baselines3.common.torch_layers import FlattenExtractor

    extractor = getattr(policy, "pi_features_extractor", policy.features_extractor)
    if not isinstance(extractor, FlattenExtractor):
        raise CheckpointError(f"{where}: the policy has a custom features extractor "
                              f"({type(extractor).__name__}); only MLPs on the flat observation export")
    return [policy.mlp_extractor.policy_net, policy.action_net]


def sb3_actor_tensors(state: Mapping[str, Any], net: Mapping[str, Any], where: str) -> dict[str, Any]:
    """The actor's tensors, named as in agent files, from a MaskableActorCriticPolicy state dict.

    SB3's actor is ``mlp_extractor.policy_net`` (Linear at the even indices) and ``action_net``;
    everything else in the state dict (the value network) is not needed to act and is ignored.

    Raises:
        CheckpointError: a tensor the description needs is not there.
    """
    out: dict[str, Any] = {}
    for i in range(len(net["hidden"])):
        for part in ("weight", "bias"):
            out[f"hidden.{i}.{part}"] = state.get(f"mlp_extractor.policy_net.{2 * i}.{part}")
    out["logits.weight"] = state.get("action_net.weight")
    out["logits.bias"] = state.get("action_net.bias")
    missing = [k for k, v in out.items() if v is None]
    if missing:
        raise CheckpointError(f"{where}: policy.pth lacks the actor tensors its sidecar describes "
                              f"({clip(missing)})")
    return out


# ---------------------------------------------------------------------------
# files

def write_agent_file(path: str | os.PathLike, description: dict[str, Any], tensors: Mapping[str, Any]) -> Path:
    """Write an agent file (atomically): ``tensors`` and ``description`` in the header's metadata.

    The description's ``format`` is set here; ``network`` must describe ``tensors`` exactly.
    """
    from safetensors.numpy import save

    description = {"format": AGENT_FORMAT, **{k: v for k, v in description.items() if k != "format"}}
    where = str(path)
    build_mlp(check_network(description.get("network"), where), tensors, where)  # refuse a file that won't load
    path = Path(path)
    arrays = {k: np.ascontiguousarray(_numpy(v)) for k, v in tensors.items()}
    return write_bytes(path, save(arrays, metadata={META_KEY: json.dumps(description)}), error=CheckpointError)


def read_agent_file(path: str | os.PathLike) -> tuple[dict[str, Any], MLP]:
    """``(description, network)`` of the agent file at ``path`` (checked against this game), on NumPy.

    The network is a :class:`lama_dice.agents.mlp.MLP`: no torch is needed to play an agent file.

    Raises:
        CheckpointError: not an agent file, or one that does not fit this version of the game.
    """
    p = Path(path)
    meta = read_description(p)
    where = f"agent file {p}"
    if meta.get("format") != AGENT_FORMAT:
        raise CheckpointError(f"{where} has format {clip(meta.get('format'))}, not {AGENT_FORMAT} "
                              "(written by another version of lama-dice?)")
    n = description_players(meta, where)
    net = check_network(meta.get("network"), where)
    return meta, build_mlp(net, read_fitting_tensors(p, meta, net, n, where), where)


def description_players(meta: Mapping[str, Any], where: str) -> int:
    """The ``num_players`` of a network file's description (agent or value file).

    Raises:
        CheckpointError: it is not an integer 1..6.
    """
    n = meta.get("num_players")
    if type(n) is not int or not 1 <= n <= 6:
        raise CheckpointError(f"{where}: num_players {clip(n)} is not 1..6")
    return n


def read_fitting_tensors(p: Path, meta: Mapping[str, Any], net: Mapping[str, Any], n: int,
                         where: str) -> dict[str, np.ndarray]:
    """The tensors of the network file ``p``, once its description ``meta`` is checked to fit this game.

    The network ``net`` must read an ``n``-player observation of this version's layout.

    Raises:
        CheckpointError: another input size or observation layout, or the file's tensors cannot be read.
    """
    from safetensors import SafetensorError
    from safetensors.numpy import load_file

    from lama_env.observation import observation_size

    if net["inputs"] != observation_size(n):
        raise CheckpointError(f"{where}: its network reads {net['inputs']} inputs, but a {n}-player "
                              f"observation has {observation_size(n)}")
    obs = meta.get("observation")
    layout = obs.get("layout") if isinstance(obs, dict) else None
    if layout is not None and layout != observation_fingerprint(n):
        raise CheckpointError(f"{where} was trained on another observation layout than this version's "
                              "(lama_env.observation changed since); train it again")
    try:
        return load_file(str(p))
    except (SafetensorError, OSError, ValueError) as e:
        raise CheckpointError(f"{where} is corrupt: {one_line(e)}") from None


def read_description(path: str | os.PathLike) -> dict[str, Any]:
    """The JSON description in an agent file's header (not checked beyond being a JSON object).

    Raises:
        CheckpointError: not a safetensors file, or no lama-dice description in it.
    """
    from safetensors import SafetensorError, safe_open

    p = Path(path)
    _check_file_kind(p)
    try:
        with safe_open(str(p), framework="numpy") as f:
            meta = f.metadata() or {}
    except (SafetensorError, OSError, ValueError) as e:
        raise CheckpointError(f"agent file {p} is not a safetensors file: {one_line(e)}") from None
    text = meta.get(META_KEY)
    if text is None:
        raise CheckpointError(f"agent file {p} has no lama-dice description (metadata key {META_KEY!r})")
    try:
        data = read_json(text, "", allow_nan=True)  # the bounded reader: depth, integer size, duplicate keys
    except (ValueError, RecursionError):
        raise CheckpointError(f"agent file {p}: its description is not valid JSON") from None
    if not isinstance(data, dict):
        raise CheckpointError(f"agent file {p}: its description is not a JSON object")
    return data


def _check_file_kind(p: Path) -> None:
    """Refuse, naming what it is, a file that is not a safetensors file (a zip, a pickle) or is too large to be one.

    A safetensors file starts with its JSON header's length (8 bytes, little-endian) and the header's ``{``.

    Raises:
        CheckpointError: a zip archive (an SB3 checkpoint renamed?), a pickle, or more than
            :data:`MAX_FILE_BYTES`.
    """
    try:
        size = p.stat().st_size
        with open(p, "rb") as f:
            head = f.read(9)
    except OSError as e:
        raise CheckpointError(f"cannot read agent file {p}: {e.strerror or e}") from None
    if head.startswith(_ZIP_MAGIC):
        raise CheckpointError(f"agent file {p} is a zip archive, not a safetensors file (a trainer checkpoint "
                              "renamed? give it its .zip name: ppo:X.zip plays it, lama-dice export converts it)")
    if head.startswith(_PICKLE_MAGIC):
        raise CheckpointError(f"agent file {p} is a Python pickle, not a safetensors file (refused: loading a "
                              "pickle can run code; nothing of it ran)")
    if size > MAX_FILE_BYTES:
        raise CheckpointError(f"agent file {p} is {size:,} bytes, more than any agent file holds "
                              f"({MAX_FILE_BYTES:,}: {SIZE_LIMITS})")
    header = int.from_bytes(head[:8], "little") if len(head) == 9 else -1
    if not 0 < header <= size - 8 or head[8:9] != b"{":
        raise CheckpointError(f"agent file {p} is not a safetensors file (it does not start with a safetensors "
                              "header)")


class MLPActor:
    """Action logits of an in-memory torch network on one thread (restoring the caller's thread count).

    What a policy being trained plays with (:meth:`lama_dice.agents.ppo.PPOPolicy.from_sb3`); loaded
    networks (agent files, checkpoints) are NumPy :class:`~lama_dice.agents.mlp.MLP` instead.
    """

    def __init__(self, net: Any) -> None:
        """Wrap the torch module ``net`` (observation batch -> logits)."""
        self.net = net

    def logits(self, obs: np.ndarray) -> np.ndarray:
        """``net(obs)`` as a NumPy array, computed without gradients on one torch thread."""
        import torch

        # A forward pass of a small MLP on a few hundred states is fastest on one
        # thread (intra-op threads cost far more than they save, worse on a busy
        # machine); restore the caller's setting afterwards.
        threads = torch.get_num_threads()
        if threads != 1:
            torch.set_num_threads(1)
        try:
            with torch.no_grad():
                return self.net(torch.as_tensor(obs, dtype=torch.float32)).numpy()
        finally:
            if threads != 1:
                torch.set_num_threads(threads)
