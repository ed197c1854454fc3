"""Evaluate agents against each other, with confidence intervals.

:func:`evaluate` plays ``games`` complete games with one agent per seat and
reports, per agent, the win rate with a 95% Wilson interval, the mean points
per round, the mean final points and (for more than two players) the mean
rank::

    from lama_dice.evaluation.evaluate import evaluate

    result = evaluate(["threshold:20", "random"], num_players=2, games=2000, seed=0)
    print(result.agents[0].win_rate, result.agents[0].win_rate_ci95)
    json.dump(result.to_json(), fh)

Agents are spec strings (see :mod:`lama_dice.agents.registry`) or
:class:`~lama_dice.agents.base.Policy` objects (e.g. the policy being trained).  The same
spec given twice is two separate agents, each reported.

How games are played
--------------------
* **Seats rotate.**  Game ``i`` seats the agents in a rotation of a cyclic
  order: within each block of ``N`` consecutive games every agent plays every
  seat once, and successive blocks cycle through the ``(N-1)!`` cyclic orders
  (who sits after whom), so for ``N > 2`` neighbours are balanced too.  With
  ``games`` a multiple of ``N`` each agent plays each seat exactly equally
  often; otherwise the counts differ by at most one (see :func:`rotation_seating`).
* **Ties share the win.**  The ``k`` players tied for the fewest points each
  get a win share of ``1/k``; the win rate is the mean share and its interval
  is the Wilson interval with ``n`` = games played and ``p`` = win rate
  (conservative when ties occur, see :func:`lama_dice.evaluation.stats.wilson_interval`).
* **Batched, lockstep play.**  Games are played in chunks of ``chunk_size``
  games advanced together; at each step the games are grouped by the policy
  to act and each policy's :meth:`~lama_dice.agents.base.Policy.act_batch` is called
  once per group, so a learned policy runs one forward pass for many games.
* **Deterministic.**  Chunk ``c`` draws its deals and dice from
  ``SeedSequence(seed, spawn_key=(0, c))`` and reseeds every policy from
  ``SeedSequence(seed, spawn_key=(1, c))`` before it starts, so the result
  depends on ``seed`` (and ``chunk_size``) but not on ``workers``.  Policies
  must choose actions from the game, the legal actions and their own seeded
  randomness only.
* **Workers.**  ``workers > 1`` plays chunks in that many processes
  (``0`` = all cores); spec strings are rebuilt in each worker, policy
  objects are pickled to it.

The fast backend
----------------
Both backends produce a :class:`GameOutcomes` (per-game arrays) from which
all statistics are computed in one place (:func:`agent_stats`).  With
``backend="auto"`` the evaluator uses :mod:`lama_dice.evaluation.compiled` when that module
imports and says it supports the agents; otherwise this module's scalar
backend plays the games.  The contract ``lama_dice.evaluation.compiled`` must meet:

``supports(policies, num_players, rules) -> bool``
    True when the backend can play every one of ``policies`` (the built
    :class:`~lama_dice.agents.base.Policy` objects, in agent order) natively under
    ``rules`` (a :class:`~lama_env.rules.RulesConfig`) with ``num_players``.

``play_games(policies, seating, num_players, rules, seed) -> GameOutcomes``
    Play ``G = len(seating)`` complete games; in game ``g`` seat ``s`` is
    played by ``policies[seating[g, s]]`` (``seating`` is ``int64[G, N]``).
    Follow RULES.md exactly as :class:`~lama_env.engine.LamaGame` does (player
    0 starts round 1; deals and dice at random from ``seed``, an int >= 0),
    return a :class:`GameOutcomes` with ``seating`` the array given, and be
    deterministic in its arguments (not dependent on threads or cores).
    ``busts``/``quits``/``went_out`` may be None if not tracked.  The random
    streams need not match the scalar backend's; the statistics must agree
    within sampling error.

Saving games (``save_games=DIR``) always uses the scalar backend, which
records the games: ``DIR/game_NNNNNN.json`` are ``lama-dice-record/1``
records (replay them with ``lama-dice replay``) and ``DIR/index.json`` says
who sat where and how each saved game ended.
"""

from __future__ import annotations

import importlib
import itertools
import json
import math
import os
import pickle
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, Sequence, Union

import numpy as np

