"""Convert a trained policy into a weights-only agent file (``lama-dice export SPEC OUT``).

:func:`export_agent` reads the network of

* ``ppo:PATH``: a trainer checkpoint ``X.zip`` (or a run folder, or an agent file).  A
  checkpoint whose sidecar describes its network is read weights-only (``policy.pth``);
  an older one needs SB3's loader, which unpickles, and so the opt-in of
  :mod:`lama_dice.agents.trust`;
* ``rllib:PATH``: an RLlib checkpoint or run folder (Ray's loader unpickles: the opt-in
  is always needed);

writes it as an agent file (:mod:`lama_dice.agents.agentfile`), then loads that file as
an untrusted user would and checks that it computes the same action logits as the
source on a few thousand game states (so the same actions on the same games); a file
that does not is removed and the export fails.  A network whose weights are not all finite
(NaN or infinite numbers) is refused before anything is written.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np

from lama_env.errors import LamaDiceError, bounded, clip

from .agentfile import (
    SUFFIX,
    CheckpointError,
    check_finite,
    check_network,
    describe_layers,
    read_agent_file,
    sb3_actor_tensors,
    write_agent_file,
)
from .learned import observation_fingerprint
from .ppo import PPOPolicy, is_checkpoint_archive, load_sb3_policy, read_policy_state, read_sidecar, resolve_checkpoint
from .trust import require_pickle_opt_in

#: Sidecar fields that the agent file's own fields replace (not copied into ``training``).
_SIDECAR_OWN = ("format", "num_players", "rules", "observation_size", "observation_layout", "num_actions",
                "network")
#: Game states the exported network is checked on.
CHECK_STATES = 2000


class ExportError(LamaDiceError):
    """A policy that cannot be exported, or an output path that cannot be written."""


def export_agent(spec: str, out: str | os.PathLike) -> dict[str, Any]:
    """Write the agent file ``out`` from the ``ppo:`` or ``rllib:`` policy ``spec``; return its description.

    Raises:
        ExportError: not an exportable spec, or the written file does not play as the source.
        CheckpointError: the source is missing, corrupt or not for this game.
        UntrustedFileError: the source can only be read by unpickling, without the opt-in.
    """
    out = Path(out)
    if out.suffix != SUFFIX:
        raise ExportError(f"the output {clip(str(out))} must end in {SUFFIX}")
    name, sep, arg = spec.strip().partition(":")
    if not sep or not arg:
        raise ExportError(f"cannot export {clip(spec)}: give ppo:PATH (a trainer checkpoint or run folder) "
                          "or rllib:PATH (an RLlib checkpoint or run folder)")
    if name == "ppo":
        description, tensors, source = _from_ppo(arg)
    elif name == "rllib":
        description, tensors, source = _from_rllib(arg)
    else:
        raise ExportError(f"cannot export {clip(spec)}: only ppo:PATH and rllib:PATH are trained networks")
    check_finite(tensors, f"cannot export {clip(spec)}")  # refused naming the source, before OUT is written
    write_agent_file(out, description, tensors)
    try:
        _check_same_logits(source, out, int(description["num_players"]))
    except BaseException:
        out.unlink(missing_ok=True)
        raise
    return description


def _from_ppo(arg: str) -> tuple[dict[str, Any], dict[str, Any], Any]:
    p = resolve_checkpoint(arg)
    if not is_checkpoint_archive(p):  # already an agent file: write it again
        meta, net = read_agent_file(p)
        return meta, net.tensors(), PPOPolicy(p)
    sidecar = read_sidecar(p) or {}
    where = f"checkpoint {p}"
    if sidecar.get("network") is not None:
        network = check_network(sidecar["network"], f"{where} (its sidecar)")
        tensors = sb3_actor_tensors(read_policy_state(p), network, where)
    else:
        require_pickle_opt_in(f"checkpoint {p} does not describe its network in a sidecar: exporting it "
                              "means unpickling it with Stable-Baselines3")
        policy = load_sb3_policy(p)
        network, tensors = describe_layers([policy.mlp_extractor.policy_net, policy.action_net], where)
    source = PPOPolicy(p)
    training = {**{k: v for k, v in sidecar.items() if k not in _SIDECAR_OWN}, "algorithm": "MaskablePPO (sb3-contrib)"}
    return _description(source.num_players, sidecar.get("rules"), network, training, p), tensors, source


def _from_rllib(arg: str) -> tuple[dict[str, Any], dict[str, Any], Any]:
    require_pickle_opt_in(f"rllib:{bounded(arg, 200)} is read by Ray's RLModule.from_checkpoint")
    from .rllib_agent import RLlibPolicy

    source = RLlibPolicy(arg)
    module = source.module
    where = f"RLlib checkpoint {arg}"
    try:
        parts = [module.encoder.actor_encoder, module.pi]
    except AttributeError:
        raise CheckpointError(f"{where}: not a PPO module with an actor encoder and a policy head") from None
    network, tensors = describe_layers(parts, where)
    sidecar = source.sidecar or {}
    training = {**{k: v for k, v in sidecar.items() if k not in _SIDECAR_OWN}, "algorithm": "PPO (Ray RLlib)"}
    return _description(source.num_players, sidecar.get("rules"), network, training, Path(arg)), tensors, source


def _description(num_players: int, rules: Any, network: dict[str, Any], training: dict[str, Any],
                 source: Path) -> dict[str, Any]:
    from lama_env.observation import observation_size

    return {"num_players": int(num_players),
            "rules": rules if isinstance(rules, dict) else None,
            "observation": {"size": observation_size(num_players), "layout": observation_fingerprint(num_players)},
            "network": network,
            "training": {**training, "exported_from": source.name}}


def _sample_observations(num_players: int, count: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """``count`` observations and masks of states met in random play (every decision kind)."""
    from lama_env.actions import legal_mask
    from lama_env.engine import LamaGame
    from lama_env.observation import encode

    rng = np.random.default_rng(seed)
    obs: list[np.ndarray] = []
    masks: list[np.ndarray] = []
    game = LamaGame(num_players, seed=seed, record=False)
    while len(obs) < count:
        if game.game_over:
            game = LamaGame(num_players, seed=int(rng.integers(1 << 30)), record=False)
        legal = game.legal_actions()
        obs.append(encode(game, game.current_player))
        m = legal_mask(legal, bool)
        masks.append(m)
        game.step(int(rng.choice(legal)))
    return np.stack(obs), np.stack(masks)


def _check_same_logits(source: Any, out: Path, num_players: int) -> None:
    """Refuse an exported file whose network does not give the source's logits on sample states."""
    exported = PPOPolicy(out)
    obs, mask = _sample_observations(num_players, CHECK_STATES)
    a = np.where(mask, source.logits(obs, mask), -np.inf)
    b = np.where(mask, exported.logits(obs, mask), -np.inf)
    if not np.array_equal(a.argmax(axis=1), b.argmax(axis=1)) or not np.allclose(a, b, rtol=0, atol=1e-5):
        raise ExportError(f"the exported network of {out} does not reproduce the source's action logits "
                          f"(largest difference {np.nanmax(np.abs(np.where(mask, a - b, 0))):.3g}); not written")


__all__ = ["ExportError", "export_agent"]
