"""The scalar backend (``"python"``): any policy plays in the rules engine, in lockstep chunks.

* **Batched, lockstep play.**  Games are played in chunks of ``chunk_size``
  games advanced together; at each step the games are grouped by the policy
  to act and each policy's :meth:`~lama_dice.agents.base.Policy.act_batch` is called
  once per group, so a learned policy runs one forward pass for many games.
* **Deterministic.**  Game ``i`` draws its deals and dice from the compiled
  engine's streams of ``(seed, i)`` (``LamaGame(seed=seed, game_id=i)``) and a
  ``random`` seat from that game's policy stream, so game ``i`` is game ``i``
  of the fast backend: native agents give the fast backend's result exactly,
  and every agent gives one result whatever ``chunk_size`` and ``workers``
  (see below for the agents that draw randomness of their own).  Every policy
  is reseeded from ``SeedSequence(seed, spawn_key=(1, c))`` before chunk ``c``
  and gets one salt for the run (``SeedSequence(seed, spawn_key=(4,))``,
  :meth:`~lama_dice.agents.base.Policy.seed_decisions`): the agents that draw randomness of
  their own (``mcts:N``, ``search:``, a sampling network) take it from
  :meth:`~lama_dice.agents.base.Policy.decision_rng`, keyed by the game and the decision, so
  they too give one result whatever ``chunk_size`` and ``workers``.  A policy that draws
  from its ``rng`` instead depends on ``chunk_size`` (not on ``workers``).  (The former
  per-chunk NumPy streams, ``streams="numpy"``, are retired: 0.1.0 was the last version with them.)
* **Workers.**  ``workers > 1`` plays chunks in that many processes; spec
  strings are rebuilt in each worker, policy objects are pickled to it.
* **Records.**  The games listed in ``record`` are recorded by the engine and
  handed to ``on_record(game, record)`` as their chunk completes.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Collection, Generator, Sequence
from typing import Any

import numpy as np

from lama_dice.agents.base import Policy
from lama_dice.agents.registry import make_agent
from lama_env.engine import IllegalActionError, LamaGame
from lama_env.rules import RulesConfig

from .outcomes import EvaluationError, GameOutcomes

__all__ = ["DEFAULT_CHUNK_SIZE", "ScalarBackend"]

#: Games advanced together (and the unit of work of a worker process).
DEFAULT_CHUNK_SIZE = 128

# SeedSequence spawn keys of the policies' streams (0: the retired per-chunk game streams; 2: the saved
# sample, see .saving; 3: league lineups, see .seating; 4: the policies' decision salts, one per run).
_KEY_POLICIES, _KEY_SALTS = 1, 4

#: A chunk's task: (num_players, rules, seed, chunk, start, seating, games to record).
_Task = tuple[int, RulesConfig, int, int, int, np.ndarray, frozenset[int]]
#: A chunk's result: its outcomes and the records of its recorded games, by game index.
_ChunkResult = tuple[GameOutcomes, dict[int, dict]]


class ScalarBackend:
    """The ``"python"`` backend: plays any policies, here or in worker processes, and records games."""

    name = "python"

    def __init__(self, agents: Sequence[str | Policy] | None = None, *, workers: int = 1,
                 chunk_size: int = DEFAULT_CHUNK_SIZE, record: Collection[int] = (),
                 on_record: Callable[[int, dict], None] | None = None,
                 on_chunk: Callable[[int], None] | None = None) -> None:
        """Set up a run.

        Args:
            agents: what to build the policies from in each worker process (spec
                strings, or policy objects, which are pickled); default: the policies played.
            workers: processes to play in (1: this process).
            chunk_size: games played in lockstep (and per worker task); part of what the result depends on.
            record: indices of the games to record.
            on_record: called with ``(game, record)`` for each recorded game, in game order.
            on_chunk: called with the number of games of each chunk played, in order.
        """
        self.agents = None if agents is None else list(agents)
        self.workers = workers
        self.chunk_size = chunk_size
        self.record = np.unique(np.fromiter(record, dtype=np.int64))
        self.on_record = on_record
        self.on_chunk = on_chunk

    def supports(self, policies: Sequence[Policy], num_players: int, rules: RulesConfig) -> bool:
        """Always True: the rules engine plays any policy."""
        return True

    def play_games(self, policies: Sequence[Policy], seating: np.ndarray, num_players: int,
                   rules: RulesConfig, seed: int) -> GameOutcomes:
        """Play the games of ``seating`` chunk by chunk (see :class:`~lama_dice.evaluation.backends.Backend`)."""
        num_games = len(seating)
        tasks: list[_Task] = []
        for c, start in enumerate(range(0, num_games, self.chunk_size)):
            stop = min(start + self.chunk_size, num_games)
            lo, hi = np.searchsorted(self.record, [start, stop])
            tasks.append((num_players, rules, seed, c, start, seating[start:stop],
                          frozenset(self.record[lo:hi].tolist())))
        parts: list[GameOutcomes] = []
        agents = self.agents if self.agents is not None else list(policies)
        results = _run_tasks(agents, list(policies), tasks, self.workers)
        try:
            for part, records in results:
                parts.append(part)
                if self.on_record is not None:
                    for i in sorted(records):
                        self.on_record(i, records[i])
                if self.on_chunk is not None:
                    self.on_chunk(part.num_games)
        finally:
            results.close()  # stops the worker pool at once on an error or Ctrl-C
        if not parts:
            empty = np.zeros((0, num_players), dtype=np.int64)
            return GameOutcomes(empty, empty, empty, np.zeros(0, dtype=np.int64))
        return GameOutcomes.concat(parts)


def _run_tasks(agents: Sequence[str | Policy], policies: list[Policy], tasks: list[_Task],
               workers: int) -> Generator[_ChunkResult, None, None]:
    """Yield each chunk's result, in chunk order, played here or in worker processes."""
    workers = min(workers, len(tasks))
    if workers <= 1:
        for t in tasks:
            yield _play_chunk(policies, *t)
        return
    if any(not isinstance(a, str) for a in agents):
        from multiprocessing.reduction import ForkingPickler

        try:  # the pickler of the worker start-up (with torch's reductions, which refuse more than pickle does)
            ForkingPickler.dumps(list(agents))
        except Exception as e:  # any pickling failure
            raise EvaluationError(f"cannot send the agents to worker processes ({e}); use workers=1") from None
    ctx = _mp_context()
    with ctx.Pool(workers, initializer=_worker_init, initargs=(list(agents),)) as pool:
        yield from pool.imap(_worker_chunk, tasks)