from lama_dice.agents.base import Policy
from lama_dice.agents.registry import make_agent
from lama_env.engine import IllegalActionError, LamaGame
from lama_env.errors import LamaDiceError
from lama_env.rules import RulesConfig, check_num_players

from .stats import fractional_ranks, mean_se, ratio_interval, tied_games, wilson_interval, win_shares

__all__ = [
    "AgentLike", "EvaluationError", "GameOutcomes", "AgentStats", "EvalResult", "evaluate",
    "run_games", "rotation_seating", "agent_stats", "DEFAULT_CHUNK_SIZE", "BACKENDS",
]

#: An agent: a spec string (``"threshold:20"``) or a built policy.
AgentLike = Union[str, Policy]

#: Games advanced together (and the unit of work of a worker process).
DEFAULT_CHUNK_SIZE = 128
#: Accepted values of ``backend``.
BACKENDS = ("auto", "python", "fast")
#: Confidence level of the reported intervals.
CONFIDENCE = 0.95
#: Name of the saved-games index file.
INDEX_FILE = "index.json"

# SeedSequence spawn keys of the independent random streams.
_KEY_GAMES, _KEY_POLICIES, _KEY_SAMPLE = 0, 1, 2


class EvaluationError(LamaDiceError, ValueError):
    """Bad evaluation arguments (agents, player count, game count, workers, output paths)."""


# ---------------------------------------------------------------------------
# Per-game outcomes: what every backend returns
# ---------------------------------------------------------------------------
@dataclass
class GameOutcomes:
    """What a backend returns: the outcome of each game, by seat.

    All arrays are ``int64``; ``G`` games, ``N`` seats.

    Attributes:
        seating: ``[G, N]`` agent index (into the list of agents) at each seat.
        totals: ``[G, N]`` final totals (chips) by seat.
        round_points: ``[G, N]`` sum over the game's rounds of the points scored by seat.
        rounds: ``[G]`` rounds played.
        busts: ``[G, N]`` rounds in which the seat busted (None if not tracked).
        quits: ``[G, N]`` rounds in which the seat quit (None if not tracked).
        went_out: ``[G, N]`` rounds in which the seat went out (None if not tracked).
    """

    seating: np.ndarray
    totals: np.ndarray
    round_points: np.ndarray
    rounds: np.ndarray
    busts: np.ndarray | None = None
    quits: np.ndarray | None = None
    went_out: np.ndarray | None = None

    _OPTIONAL = ("busts", "quits", "went_out")

    @property
    def num_games(self) -> int:
        return int(self.seating.shape[0])

    @property
    def num_players(self) -> int:
        return int(self.seating.shape[1])

    def validate(self, num_games: int | None = None, num_players: int | None = None,
                 num_agents: int | None = None) -> "GameOutcomes":
        """Check shapes and values (raises ``ValueError``); return self with arrays as ``int64``."""
        for name in ("seating", "totals", "round_points", "rounds", *self._OPTIONAL):
            v = getattr(self, name)
            if v is not None:
                setattr(self, name, np.asarray(v, dtype=np.int64))
        g, n = self.seating.shape if self.seating.ndim == 2 else (-1, -1)
        if g < 0:
            raise ValueError(f"seating must be a [G, N] array, got shape {self.seating.shape}")
        if num_games is not None and g != num_games:
            raise ValueError(f"expected {num_games} games, got {g}")
        if num_players is not None and n != num_players:
            raise ValueError(f"expected {num_players} seats, got {n}")
        for name in ("totals", "round_points", *self._OPTIONAL):
            v = getattr(self, name)
            if v is not None and v.shape != (g, n):
                raise ValueError(f"{name} must have shape {(g, n)}, got {v.shape}")
        if self.rounds.shape != (g,):
            raise ValueError(f"rounds must have shape {(g,)}, got {self.rounds.shape}")
        if g and (self.totals.min() < 0 or self.round_points.min() < 0 or self.rounds.min() < 1):
            raise ValueError("totals and round points must be >= 0 and every game must have a round")
        if num_agents is not None and g and (self.seating.min() < 0 or self.seating.max() >= num_agents):
            raise ValueError(f"seating must index {num_agents} agents")
        return self

    @classmethod
    def concat(cls, parts: Sequence["GameOutcomes"]) -> "GameOutcomes":
        """Join outcomes of consecutive game ranges (optional arrays kept only if every part has them)."""
        if not parts:
            raise ValueError("nothing to concatenate")
        kw: dict[str, Any] = {}
        for name in ("seating", "totals", "round_points", "rounds", *cls._OPTIONAL):
            vals = [getattr(p, name) for p in parts]
            kw[name] = None if any(v is None for v in vals) else np.concatenate(vals)
        return cls(**kw)

    def select(self, games: np.ndarray) -> "GameOutcomes":
        """The outcomes of the games at indices (or mask) ``games``."""
        kw = {name: (None if getattr(self, name) is None else getattr(self, name)[games])
              for name in ("seating", "totals", "round_points", "rounds", *self._OPTIONAL)}
        return GameOutcomes(**kw)


