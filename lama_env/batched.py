"""A compiled batched engine: many full games of native policies at once (docs/environments.md, The batched engine).

:func:`play_batch` plays them in one Numba-compiled kernel and returns per-game outcome arrays (:class:`BatchResult`).
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, overload

import numpy as np

from . import _kernel as K
from . import _vector_kernel as VK
from . import streams
from .constants import KIND_RANDOM, KIND_TABLE
from .errors import LamaDiceError
from .gamelog import iter_log, log_to_record, log_to_result  # noqa: F401  (iter_log: re-exported)
from .rules import NUM_FACES, RulesConfig, check_num_players

__all__ = ["KIND_RANDOM", "KIND_TABLE", "NUM_MASKS", "BatchResult", "NativePolicy", "NativePolicyError",
           "compile_kernel", "mask_display", "native_description", "play_batch"]

NUM_MASKS = 1 << NUM_FACES  #: displays by the set of faces they hold


class NativePolicyError(LamaDiceError, ValueError):
    """A policy that the batched engine cannot play natively, a malformed description or a bad argument."""


#: The display of a mask (:func:`lama_env._kernel.mask_display`): a table policy's tables are indexed by masks.
mask_display = K.mask_display


@dataclass(frozen=True, eq=False)
class NativePolicy:
    """A policy as plain data, for the kernel (build one with :meth:`random` or :meth:`table`).

    ``spec`` labels it; ``kind`` is :data:`KIND_RANDOM` or :data:`KIND_TABLE`, whose ``quit_table[mask]`` is 1
    where it quits holding the faces of the mask and which takes the shown row card of smallest
    ``take_rank[mask, face]`` (:func:`lama_env._kernel.native_action`); ``rules``: those the tables are for (None: any).
    """

    spec: str
    kind: int
    quit_table: np.ndarray = field(repr=False)
    take_rank: np.ndarray = field(repr=False)
    rules: RulesConfig | None = None

    @classmethod
    def random(cls, spec: str = "random") -> NativePolicy:
        """Uniform over the legal actions."""
        return cls(spec, KIND_RANDOM, np.zeros(NUM_MASKS, dtype=np.uint8),
                   np.zeros((NUM_MASKS, NUM_FACES), dtype=np.int64))

    @classmethod
    def table(cls, spec: str, quit_table: Any, take_rank: Any, rules: RulesConfig | None = None) -> NativePolicy:
        """A :data:`KIND_TABLE` policy (see the attributes); raises :class:`NativePolicyError` if malformed."""
        q = np.ascontiguousarray(quit_table, dtype=np.uint8)
        t = np.ascontiguousarray(take_rank, dtype=np.int64)
        if q.shape != (NUM_MASKS,) or t.shape != (NUM_MASKS, NUM_FACES):
            raise NativePolicyError(f"a table policy needs quit_table[{NUM_MASKS}] and take_rank[{NUM_MASKS}, "
                                    f"{NUM_FACES}], got {q.shape} and {t.shape}")
        q.flags.writeable = False
        t.flags.writeable = False
        return cls(spec, KIND_TABLE, q, t, rules)


@overload
def native_description(agent: Any, rules: RulesConfig, required: Literal[True]) -> NativePolicy: ...
@overload
def native_description(agent: Any, rules: RulesConfig, required: bool = False) -> NativePolicy | None: ...
def native_description(agent: Any, rules: RulesConfig, required: bool = False) -> NativePolicy | None:
    """``agent``'s :class:`NativePolicy` (``agent.native(rules)``), else None (``required``: NativePolicyError)."""
    native = getattr(agent, "native", None)
    desc = agent if isinstance(agent, NativePolicy) else native(rules) if callable(native) else None
    if isinstance(desc, NativePolicy) and (desc.rules is None or desc.rules == rules):
        return desc
    if not required:
        return None
    if isinstance(desc, NativePolicy):
        raise NativePolicyError(f"native policy {desc.spec!r} was built for other rules than these")
    if not callable(native):
        raise NativePolicyError(f"{agent!r} is neither a native policy description nor a policy with a native() "
                                "method (lama_dice.agents.native.play_batch takes agent specs)")
    if desc is None:
        raise NativePolicyError(f"agent {getattr(agent, 'spec', agent)!r} is not a native policy (its native() gives "
                                "no description)")
    raise NativePolicyError(f"{agent!r}.native() returned {desc!r}, not a NativePolicy")


#: Transitions per call of the compiled kernel, so that a Ctrl-C is heard (docs/environments.md, Ctrl-C).
KERNEL_STEPS = 1 << 19


