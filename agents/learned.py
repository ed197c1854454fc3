"""The shared base of learned policies (MaskablePPO and RLlib checkpoints).

A learned policy encodes the acting seat's observation with
:func:`lama_env.observation.encode`, asks its network for action logits, masks
the illegal actions and plays the most likely legal action (or samples one).
Subclasses only provide :meth:`LearnedPolicy.logits`; batching, masking,
sampling and the player-count check live here once.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from lama_env.actions import NUM_ACTIONS
from lama_env.engine import LamaGame
from lama_env.errors import LamaDiceError, bounded
from lama_env.streams import uniform

from .base import Policy
from .mlp import MLP


def players_for_obs_size(size: int) -> int | None:
    """The player count whose observation has ``size`` entries (None if none or ambiguous)."""
    from lama_env.observation import observation_size

    fits = [n for n in range(1, 7) if observation_size(n) == size]
    return fits[0] if len(fits) == 1 else None


def observation_fingerprint(num_players: int) -> str:
    """A short hash of the observation layout's blocks (names, offsets, lengths) for ``num_players``.

    Saved in sidecars so that a checkpoint trained on another layout of the
    same size is refused instead of silently misreading its inputs.
    """
    import hashlib

    from lama_env.observation import observation_layout

    blocks = ";".join(f"{e.name}:{e.start}:{e.length}" for e in observation_layout(num_players))
    return hashlib.sha1(blocks.encode()).hexdigest()[:12]


def one_line(e: BaseException, limit: int = 200) -> str:
    """An exception as ``Type: first line of its message``, at most about ``limit`` characters (for one-line errors)."""
    text = str(e).strip().splitlines()
    return bounded(f"{type(e).__name__}: {text[0]}" if text else type(e).__name__, limit)


class LearnedPolicy(Policy):
    """A policy network over the flat observation and the action mask.

    Attributes:
        num_players: the player count the network was trained for.
        sidecar: the checkpoint's JSON sidecar (None for an in-memory network).
        deterministic: play the most likely legal action; else sample with :attr:`rng`.
        path: the checkpoint it was loaded from (None for an in-memory network).
    """

    #: The error raised for a checkpoint that does not fit the game (subclasses narrow it).
    error_type: type[LamaDiceError] = LamaDiceError
    #: How the error message names the checkpoint, e.g. "checkpoint" or "RLlib checkpoint".
    checkpoint_kind = "checkpoint"

    def _setup(self, num_players: int, sidecar: dict[str, Any] | None, deterministic: bool,
               path: Any = None) -> None:
        self.num_players = int(num_players)
        self.sidecar = sidecar
        self.deterministic = deterministic
        self.path = path

    def logits(self, obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """Action logits (``[B, NUM_ACTIONS]``) for a batch of observations and boolean masks."""
        raise NotImplementedError

    @property
    def mlp(self) -> MLP | None:
        """The NumPy network whose outputs :meth:`logits` are, whatever the mask (None: another kind of network)."""
        return None

    # --------------------------------------------------------------- checks
    def check_compatible(self, num_players: int) -> None:
        """Raise :attr:`error_type` unless the network was trained for ``num_players``."""
        if int(num_players) != self.num_players:
            raise self.error_type(
                f"{self.checkpoint_kind} {self.path or self.spec} was trained for {self.num_players} "
                f"player{'s' if self.num_players != 1 else ''}, the game has {num_players}"
            )

    # --------------------------------------------------------------- acting
    def _batch(self, games: Sequence[LamaGame], legals: Sequence[Sequence[int]],
               invariant: bool = False) -> np.ndarray:
        """Masked logits (illegal actions at -inf) for the seats to act in ``games``.

        ``invariant``: a game's logits the same bits whatever games are batched with it
        (:meth:`lama_dice.agents.mlp.MLP.invariant`; for a NumPy network, else ignored).
        """
        from lama_env.observation import encode

        n = games[0].num_players
        if n != self.num_players:
            self.check_compatible(n)
        obs = np.stack([encode(g, g.current_player) for g in games])
        mask = np.zeros((len(games), NUM_ACTIONS), dtype=bool)
        for i, legal in enumerate(legals):
            mask[i, list(legal)] = True
        mlp = self.mlp if invariant else None
        return np.where(mask, mlp.invariant(obs) if mlp is not None else self.logits(obs, mask), -np.inf)

    def act(self, game: LamaGame, legal: Sequence[int]) -> int:
        """The network's action for the seat to act (:meth:`act_batch`; a forced move needs no forward pass)."""
        if len(legal) == 1:
            return legal[0]
        return self.act_batch([game], [legal])[0]

    def act_batch(self, games: Sequence[LamaGame], legals: Sequence[Sequence[int]]) -> list[int]:
        """Actions for many games with one forward pass."""
        if not games:
            return []
        return self._choose(self._batch(games, legals), games).tolist()

    def act_observations(self, obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """Actions for a batch of encoded observations and boolean masks, with one forward pass.

        What the vector environments call for a wave of games waiting on this policy
        (``obs``: ``[B, obs_size]`` float32 as :func:`lama_env.observation.encode` makes it;
        ``mask``: ``[B, NUM_ACTIONS]`` bool).  Chooses as :meth:`act_batch` does.
        """
        from lama_env.observation import observation_size

        if obs.shape[1] != observation_size(self.num_players):
            raise self.error_type(f"{self.checkpoint_kind} {self.path or self.spec} was trained for "
                                  f"{self.num_players} players: observations of size "
                                  f"{observation_size(self.num_players)}, got {obs.shape[1]}")
        return self._choose(np.where(mask, self.logits(obs, mask), -np.inf))

    def _choose(self, logits: np.ndarray, games: Sequence[LamaGame] | None = None) -> np.ndarray:
        """The most likely legal action (deterministic), else a sample of the masked distribution.

        A sample draws one uniform per row: from the row's game's decision seed
        (:meth:`~lama_dice.agents.base.Policy.decision_seed`) where ``games`` give one, else from :attr:`rng`.
        """
        if self.deterministic:
            return logits.argmax(axis=1)
        z = logits - logits.max(axis=1, keepdims=True)
        cum = np.exp(z).cumsum(axis=1)  # masked entries: exp(-inf) = 0
        seeds = [self.decision_seed(g) for g in games] if games is not None else []
        if seeds and all(s is not None for s in seeds):
            u01 = np.array([uniform(s) for s in seeds if s is not None])
        else:
            u01 = self.rng.random(len(logits))
            for i, s in enumerate(seeds):
                if s is not None:
                    u01[i] = uniform(s)
        u = u01[:, None] * cum[:, -1:]
        # first index whose cumulative mass passes u: always one with positive probability
        return (cum > u).argmax(axis=1)

    def action_probabilities(self, game: LamaGame, legal: Sequence[int] | None = None) -> np.ndarray:
        """The masked policy distribution over all actions for ``game.current_player``."""
        legal = game.legal_actions() if legal is None else legal
        z = self._batch([game], [legal])[0]
        p = np.exp(z - z.max())
        return p / p.sum()