# ---------------------------------------------------------------------------
# Statistics (the one place they are computed)
# ---------------------------------------------------------------------------
@dataclass
class AgentStats:
    """One agent's results.

    Attributes:
        spec: the agent's spec (or its policy's ``spec`` attribute).
        games: games the agent played.
        wins: sum of win shares (a win shared by ``k`` players counts ``1/k``).
        win_rate: ``wins / games``.
        win_rate_ci95: 95% Wilson interval of the win rate.
        mean_points_per_round: total round points / rounds played (chips returned do not count).
        points_per_round_ci95: its 95% interval (games as independent units: :func:`lama_dice.evaluation.stats.ratio_interval`).
        mean_final_points: mean final total (chips returned included).
        final_points_se: standard error of ``mean_final_points``.
        mean_rank: mean place (1 = fewest points; tied players share the mean of their places);
            None for fewer than three players.
        games_by_seat: games played in each seat.
        rounds: rounds played.
        bust_rate, quit_rate, went_out_rate: fraction of rounds in which the agent busted,
            quit, went out (None if the backend does not track them).
    """

    spec: str
    games: int
    wins: float
    win_rate: float
    win_rate_ci95: tuple[float, float]
    mean_points_per_round: float
    mean_final_points: float
    final_points_se: float
    mean_rank: float | None
    games_by_seat: list[int]
    rounds: int
    bust_rate: float | None = None
    quit_rate: float | None = None
    went_out_rate: float | None = None
    points_per_round_ci95: tuple[float, float] = (math.nan, math.nan)

    def to_json(self) -> dict:
        """A JSON-ready dict (``mean_rank`` only when defined; NaN becomes null)."""
        out: dict[str, Any] = {
            "spec": self.spec,
            "games": self.games,
            "wins": self.wins,
            "win_rate": self.win_rate,
            "win_rate_ci95": [self.win_rate_ci95[0], self.win_rate_ci95[1]],
            "mean_points_per_round": self.mean_points_per_round,
            "points_per_round_ci95": [_nan_none(self.points_per_round_ci95[0]), _nan_none(self.points_per_round_ci95[1])],
            "mean_final_points": self.mean_final_points,
            "final_points_se": self.final_points_se,
        }
        if self.mean_rank is not None:
            out["mean_rank"] = self.mean_rank
        out["games_by_seat"] = list(self.games_by_seat)
        out["rounds"] = self.rounds
        for name in ("bust_rate", "quit_rate", "went_out_rate"):
            if getattr(self, name) is not None:
                out[name] = getattr(self, name)
        return {k: (None if isinstance(v, float) and math.isnan(v) else v) for k, v in out.items()}


def _nan_none(x: float) -> float | None:
    return None if math.isnan(x) else x


