"""Self-play: a pool of the learner's past snapshots, mixed with heuristic opponents.

Two halves talk through files in the run folder, which keeps them independent
of how the environments are vectorized (same process or ``SubprocVecEnv``
workers):

* the trainer's :class:`SnapshotPool` saves a frozen copy of the learner every
  ``selfplay.snapshot_every`` steps into ``RUN/selfplay/`` and rewrites
  ``RUN/selfplay/pool.json`` (atomically) listing the newest
  ``selfplay.pool_size`` snapshots (plus any ``selfplay.initial`` checkpoints);
* inside each environment, every opponent seat is a :class:`MixtureOpponent`:
  at the start of each episode it draws who plays the seat, a pool snapshot
  with probability ``selfplay.weight`` (once the pool is non-empty, uniformly
  among its members) or otherwise one of the configured opponents by weight.
  It rereads ``pool.json`` when the file changes, loading new snapshots as
  :class:`lama_dice.agents.ppo.PPOPolicy` (on the CPU, one torch thread).

A snapshot that cannot be loaded (for example deleted between the pool file
being read and the load) is skipped for that episode; training never stops
because of the pool.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from lama_dice.agents.base import Policy
from lama_dice.agents.registry import make_agent
from lama_dice.atomic import atomic_path, write_text
from lama_env.engine import LamaGame
from lama_env.errors import LamaDiceError

POOL_FILE = "pool.json"
POOL_DIR = "selfplay"


# ---------------------------------------------------------------------------
# the trainer's side

class SnapshotPool:
    """Writes learner snapshots and the pool file (trainer side).

    Args:
        run_dir: the run folder; snapshots go to ``run_dir/selfplay/``.
        pool_size: newest snapshots listed in the pool.
        initial: checkpoint paths always listed in the pool (``selfplay.initial``).
        sidecar: fields for each snapshot's sidecar (see :func:`lama_dice.agents.ppo.write_sidecar`).
    """

    def __init__(self, run_dir: str | os.PathLike, pool_size: int, initial: Sequence[str] = (),
                 sidecar: dict[str, Any] | None = None) -> None:
        """Create ``run_dir/selfplay/`` if needed (see the class docstring for the arguments)."""
        self.dir = (Path(run_dir) / POOL_DIR).resolve()
        self.dir.mkdir(parents=True, exist_ok=True)
        self.pool_size = int(pool_size)
        self.initial = [_checkpoint_path(s) for s in initial]
        self.sidecar = dict(sidecar or {})
        self.file = self.dir / POOL_FILE

    def snapshots(self) -> list[Path]:
        """Snapshots written so far (oldest first)."""
        return sorted(self.dir.glob("snap-*.zip"))

    def members(self) -> list[str]:
        """The pool as listed in the pool file (or as it would be if none exists yet)."""
        return [str(p) for p in self.initial] + [str(p) for p in self.snapshots()[-self.pool_size:]]

    def add(self, model: Any, timesteps: int) -> Path:
        """Save ``model`` as a snapshot, rewrite the pool file and prune snapshots out of the pool."""
        from lama_dice.agents.ppo import write_sidecar

        path = self.dir / f"snap-{int(timesteps):012d}.zip"
        with atomic_path(path) as tmp:
            model.save(tmp)
            write_sidecar(path, timesteps=timesteps, policy=model.policy, **self.sidecar)
        self.write_pool_file()
        # Keep one snapshot past the pool so that a worker that has just read
        # the old pool file never finds its newest-but-one member deleted.
        for old in self.snapshots()[:-(self.pool_size + 1)]:
            old.unlink(missing_ok=True)
            old.with_suffix(".json").unlink(missing_ok=True)
        return path

    def write_pool_file(self) -> None:
        """Write ``pool.json`` (atomically) listing the current members."""
        write_text(self.file, json.dumps({"members": self.members()}, indent=2) + "\n")


def _checkpoint_path(spec: str) -> Path:
    from lama_dice.agents.ppo import resolve_checkpoint

    return resolve_checkpoint(spec[len("ppo:"):] if spec.startswith("ppo:") else spec).resolve()


# ---------------------------------------------------------------------------
# the environments' side

class PoolReader:
    """Reads the pool file and loads its members as policies (cached, reloaded on change).

    Args:
        pool_file: path of ``pool.json`` (it may not exist yet: the pool is then empty).
        deterministic: snapshots play their argmax action instead of sampling.
    """

    def __init__(self, pool_file: str | os.PathLike, deterministic: bool = False) -> None:
        """A reader of ``pool_file``; nothing is read before the first :meth:`members` call."""
        self.file = Path(pool_file)
        self.deterministic = deterministic
        self._stamp: tuple[float, int] | None = None
        self._members: list[str] = []
        self._loaded: dict[str, Policy] = {}

    def members(self) -> list[str]:
        """Current member paths (rereads the pool file if it changed)."""
        try:
            st = self.file.stat()
        except OSError:
            return self._members
        stamp = (st.st_mtime, st.st_size)
        if stamp != self._stamp:
            try:
                members = json.loads(self.file.read_text(encoding="utf-8"))["members"]
            except (OSError, ValueError, KeyError, TypeError):
                return self._members  # caught mid-write elsewhere: keep the old pool
            self._stamp = stamp
            self._members = [str(m) for m in members]
            self._loaded = {k: v for k, v in self._loaded.items() if k in self._members}
        return self._members

    def get(self, member: str, seed: int | None = None) -> Policy | None:
        """The policy of ``member``, or None if it cannot be loaded."""
        pol = self._loaded.get(member)
        if pol is None:
            from lama_dice.agents.ppo import PPOPolicy

            try:
                pol = PPOPolicy(member, deterministic=self.deterministic)
            except LamaDiceError:
                return None
            pol.seed(seed)
            self._loaded[member] = pol
        return pol


@dataclass(frozen=True)
class WeightedSpec:
    """A configured opponent: an agent spec and its sampling weight."""

    agent: str
    weight: float = 1.0


class MixtureOpponent(Policy):
    """An opponent seat that redraws who plays it at the start of every episode.

    Args:
        opponents: configured opponents (spec strings or :class:`WeightedSpec`).
        pool: the self-play pool, or None.
        pool_weight: probability of drawing a pool member when the pool is non-empty.
        per_round: treat every round as a new episode (``env.episode: round``).
        seed: seed of the draws and of the members' own randomness.

    The seat sees a new episode when it is asked to act in a different game
    object, or (``per_round``) in a new round of the same game.
    """

    spec = "mixture"

    def __init__(self, opponents: Sequence[str | WeightedSpec], pool: PoolReader | None = None,
                 pool_weight: float = 0.0, per_round: bool = False, seed: int | None = None) -> None:
        """Build the configured opponents' agents and seed them (see the class docstring for the arguments)."""
        super().__init__()
        entries = [o if isinstance(o, WeightedSpec) else WeightedSpec(str(o)) for o in opponents]
        if not entries and pool is None:
            raise ValueError("a mixture opponent needs opponents or a self-play pool")
        self.entries = entries
        self.agents = [make_agent(e.agent) for e in entries]
        w = np.array([e.weight for e in entries], dtype=float)
        self.probs = w / w.sum() if len(w) else w
        self.pool = pool
        self.pool_weight = float(pool_weight) if entries else 1.0
        self.per_round = per_round
        self._game: LamaGame | None = None
        self._round = -1
        self.current: Policy | None = None
        self.current_name = ""
        self.seed(seed)

    def seed(self, seed: int | None) -> None:
        """Seed the draws and each configured opponent's agent (with a seed of its own derived from ``seed``)."""
        super().seed(seed)
        for i, a in enumerate(getattr(self, "agents", [])):
            a.seed(None if seed is None else seed * 1000 + i + 1)

    def _draw(self) -> None:
        pool = self.pool
        members = pool.members() if pool is not None else []
        if pool is not None and members and (not self.entries or self.rng.random() < self.pool_weight):
            name = members[int(self.rng.integers(len(members)))]
            pol = pool.get(name, seed=int(self.rng.integers(2**31)))
            if pol is not None:
                self.current, self.current_name = pol, name
                return
        if not self.entries:  # pool-only and nothing loadable yet: play uniformly at random
            from lama_dice.agents.base import RandomPolicy

            self.current, self.current_name = RandomPolicy(), "random"
            self.current.seed(int(self.rng.integers(2**31)))
            return
        k = int(self.rng.choice(len(self.entries), p=self.probs)) if len(self.entries) > 1 else 0
        self.current, self.current_name = self.agents[k], self.entries[k].agent

    def _select(self, game: LamaGame) -> Policy:
        if game is not self._game or (self.per_round and game.round_index != self._round) or self.current is None:
            self._game = game
            self._round = game.round_index
            self._draw()
        assert self.current is not None
        return self.current

    def act(self, game: LamaGame, legal: Sequence[int]) -> int:
        """The action of this episode's drawn opponent (drawn anew when a new episode starts)."""
        return self._select(game).act(game, legal)