def _seed_policies(policies: Sequence[Policy], seed: int, chunk: int) -> None:
    """Reseed every policy for chunk ``chunk``: its generator per chunk, and one salt per run.

    The salt (:meth:`~lama_dice.agents.base.Policy.seed_decisions`) keys the draws a policy takes
    from :meth:`~lama_dice.agents.base.Policy.decision_rng`: the same for every chunk, so that those
    draws depend on the game and the decision only.
    """
    k = max(1, len(policies))  # one entry even with no policy
    states = np.random.SeedSequence(seed, spawn_key=(_KEY_POLICIES, chunk)).generate_state(k, dtype=np.uint64)
    salts = np.random.SeedSequence(seed, spawn_key=(_KEY_SALTS,)).generate_state(k, dtype=np.uint64)
    seen: set[int] = set()
    for i, (pol, s) in enumerate(zip(policies, states, strict=False)):
        if id(pol) not in seen:
            seen.add(id(pol))
            pol.seed(int(s))
            pol.seed_decisions(int(salts[i]))


def _play_chunk(policies: Sequence[Policy], num_players: int, rules: RulesConfig, seed: int,
                chunk: int, start: int, seating: np.ndarray, record: frozenset[int]) -> _ChunkResult:
    """Play games ``start .. start+len(seating)-1`` (chunk ``chunk``) in lockstep."""
    _seed_policies(policies, seed, chunk)
    n = num_players
    b = len(seating)
    games = [LamaGame(n, rules, seed=seed, game_id=start + k, record=(start + k) in record) for k in range(b)]
    seat_pol = [[policies[a] for a in row] for row in seating.tolist()]
    active = list(range(b))
    while active:
        groups: dict[int, tuple[Policy, list[int]]] = {}
        for k in active:
            pol = seat_pol[k][games[k].current_player]
            grp = groups.get(id(pol))
            if grp is None:
                groups[id(pol)] = (pol, [k])
            else:
                grp[1].append(k)
        finished = False
        for pol, ks in groups.values():
            gs = [games[k] for k in ks]
            acts = pol.act_batch(gs, [g.legal_actions() for g in gs])
            if len(acts) != len(ks):
                raise EvaluationError(f"agent {pol.spec!r}: act_batch returned {len(acts)} actions for {len(ks)} games")
            for g, a in zip(gs, acts, strict=True):
                try:
                    g.step(a)
                except IllegalActionError as e:
                    raise EvaluationError(f"agent {pol.spec!r} chose an illegal action: {e}") from None
                if g.game_over:  # rounds flow on: the step that ends a round deals the next
                    finished = True
        if finished:
            active = [k for k in active if not games[k].game_over]
    totals = np.array([g.totals for g in games], dtype=np.int64).reshape(b, n)
    stats = [g.statistics() for g in games]
    rounds = np.array([s["rounds"] for s in stats], dtype=np.int64)
    points, busts, quits, went_out = (np.array([s[key] for s in stats], dtype=np.int64).reshape(b, n)
                                      for key in ("points", "busts", "quits", "went_out"))
    records = {start + k: games[k].to_record() for k in range(b) if (start + k) in record}
    out = GameOutcomes(seating.astype(np.int64), totals, points, rounds, busts, quits, went_out)
    return out, records


# Worker-process state: the policies, built once per process.
_WORKER_POLICIES: list[Policy] | None = None


def _worker_init(agents: Sequence[str | Policy]) -> None:
    global _WORKER_POLICIES
    _WORKER_POLICIES = [make_agent(a) for a in agents]


def _worker_chunk(task: _Task) -> _ChunkResult:
    assert _WORKER_POLICIES is not None
    return _play_chunk(_WORKER_POLICIES, *task)


def _mp_context() -> Any:
    import multiprocessing as mp

    # fork is fastest, but not safe once torch (threads) is loaded in this process
    if "fork" in mp.get_all_start_methods() and "torch" not in sys.modules:
        return mp.get_context("fork")
    return mp.get_context("spawn")