def agent_stats(outcomes: GameOutcomes, specs: Sequence[str]) -> list[AgentStats]:
    """Per-agent statistics of ``outcomes`` (agent ``a`` = ``specs[a]``), in the order of ``specs``.

    An agent that played no game gets NaN means and the interval ``(0, 1)``.
    """
    seating, totals = outcomes.seating, outcomes.totals
    n = outcomes.num_players
    shares = win_shares(totals) if len(totals) else np.zeros_like(totals, dtype=float)
    ranks = fractional_ranks(totals) if n > 2 and len(totals) else None
    rounds_by_seat = np.broadcast_to(outcomes.rounds[:, None], seating.shape)
    out = []
    for a, spec in enumerate(specs):
        mask = seating == a
        games = int(mask.sum())
        if np.any(mask.sum(axis=1) > 1):
            raise ValueError(f"agent {a} sits in two seats of one game")
        rounds = int(rounds_by_seat[mask].sum())
        wins = float(shares[mask].sum())
        mean_final, se_final = mean_se(totals[mask])
        rate = wins / games if games else math.nan
        rate_of = (lambda arr: float(arr[mask].sum()) / rounds if rounds else math.nan)
        _, ppr_lo, ppr_hi = ratio_interval(outcomes.round_points[mask], rounds_by_seat[mask], CONFIDENCE)
        out.append(AgentStats(
            spec=str(spec),
            games=games,
            wins=wins,
            win_rate=rate,
            win_rate_ci95=wilson_interval(min(wins, games), games, CONFIDENCE),
            mean_points_per_round=float(outcomes.round_points[mask].sum()) / rounds if rounds else math.nan,
            mean_final_points=mean_final,
            final_points_se=se_final,
            mean_rank=(float(ranks[mask].mean()) if games else math.nan) if ranks is not None else None,
            games_by_seat=[int(x) for x in mask.sum(axis=0)],
            rounds=rounds,
            bust_rate=None if outcomes.busts is None else rate_of(outcomes.busts),
            quit_rate=None if outcomes.quits is None else rate_of(outcomes.quits),
            went_out_rate=None if outcomes.went_out is None else rate_of(outcomes.went_out),
            points_per_round_ci95=(ppr_lo, ppr_hi),
        ))
    return out


# ---------------------------------------------------------------------------
# Seating
# ---------------------------------------------------------------------------
def rotation_seating(num_players: int, games: int) -> np.ndarray:
    """Seating for ``games`` games of ``num_players`` agents (agent ``a`` = index ``a``).

    Game ``i = b * N + r`` seats the ``b``-th cyclic order (cycling through the
    ``(N-1)!`` orders that start with agent 0) rotated by ``r``: seat ``s``
    gets ``order[(s + r) % N]``.  Each block of ``N`` games puts every agent in
    every seat once; a final partial block leaves the seat counts within one
    of each other.

    Returns:
        ``int64[games, num_players]``.
    """
    n = num_players
    orders = np.array([(0, *p) for p in itertools.permutations(range(1, n))], dtype=np.int64).reshape(-1, n)
    i = np.arange(games)
    block, r = np.divmod(i, n)
    cols = (np.arange(n)[None, :] + r[:, None]) % n
    return orders[block % len(orders)][np.arange(games)[:, None], cols]


# ---------------------------------------------------------------------------
# Scalar backend: lockstep play of one chunk
# ---------------------------------------------------------------------------
def _seed_policies(policies: Sequence[Policy], seed: int, chunk: int) -> None:
    states = np.random.SeedSequence(seed, spawn_key=(_KEY_POLICIES, chunk)).generate_state(
        max(1, len(policies)), dtype=np.uint64)
    seen: set[int] = set()
    for pol, s in zip(policies, states):
        if id(pol) not in seen:
            seen.add(id(pol))
            pol.seed(int(s))


def _play_chunk(policies: Sequence[Policy], num_players: int, rules: RulesConfig, seed: int,
                chunk: int, start: int, seating: np.ndarray,
                record: frozenset[int]) -> tuple[GameOutcomes, dict[int, dict]]:
    """Play games ``start .. start+len(seating)-1`` (chunk ``chunk``) in lockstep."""
    _seed_policies(policies, seed, chunk)
    rng = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(_KEY_GAMES, chunk)))
    n = num_players
    b = len(seating)
    games = [LamaGame(n, rules, rng=rng, record=(start + k) in record) for k in range(b)]
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
            for g, a in zip(gs, acts):
                try:
                    g.step(a)
                except IllegalActionError as e:
                    raise EvaluationError(f"agent {pol.spec!r} chose an illegal action: {e}") from None
                if g.round_over:
                    if g.game_over:
                        finished = True
                    else:
                        g.next_round()
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


def _worker_init(agents: Sequence[AgentLike]) -> None:
    global _WORKER_POLICIES
    _WORKER_POLICIES = [make_agent(a) for a in agents]


def _worker_chunk(task: tuple) -> tuple[GameOutcomes, dict[int, dict]]:
    assert _WORKER_POLICIES is not None
    return _play_chunk(_WORKER_POLICIES, *task)


def _mp_context():
    import multiprocessing as mp

    # fork is fastest, but not safe once torch (threads) is loaded in this process
    if "fork" in mp.get_all_start_methods() and "torch" not in sys.modules:
        return mp.get_context("fork")
    return mp.get_context("spawn")


