"""Value networks: each seat's chance to win from a game state, as weights-only files.

A value file (``NAME.safetensors``, the same container as the agent files of
:mod:`lama_dice.agents.agentfile`) holds an MLP's float32 tensors and, in the header's
metadata (key ``lama_dice``), its JSON description::

    {"format": "lama-dice-value/1",
     "num_players": 2,
     "rules": {"triple_llama": "chip_only", "must_discard": true, "end_threshold": 40},
     "observation": {"size": 52, "layout": "877dee001376"},
     "network": {"kind": "mlp", "inputs": 52, "hidden": [256, 256], "activation": "relu", "outputs": 2},
     "head": "win-softmax",
     "training": {"games": ..., "positions": ..., "brier": ..., ...}}

The network reads :func:`lama_env.observation.encode` of a state seen from the player to
act, and its ``outputs`` (one per seat, the player to act first, then the others in turn
order, as the observation arranges them) are logits of a softmax: the probability that each
seat wins the game (a tie of several winners counts as a share for each).  Its tensors are
named as in agent files (``hidden.I.weight``, ``hidden.I.bias``, ``logits.weight``,
``logits.bias``); nothing in the file can run.

The shipped value networks ``2p`` and ``4p`` (``agents/pretrained/value_2p.safetensors``...)
were trained by ``python -m lama_dice.train.value`` on self-play of ``ppo:2p`` and ``ppo:4p``
(docs/training.md, *Value networks*); the ``search:`` agent (:mod:`lama_dice.agents.search`)
values its leaves with them.

The forward pass is the NumPy MLP of agent files (:class:`lama_dice.agents.mlp.MLP`, one BLAS
thread), so that valuing states needs no torch.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from lama_dice.atomic import write_bytes
from lama_env.actions import NUM_ACTIONS
from lama_env.engine import LamaGame
from lama_env.errors import clip

from .agentfile import (
    META_KEY,
    SUFFIX,
    CheckpointError,
    build_mlp,
    check_network,
    description_players,
    read_description,
    read_fitting_tensors,
)

#: The ``format`` tag of value files.
VALUE_FORMAT = "lama-dice-value/1"
#: The only output head this version reads: a softmax over the seats' chances to win.
HEAD = "win-softmax"
#: Where the shipped value networks lie (``value_NAME.safetensors``).
PRETRAINED_DIR = Path(__file__).resolve().parent / "pretrained"


def value_names() -> list[str]:
    """Names of the shipped value networks (``agents/pretrained/value_NAME.safetensors``)."""
    return sorted(q.stem[len("value_"):] for q in PRETRAINED_DIR.glob(f"value_*{SUFFIX}"))


def resolve_value(path: str | os.PathLike) -> Path:
    """The file ``path`` stands for: a shipped value network's name (``2p``) or a value file.

    Raises:
        CheckpointError: no such file.
    """
    p = Path(path).expanduser()
    if not p.exists() and str(path) in value_names():
        return PRETRAINED_DIR / f"value_{path}{SUFFIX}"
    if not p.is_file():
        shipped = ", ".join(value_names()) or "none"
        raise CheckpointError(f"value network {clip(str(path))} is not a file nor a shipped one ({shipped})")
    return p


def check_value_network(net: Any, num_players: int, where: str) -> dict[str, Any]:
    """The validated ``network`` description of a value file (an MLP with one output per seat).

    Raises:
        CheckpointError: not an MLP description this version can build, or not one output per seat.
    """
    if not isinstance(net, dict):
        raise CheckpointError(f"{where}: no network description")
    outputs = net.get("outputs")
    if outputs != num_players:
        raise CheckpointError(f"{where}: the network has {clip(outputs)} outputs, not one per seat "
                              f"({num_players})")
    # The agent-file check knows every other field; it insists on one output per action.
    checked = check_network({**net, "outputs": NUM_ACTIONS}, where)
    return {**checked, "outputs": num_players}


class ValueNet:
    """A value network: each seat's chance to win from a game state.

    Attributes:
        num_players: the player count it was trained for.
        description: the file's JSON description.
        path: the file it was loaded from (None for an in-memory network).
    """

    def __init__(self, description: Mapping[str, Any], tensors: Mapping[str, np.ndarray],
                 path: Path | None = None) -> None:
        """Check ``tensors`` against ``description`` (see the module docstring) and keep them."""
        where = f"value file {path}" if path is not None else "value network"
        n = description_players(description, where)
        net = check_value_network(description.get("network"), n, where)
        if description.get("head", HEAD) != HEAD:
            raise CheckpointError(f"{where}: output head {clip(description.get('head'))} is not {HEAD!r}")
        # the one NumPy MLP of agent files: tensors checked (names, shapes, float32, finite), one BLAS thread
        self.mlp = build_mlp(net, tensors, where)
        self.num_players = n
        self.description = dict(description)
        self.path = path
        rot = np.arange(n)
        #: ``_seat[p, k]``: the absolute seat of entry ``k`` of an observation seen from seat ``p``.
        self._seat = (rot[:, None] + rot[None, :]) % n

    def logits(self, obs: np.ndarray) -> np.ndarray:
        """The network's ``[B, N]`` outputs for ``[B, O]`` observations (:meth:`lama_dice.agents.mlp.MLP.invariant`).

        Each row's outputs are the same bits whatever rows are batched with it, so that a search
        values a position alike in any batch.
        """
        return self.mlp.invariant(np.ascontiguousarray(obs, dtype=np.float32))

    def win_probabilities(self, obs: np.ndarray) -> np.ndarray:
        """``[B, N]`` chances to win of ``[B, O]`` observations, in their seat order (the observing seat first)."""
        z = self.logits(obs).astype(np.float64)
        z -= z.max(axis=1, keepdims=True)
        e = np.exp(z)
        return e / e.sum(axis=1, keepdims=True)

    def values(self, games: Sequence[LamaGame]) -> np.ndarray:
        """``[B, N]`` each seat's chance to win (by absolute seat) from each game, in one forward pass.

        Each game is seen from its player to act (a game between rounds or over has none:
        callers value those otherwise, as :mod:`lama_dice.agents.search` does).
        """
        from lama_env.observation import encode

        if not games:
            return np.zeros((0, self.num_players))
        n = games[0].num_players
        if n != self.num_players:
            raise CheckpointError(f"value network {self.path or '(in memory)'} was trained for "
                                  f"{self.num_players} players, the game has {n}")
        seats = np.fromiter((g.current_player for g in games), dtype=np.int64, count=len(games))
        obs = np.stack([encode(g, int(s)) for g, s in zip(games, seats, strict=True)])
        rel = self.win_probabilities(obs)
        out = np.empty_like(rel)
        np.put_along_axis(out, self._seat[seats], rel, axis=1)
        return out


def write_value_file(path: str | os.PathLike, description: Mapping[str, Any],
                     tensors: Mapping[str, np.ndarray]) -> Path:
    """Write a value file (atomically); refuses one that would not load back (see :class:`ValueNet`)."""
    from safetensors.numpy import save

    description = {"format": VALUE_FORMAT, "head": HEAD,
                   **{k: v for k, v in description.items() if k != "format"}}
    tensors = {k: np.ascontiguousarray(v, dtype=np.float32) for k, v in tensors.items()}
    ValueNet(description, tensors)
    path = Path(path)
    return write_bytes(path, save(tensors, metadata={META_KEY: json.dumps(description)}), error=CheckpointError)


_CACHE: dict[tuple[str, float, int], ValueNet] = {}


def load_value(path: str | os.PathLike) -> ValueNet:
    """The value network of a value file or a shipped name (cached per file version).

    Raises:
        CheckpointError: missing, corrupt, or not a value network for this version of the game.
    """
    p = resolve_value(path)
    st = p.stat()
    key = (str(p.resolve()), st.st_mtime, st.st_size)
    if key in _CACHE:
        return _CACHE[key]
    where = f"value file {p}"
    meta = read_description(p)
    if meta.get("format") != VALUE_FORMAT:
        hint = " (a policy's agent file: give it as the search's network, not as value=)" \
            if str(meta.get("format", "")).startswith("lama-dice-agent") else ""
        raise CheckpointError(f"{where} has format {clip(meta.get('format'))}, not {VALUE_FORMAT}{hint}")
    n = description_players(meta, where)
    net = check_value_network(meta.get("network"), n, where)
    _CACHE[key] = ValueNet(meta, read_fitting_tensors(p, meta, net, n, where), p)
    return _CACHE[key]


__all__ = ["HEAD", "VALUE_FORMAT", "ValueNet", "load_value", "resolve_value", "value_names",
           "write_value_file"]
