"""Warm start from a trained network: the ``policy.init_from`` key of a training config.

``policy.init_from`` names a network as ``ppo:`` does (an agent file ``.safetensors``, a
trainer checkpoint ``.zip``, a run folder, a shipped agent such as ``ppo:2p``).  It is read
as data through the public loaders of :mod:`lama_dice.agents.ppo` (nothing in it runs):

* the **actor** (hidden layers and action head) of any of them is copied into the new
  model's policy network;
* the **value network** is copied too when the source is a trainer checkpoint (its
  ``policy.pth`` holds it, read weights-only); an agent file holds only the actor, so the
  value network then starts fresh.

The optimizer starts fresh.  The network must be the config's (``policy.net_arch`` as the
actor's hidden sizes, ``policy.activation``) and the player count the run's; anything else is
a one-line :class:`~lama_dice.train.config.ConfigError` before the run folder is made.
"""

from __future__ import annotations

import zipfile
from dataclasses import dataclass
from typing import Any

from .config import ConfigError, TrainConfig

__all__ = ["SourceNetwork", "check_init_from", "init_weights", "source_network"]

#: The keys of a MaskableActorCriticPolicy state dict that belong to the value network.
VALUE_KEYS = ("mlp_extractor.value_net.", "value_net.")


@dataclass
class SourceNetwork:
    """A warm start's source.

    Attributes:
        spec: as given (``ppo:2p``).
        network: its actor's description (``inputs``, ``hidden``, ``activation``, ``outputs``).
        actor: the actor's tensors, named as in agent files (``hidden.I.weight``..., ``logits.*``).
        value: the value network's state-dict entries (trainer checkpoints), else None.
        num_players: the player count it was trained for.
    """

    spec: str
    network: dict[str, Any]
    actor: dict[str, Any]
    value: dict[str, Any] | None
    num_players: int


def source_network(spec: str) -> SourceNetwork:
    """Load the network ``spec`` names (see the module docstring).

    Raises:
        lama_dice.agents.ppo.CheckpointError: it does not load.
    """
    import torch

    from lama_dice.agents.ppo import load_policy, read_policy_state, resolve_checkpoint

    path = spec.removeprefix("ppo:")
    net, _, n = load_policy(path)  # a NumPy MLP: its weights become torch tensors again
    network, actor = net.network, {k: torch.from_numpy(v) for k, v in net.tensors().items()}
    p = resolve_checkpoint(path)
    value = None
    if zipfile.is_zipfile(p):
        state = read_policy_state(p)
        value = {k: v for k, v in state.items() if k.startswith(VALUE_KEYS)} or None
    return SourceNetwork(spec, network, actor, value, n)


def check_init_from(cfg: TrainConfig) -> SourceNetwork | None:
    """The network ``policy.init_from`` names, checked against the config's (None if it names none).

    Raises:
        ConfigError: a network for another player count, or not the config's network.
        lama_dice.agents.ppo.CheckpointError: it does not load.
    """
    spec = cfg.policy.init_from
    if not spec:
        return None
    src = source_network(spec)
    if src.num_players != cfg.env.num_players:
        raise ConfigError(f"policy.init_from: {spec} is a network for {src.num_players} players, the config has "
                          f"env.num_players: {cfg.env.num_players}")
    arch = cfg.policy.net_arch
    hidden = list(arch) if isinstance(arch, list) else list(arch.pi)
    net = src.network
    if net["hidden"] != hidden or net["activation"] != cfg.policy.activation:
        raise ConfigError(f"policy.init_from: {spec}'s network (hidden layers {net['hidden']}, activation "
                          f"{net['activation']}) is not the config's (policy.net_arch {hidden}, policy.activation "
                          f"{cfg.policy.activation}): set them to match")
    return src


def init_weights(model: Any, cfg: TrainConfig) -> bool:
    """Copy ``policy.init_from``'s actor (and value network, when the source has one that fits) into ``model``.

    Returns:
        Whether the value network was copied too.

    Raises:
        ConfigError, lama_dice.agents.ppo.CheckpointError: as :func:`check_init_from`.
    """
    import torch

    src = check_init_from(cfg)
    if src is None:
        return False
    policy = model.policy
    linears = [m for m in policy.mlp_extractor.policy_net if isinstance(m, torch.nn.Linear)]
    with torch.no_grad():
        for i, layer in enumerate(linears):
            layer.weight.copy_(src.actor[f"hidden.{i}.weight"])
            layer.bias.copy_(src.actor[f"hidden.{i}.bias"])
        policy.action_net.weight.copy_(src.actor["logits.weight"])
        policy.action_net.bias.copy_(src.actor["logits.bias"])
    if src.value is None:
        return False
    mine = {k: v for k, v in policy.state_dict().items() if k.startswith(VALUE_KEYS)}
    if {k: tuple(v.shape) for k, v in mine.items()} != {k: tuple(v.shape) for k, v in src.value.items()}:
        return False  # another value network (policy.net_arch's vf): it starts fresh
    policy.load_state_dict(src.value, strict=False)
    return True