def _build_policies(agents: Sequence[AgentLike]) -> list[Policy]:
    return [make_agent(a) for a in agents]


def _spec_of(agent: AgentLike, policy: Policy) -> str:
    return agent.strip() if isinstance(agent, str) else str(getattr(policy, "spec", type(policy).__name__))


def _resolve_backend(backend: str, policies: Sequence[Policy], num_players: int, rules: RulesConfig,
                     need_records: bool) -> Any:
    """The :mod:`lama_dice.evaluation.compiled` module to use, or None for the scalar backend."""
    if backend not in BACKENDS:
        raise EvaluationError(f"backend must be one of {', '.join(BACKENDS)}, got {backend!r}")
    if backend == "python":
        return None
    try:
        fast_eval = importlib.import_module("lama_dice.evaluation.compiled")
    except ImportError as e:
        if backend == "fast":
            raise EvaluationError(f"the fast backend is not available: {e}") from None
        return None
    if need_records:
        if backend == "fast":
            raise EvaluationError("the fast backend cannot save games; use backend 'python' or 'auto'")
        return None
    if not fast_eval.supports(list(policies), num_players, rules):
        if backend == "fast":
            specs = ", ".join(getattr(p, "spec", "?") for p in policies)
            raise EvaluationError(f"the fast backend does not support these agents/rules ({specs})")
        return None
    return fast_eval


def _check_int(name: str, value: Any, lo: int, hi: int | None = None) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise EvaluationError(f"{name} must be an integer, got {value!r}")
    if value < lo or (hi is not None and value > hi):
        rng = f"{lo}..{hi}" if hi is not None else f"at least {lo}"
        raise EvaluationError(f"{name} must be {rng}, got {value}")
    return int(value)


_MAX_SEED = 2**63 - 1


def _resolve_seed(seed: int | None) -> int:
    if seed is None:
        return int(np.random.SeedSequence().entropy) & _MAX_SEED
    return _check_int("seed", seed, 0, _MAX_SEED)


def _resolve_workers(workers: int) -> int:
    workers = _check_int("workers", workers, 0)
    return workers or (os.cpu_count() or 1)


def _check_save_args(save_games: Any, save_sample: int | None, backend: str) -> int | None:
    if save_sample is not None:
        save_sample = _check_int("save_sample", save_sample, 1)
        if save_games is None:
            raise EvaluationError("save_sample needs save_games (a directory)")
    if save_games is not None and backend == "fast":
        raise EvaluationError("the fast backend cannot save games; use backend 'python' or 'auto'")
    return save_sample


def _sample_games(games: int, sample: int | None, seed: int) -> frozenset[int]:
    if sample is None or sample >= games:
        return frozenset(range(games))
    rng = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(_KEY_SAMPLE,)))
    return frozenset(int(i) for i in rng.choice(games, size=sample, replace=False))


ProgressArg = Union[bool, Callable[[int, int], None], None]


class _Progress:
    """Progress reporting: a rich bar on stderr (``True``), a callback ``f(done, total)``, or nothing."""

    def __init__(self, progress: ProgressArg, total: int, description: str) -> None:
        self.total, self.done = total, 0
        self._cb: Callable[[int, int], None] | None = None
        self._bar = None
        if callable(progress):
            self._cb = progress
        elif progress:
            from rich.console import Console
            from rich.progress import (BarColumn, MofNCompleteColumn, Progress, TextColumn,
                                       TimeElapsedColumn, TimeRemainingColumn)

            console = Console(stderr=True)
            if console.is_terminal:
                self._bar = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                                     TextColumn("games"), TimeElapsedColumn(), TimeRemainingColumn(),
                                     console=console, transient=True)
                self._task = self._bar.add_task(description, total=total)
                self._bar.start()

    def advance(self, n: int) -> None:
        self.done += n
        if self._cb is not None:
            self._cb(self.done, self.total)
        if self._bar is not None:
            self._bar.update(self._task, completed=self.done)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.stop()
            self._bar = None