def _play_all(r: np.ndarray, log: np.ndarray, agents: np.ndarray, seating: np.ndarray, game_ids: np.ndarray,
              seed_mixed: np.uint64) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Play the games to their end in :func:`lama_env._vector_kernel.batch_kernel`, :data:`KERNEL_STEPS` a call.

    Returns each game's totals and statistics (``[G, 6, N]``), its rounds, the log (grown as needed), its lengths.
    """
    games, n = seating.shape
    fin, rounds, lens = np.zeros((games, 6, n), np.int64), np.zeros(games, np.int64), np.zeros(games, np.int64)
    s, pos = K.new_state(1), np.zeros(2, dtype=np.int64)
    while pos[0] < games:
        if r["logging"] and int(s[0]["logpos"]) + K.LOG_ROOM + 8 * n > log.shape[1]:
            log = np.concatenate([log, np.zeros_like(log)], axis=1)
        VK.batch_kernel(r, log, agents, seating, game_ids, seed_mixed, fin, rounds, lens, s, pos, KERNEL_STEPS)
    return fin, rounds, log, lens


@dataclass
class BatchResult:
    """Outcomes of a batch of games: ``int64`` arrays by game (``rounds``, ``game_ids``), then seat, and the logs.

    Per seat: ``totals``, ``round_points``, ``busts`` (caused), ``quits``, ``went_out``, ``triple_llamas``, ``seating``.
    """

    num_players: int
    rules: RulesConfig
    game_ids: np.ndarray
    seating: np.ndarray
    totals: np.ndarray
    round_points: np.ndarray
    rounds: np.ndarray
    busts: np.ndarray
    quits: np.ndarray
    went_out: np.ndarray
    triple_llamas: np.ndarray
    logs: dict[int, np.ndarray] = field(default_factory=dict)

    @property
    def num_games(self) -> int:
        """How many games were played (``G``)."""
        return int(self.totals.shape[0])

    def record(self, g: int) -> dict:
        """Game ``g`` (which must have been logged) as a ``lama-dice-record/1`` dict."""
        return log_to_record(self._log(g), self.num_players, self.rules)

    def result(self, g: int) -> dict:
        """The batched engine's replay result of logged game ``g`` (docs/RULES.md format)."""
        return log_to_result(self._log(g), self.num_players)

    def _log(self, g: int) -> np.ndarray:
        if g not in self.logs:
            raise KeyError(f"game {g} was not logged (pass it in log_games)")
        return self.logs[g]


# ------------------------------------------------------------------- driver
def play_batch(num_players: int, agents: Sequence[Any], *, games: int | None = None, seating: np.ndarray | None = None,
               rules: RulesConfig | Mapping | None = None, seed: int | None = None, game_ids: np.ndarray | None = None,
               log_games: Sequence[int] = (), log_capacity: int = 4096) -> BatchResult:
    """Play whole games of native policies in the compiled kernel (docs/environments.md, The batched engine).

    ``agents`` sit by ``seating`` (``int[G, N]``; else agent ``s % len(agents)`` at seat ``s`` of ``games`` games);
    game ``g`` plays the streams of ``(seed, game_ids[g])``; ``log_games`` are logged (:meth:`BatchResult.record`).
    """
    rules = RulesConfig.from_dict(rules)
    n = check_num_players(num_players, NativePolicyError)
    if not agents:
        raise NativePolicyError("at least one agent is needed")
    natives = [native_description(a, rules, required=True) for a in agents]
    if seating is None:
        if games is None:
            raise NativePolicyError("give games or seating")
        seating = np.tile(np.arange(n) % len(natives), (int(games), 1))
    seating = np.ascontiguousarray(seating, dtype=np.int64)
    if seating.ndim != 2 or seating.shape[1] != n:
        raise NativePolicyError(f"seating must have shape (games, {n}), got {seating.shape}")
    if seating.size and (seating.min() < 0 or seating.max() >= len(natives)):
        raise NativePolicyError(f"seating holds agent indices outside 0..{len(natives) - 1}")
    n_games = seating.shape[0]
    if games is not None and games != n_games:
        raise NativePolicyError(f"games={games} but seating has {n_games} rows")
    game_ids = np.ascontiguousarray(np.arange(n_games) if game_ids is None else game_ids, dtype=np.int64)
    if game_ids.shape != (n_games,):
        raise NativePolicyError(f"game_ids must have shape ({n_games},), got {game_ids.shape}")
    seed_mixed = streams.kernel_seed(seed, NativePolicyError)
    table = K.agents_table(np.array([a.kind for a in natives], dtype=np.int64),
                           np.stack([a.quit_table for a in natives]), np.stack([a.take_rank for a in natives]))
    no_log = np.zeros((0, 0), dtype=np.int32)
    fin, rounds, _, _ = _play_all(K.make_rules(n, rules)[()], no_log, table, seating, game_ids, seed_mixed)
    todo = sorted({int(g) for g in log_games})
    if todo and (todo[0] < 0 or todo[-1] >= n_games):
        raise NativePolicyError(f"log_games must be game indices 0..{n_games - 1}")
    logs: dict[int, np.ndarray] = {}
    if todo:
        idx = np.array(todo, dtype=np.int64)
        log = np.zeros((len(idx), max(int(log_capacity), K.LOG_ROOM + 8 * n)), dtype=np.int32)
        fin2, _, log, lens = _play_all(K.make_rules(n, rules, logging=True)[()], log, table, seating[idx],
                                       game_ids[idx], seed_mixed)
        if not np.array_equal(fin2, fin[idx]):  # pragma: no cover
            raise RuntimeError("batched engine: a logged game did not replay identically")
        logs = {g: log[j, :lens[j]].copy() for j, g in enumerate(todo)}
    tot, pts, busts, quits, out, triples = np.ascontiguousarray(fin.transpose(1, 0, 2))  # (one pass, not six)
    return BatchResult(n, rules, game_ids, seating, tot, pts, rounds, busts, quits, out, triples, logs)


def compile_kernel() -> float:
    """Compile (or load from the on-disk cache) the kernel now; return the seconds it took."""
    t0 = time.perf_counter()
    first_face = np.tile(np.arange(NUM_FACES, dtype=np.int64), (NUM_MASKS, 1))
    play_batch(2, [NativePolicy.random(), NativePolicy.table("always-roll", np.zeros(NUM_MASKS), first_face)],
               games=1, seed=0, log_games=[0])
    return time.perf_counter() - t0