class _GameSaver:
    """Writes the recorded games to ``DIR/game_NNNNNN.json`` as they arrive."""

    def __init__(self, directory: str | os.PathLike, games: int) -> None:
        self.dir = Path(directory)
        self.width = max(6, len(str(games - 1)))
        try:
            self.dir.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise EvaluationError(f"cannot create {self.dir}: {e.strerror or e}") from None
        self.saved: list[int] = []

    def name(self, game: int) -> str:
        return f"game_{game:0{self.width}d}.json"

    def save(self, game: int, record: dict) -> None:
        path = self.dir / self.name(game)
        try:
            path.write_text(json.dumps(record) + "\n", encoding="utf-8")
        except OSError as e:
            raise EvaluationError(f"cannot write {path}: {e.strerror or e}") from None
        self.saved.append(game)

    def write_index(self, specs: Sequence[str], outcomes: GameOutcomes, seed: int, rules: RulesConfig) -> Path:
        """Write ``index.json``: for each saved game, who sat where and the final totals."""
        from lama_env.rules import winners

        entries = []
        for i in sorted(self.saved):
            seats = outcomes.seating[i].tolist()
            totals = outcomes.totals[i].tolist()
            entries.append({"game": i, "file": self.name(i), "agents": seats,
                            "seats": [specs[a] for a in seats], "totals": totals,
                            "winners": winners(totals), "rounds": int(outcomes.rounds[i])})
        head = {"players": outcomes.num_players, "games": outcomes.num_games, "seed": seed,
                "rules": rules.to_dict(), "agents": list(specs)}
        # one line per saved game, so that the index reads (and greps) well
        lines = ",\n".join("  " + json.dumps(e) for e in entries)
        text = json.dumps(head, indent=1)[:-2] + ',\n "saved": [\n' + lines + "\n ]\n}\n"
        path = self.dir / INDEX_FILE
        try:
            path.write_text(text, encoding="utf-8")
        except OSError as e:
            raise EvaluationError(f"cannot write {path}: {e.strerror or e}") from None
        return path


def run_games(
    agents: Sequence[AgentLike],
    seating: np.ndarray,
    num_players: int,
    rules: RulesConfig | dict | None = None,
    seed: int = 0,
    *,
    workers: int = 1,
    chunk_size: int = DEFAULT_CHUNK_SIZE,
    backend: str = "auto",
    progress: ProgressArg = None,
    record: Iterable[int] | None = None,
    on_record: Callable[[int, dict], None] | None = None,
    description: str = "evaluating",
    policies: Sequence[Policy] | None = None,
) -> tuple[GameOutcomes, str]:
    """Play the games of ``seating`` (``int64[G, N]`` indices into ``agents``) and return their outcomes.

    The engine under :func:`evaluate` and :func:`lama_dice.evaluation.league.league`; use it
    for custom schedules.  Arguments are as for :func:`evaluate`; ``record``
    lists the game indices whose records are passed to ``on_record(game, record)``
    (this forces the scalar backend); ``policies`` are the agents already
    built with :func:`lama_dice.agents.registry.make_agent` (built here if None).

    Returns:
        ``(outcomes, backend)`` with ``backend`` ``"python"`` or ``"fast"``.
    """
    seating = np.asarray(seating, dtype=np.int64)
    if seating.ndim != 2 or seating.shape[1] != num_players:
        raise EvaluationError(f"seating must have shape (games, {num_players}), got {seating.shape}")
    num_games = seating.shape[0]
    if num_games and (seating.min() < 0 or seating.max() >= len(agents)):
        raise EvaluationError(f"seating must index the {len(agents)} agents")
    rules = rules if isinstance(rules, RulesConfig) else RulesConfig.from_dict(rules)
    chunk_size = _check_int("chunk_size", chunk_size, 1)
    workers = _resolve_workers(workers)
    recorded = np.unique(np.fromiter(record or (), dtype=np.int64))
    policies = list(policies) if policies is not None else _build_policies(agents)
    if len(policies) != len(agents):
        raise EvaluationError(f"got {len(policies)} policies for {len(agents)} agents")
    fast = _resolve_backend(backend, policies, num_players, rules, recorded.size > 0)
    bar = _Progress(progress, num_games, description)
    try:
        if fast is not None:
            try:
                out = fast.play_games(policies, seating.copy(), num_players, rules, seed)
                out.validate(num_games, num_players, len(agents))
            except ValueError as e:
                raise EvaluationError(f"the fast backend returned bad outcomes: {e}") from None
            if not np.array_equal(out.seating, seating):
                raise EvaluationError("the fast backend returned a different seating")
            bar.advance(num_games)
            return out, "fast"
        tasks = []
        for c, start in enumerate(range(0, num_games, chunk_size)):
            stop = min(start + chunk_size, num_games)
            lo, hi = np.searchsorted(recorded, [start, stop])
            tasks.append((num_players, rules, seed, c, start, seating[start:stop],
                          frozenset(recorded[lo:hi].tolist())))
        parts: list[GameOutcomes] = []
        results = _run_tasks(agents, policies, tasks, workers)
        try:
            for part, records in results:
                parts.append(part)
                if on_record is not None:
                    for i in sorted(records):
                        on_record(i, records[i])
                bar.advance(part.num_games)
        finally:
            results.close()  # stops the worker pool at once on an error or Ctrl-C
        if not parts:
            empty = np.zeros((0, num_players), dtype=np.int64)
            return GameOutcomes(empty, empty, empty, np.zeros(0, dtype=np.int64)), "python"
        return GameOutcomes.concat(parts), "python"
    finally:
        bar.close()


def _run_tasks(agents: Sequence[AgentLike], policies: list[Policy], tasks: list[tuple],
               workers: int) -> Iterator[tuple[GameOutcomes, dict[int, dict]]]:
    """Yield each chunk's result, in chunk order, played here or in worker processes."""
    workers = min(workers, len(tasks))
    if workers <= 1:
        for t in tasks:
            yield _play_chunk(policies, *t)
        return
    if any(not isinstance(a, str) for a in agents):
        try:
            pickle.dumps(list(agents))
        except Exception as e:  # noqa: BLE001 - any pickling failure
            raise EvaluationError(f"cannot send the agents to worker processes ({e}); use workers=1") from None
    ctx = _mp_context()
    with ctx.Pool(workers, initializer=_worker_init, initargs=(list(agents),)) as pool:
        yield from pool.imap(_worker_chunk, tasks)


# ---------------------------------------------------------------------------
# evaluate()
# ---------------------------------------------------------------------------
@dataclass
class EvalResult:
    """The result of :func:`evaluate`.

    Attributes:
        players: seats per game.
        games: games played.
        seed: the seed used (pass it again to reproduce the result).
        agents: one :class:`AgentStats` per agent, in the order given.
        rules: the rules played.
        backend: ``"python"`` or ``"fast"``.
        tied_games: games won jointly by two or more players.
        elapsed_s: wall-clock seconds (not part of :meth:`to_json`, which is deterministic).
        outcomes: the per-game arrays the statistics come from.
        saved_games: directory of saved game records, if any.
    """

    players: int
    games: int
    seed: int
    agents: list[AgentStats]
    rules: RulesConfig
    backend: str
    tied_games: int
    elapsed_s: float = 0.0
    outcomes: GameOutcomes | None = field(default=None, repr=False)
    saved_games: str | None = None

    @property
    def games_per_s(self) -> float:
        return self.games / self.elapsed_s if self.elapsed_s > 0 else math.inf

    def to_json(self) -> dict:
        """The JSON report (same seed, same report, whatever the number of workers)."""
        out = {
            "players": self.players,
            "games": self.games,
            "seed": self.seed,
            "rules": self.rules.to_dict(),
            "backend": self.backend,
            "ci": "wilson",
            "confidence": CONFIDENCE,
            "tied_games": self.tied_games,
            "agents": [a.to_json() for a in self.agents],
        }
        if self.saved_games is not None:
            out["saved_games"] = self.saved_games
        return out

    def plot(self, path: str | os.PathLike) -> None:
        """Save a figure of each agent's win rate with its 95% Wilson interval."""
        from matplotlib.figure import Figure  # no pyplot: no GUI backend needed

        fig = Figure(figsize=(7, 1.2 + 0.5 * len(self.agents)), layout="constrained")
        ax = fig.subplots()
        y = np.arange(len(self.agents))[::-1]
        rates = [a.win_rate for a in self.agents]
        err = [[a.win_rate - a.win_rate_ci95[0] for a in self.agents],
               [a.win_rate_ci95[1] - a.win_rate for a in self.agents]]
        ax.errorbar(rates, y, xerr=err, fmt="o", capsize=4)
        if self.players > 1:
            ax.axvline(1.0 / self.players, color="grey", lw=0.8, ls="--")
        ax.set_yticks(y, [f"{i}: {a.spec}" for i, a in enumerate(self.agents)])
        ax.set_xlabel("win rate (95% Wilson interval; ties share the win)")
        ax.set_title(f"{self.players} players, {self.games} games, seed {self.seed}")
        try:
            fig.savefig(path)
        except (OSError, ValueError) as e:
            raise EvaluationError(f"cannot save the plot to {path}: {e}") from None

    def summary(self) -> str:
        """One line per agent, e.g. for logs."""
        return "\n".join(
            f"{a.spec}: win {a.win_rate:.3f} [{a.win_rate_ci95[0]:.3f}, {a.win_rate_ci95[1]:.3f}], "
            f"{a.mean_points_per_round:.2f} pts/round, {a.mean_final_points:.1f} final"
            for a in self.agents)


def _check_agents(agents: Any) -> list[AgentLike]:
    if isinstance(agents, (str, Policy)) or not isinstance(agents, Iterable):
        raise EvaluationError("agents must be a list of agent specs or policies")
    agents = list(agents)
    for a in agents:
        if not isinstance(a, (str, Policy)):
            raise EvaluationError(f"an agent must be a spec string or a Policy, got {a!r}")
    return agents


def evaluate(
    agents: Sequence[AgentLike],
    num_players: int | None = None,
    games: int = 1000,
    seed: int | None = 0,
    workers: int = 1,
    rules: RulesConfig | dict | None = None,
    progress: ProgressArg = False,
    save_games: str | os.PathLike | None = None,
    backend: str = "auto",
    *,
    save_sample: int | None = None,
    chunk_size: int = DEFAULT_CHUNK_SIZE,
) -> EvalResult:
    """Play ``games`` games between ``agents`` (one per seat, seats rotating) and report per-agent statistics.

    Args:
        agents: one spec string or :class:`~lama_dice.agents.base.Policy` per seat.
        num_players: seats per game (default ``len(agents)``; must equal it).
        games: number of games (a multiple of ``num_players`` balances seats exactly).
        seed: seed of everything random (None: a fresh one, reported in the result).
        workers: processes to play in (1: this process; 0: all cores).  Does not change the result.
        rules: a :class:`~lama_env.rules.RulesConfig` or a mapping of its fields.
        progress: True for a progress bar on stderr, or a callback ``f(done, total)``.
        save_games: directory to save game records in (forces the scalar backend).
        backend: ``"auto"`` (the fast backend when it supports the agents), ``"python"`` or ``"fast"``.
        save_sample: save only this many games, chosen at random from the seed (default: all).
        chunk_size: games played in lockstep (and per worker task); part of what the result depends on.

    Returns:
        An :class:`EvalResult`.

    Raises:
        EvaluationError: bad arguments (one-line message).
        lama_dice.agents.registry.AgentSpecError: an unknown or malformed agent spec.
    """
    agents = _check_agents(agents)
    if num_players is None:
        num_players = len(agents)
    num_players = check_num_players(num_players, EvaluationError)
    if len(agents) != num_players:
        raise EvaluationError(
            f"{num_players} players need {num_players} agent specs (one per seat), got {len(agents)}")
    games = _check_int("games", games, 1)
    seed = _resolve_seed(seed)
    rules = rules if isinstance(rules, RulesConfig) else RulesConfig.from_dict(rules)
    save_sample = _check_save_args(save_games, save_sample, backend)
    t0 = time.perf_counter()
    seating = rotation_seating(num_players, games)
    saver = _GameSaver(save_games, games) if save_games is not None else None
    record = _sample_games(games, save_sample, seed) if saver is not None else frozenset()
    policies = _build_policies(agents)  # validates the specs before any work
    specs = [_spec_of(a, p) for a, p in zip(agents, policies)]
    outcomes, used = run_games(agents, seating, num_players, rules, seed, workers=workers,
                               chunk_size=chunk_size, backend=backend, progress=progress,
                               record=record, on_record=saver.save if saver else None,
                               policies=policies)
    if saver is not None:
        saver.write_index(specs, outcomes, seed, rules)
    stats = agent_stats(outcomes, specs)
    return EvalResult(
        players=num_players, games=games, seed=seed, agents=stats, rules=rules, backend=used,
        tied_games=tied_games(outcomes.totals), elapsed_s=time.perf_counter() - t0,
        outcomes=outcomes, saved_games=str(saver.dir) if saver else None,
    )
