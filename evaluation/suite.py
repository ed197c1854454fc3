"""The benchmark suite ``lama-dice-suite/1``: a fixed definition of "the score of an agent".

A suite is a small set of named tasks with fixed rules, opponents, game counts
and seeds (docs/benchmark.md states them and the reasons for the numbers).
Every task is played by :func:`lama_dice.evaluation.evaluate.evaluate` (seats
rotating, Wilson intervals, the compiled backend where it supports the agents),
so a score is a set of ordinary evaluations with fixed arguments; each one can
be re-run alone with the ``lama-dice evaluate`` command the JSON report lists.

=================  =======  ==========================================  ==========  =================
task               players  opponents                                   games       seeds
=================  =======  ==========================================  ==========  =================
``solo``           1        none (points per round, normalized)         15,000      1001
``duel``           2        ``optimal``, ``lookahead``, ``ppo:2p-v1``   10,000 each 2001, 2002, 2003
``table4``         4        three ``optimal``                           10,000      4001
``duel-also-match`` 2       ``optimal``, ``triple_llama=also_match``    10,000      5001
``solo-lean-dice`` 1        none, one llama per die (normalized)        15,000      6001
=================  =======  ==========================================  ==========  =================

The last two are generalization tasks (rules the shipped agents were not
trained on).  A solo task's headline is the **normalized score**
``(R - x) / (R - O)`` of the agent's points per round ``x``, with ``R`` the
uniform-random policy's and ``O`` the optimum's expected round points, both
exact (:mod:`lama_dice.agents.solo_random`, :mod:`lama_dice.agents.solver`):
0 is ``random``, 1 is ``optimal``; its interval is the points-per-round
interval mapped the same way.  A table task's headline is the win rate (ties
shared) with its Wilson interval; ``duel``'s is the win rate over all its
games (the three opponents weigh equally).

Usage::

    from lama_dice.evaluation.suite import run_suite

    card = run_suite("threshold:0.2", tasks=["solo", "table4"])
    print(card.tasks[0].headline.value, card.tasks[0].headline.ci95)
    json.dump(card.to_json(), fh)
"""

from __future__ import annotations

import math
import platform
import shlex
import sys
import time
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from lama_dice.agents.base import Policy
from lama_dice.agents.registry import make_agent
from lama_env import __version__
from lama_env.errors import LamaDiceError
from lama_env.rules import RulesConfig

from .evaluate import check_int, evaluate
from .outcomes import CONFIDENCE, EvaluationError
from .report import EvalResult
from .scalar import DEFAULT_CHUNK_SIZE
from .seating import rotation_seating
from .stats import fractional_ranks, mean_se, wilson_interval, z_value

__all__ = [
    "CHUNK_SIZE", "LEAN_DICE", "SUITE", "SUITE_VERSION", "Match", "MatchResult", "Measure", "SuiteError",
    "SuiteResult", "Task", "TaskResult", "normalize", "resolve_tasks", "run_suite",
]

#: The suite's name and version; a change of any task, count, seed or constant makes a new version.
SUITE_VERSION = "lama-dice-suite/1"
#: Games played in lockstep by the scalar backend (part of what a result depends on), fixed by the suite.
CHUNK_SIZE = DEFAULT_CHUNK_SIZE
#: The dice of ``solo-lean-dice``: one llama per die (docs/RULES.md's dice have two).
LEAN_DICE: tuple[tuple[str, ...], ...] = (
    ("1", "2", "3", "4", "5", "L"),
    ("2", "3", "4", "5", "6", "L"),
    ("1", "3", "4", "5", "6", "L"),
)


class SuiteError(EvaluationError):
    """A suite run that cannot go on: unknown task, bad agent spec, an illegal action (task and game named)."""


@dataclass(frozen=True)
class Match:
    """One evaluation of a task: the agent (seat rotating) against ``opponents`` with ``seed``.

    Attributes:
        label: how the score card names it (``"vs optimal"``).
        opponents: the other seats' agent specs.
        seed: the evaluation's seed.
    """

    label: str
    opponents: tuple[str, ...]
    seed: int


@dataclass(frozen=True)
class Task:
    """A task of the suite.

    Attributes:
        name: its name (``--tasks``).
        players: seats per game (1: solo).
        games: games per match.
        matches: its evaluations (one per opponent lineup).
        rules: the rules played.
        generalization: whether it is a generalization task (rules other than the defaults).
        about: one line for the score card and the docs.
        normalization: for a solo task, ``(random, optimum)``: the exact expected round points of the
            uniform-random policy and of the optimal policy under ``rules``.
    """

    name: str
    players: int
    games: int
    matches: tuple[Match, ...]
    rules: RulesConfig = field(default_factory=RulesConfig)
    generalization: bool = False
    about: str = ""
    normalization: tuple[float, float] | None = None

    @property
    def kind(self) -> str:
        """``"solo"`` or ``"Np"`` (N players)."""
        return "solo" if self.players == 1 else f"{self.players}p"


#: The exact normalization constants (expected round points from a fresh deal, solo): the uniform-random
#: policy and the optimum, under the default rules and under LEAN_DICE.  tests/test_score.py checks them
#: against the solver (lama_dice.agents.solo_random, lama_dice.agents.solver) to 1e-9.
NORMALIZATION_DEFAULT = (18.56915923870641, 10.177902880507007)
NORMALIZATION_LEAN_DICE = (18.792916356648856, 11.807685708994475)

#: lama-dice-suite/1, in score-card order.
SUITE: tuple[Task, ...] = (
    Task("solo", 1, 15_000, (Match("solo", (), 1001),),
         about="solo points per round, normalized: 0 = random, 1 = optimal",
         normalization=NORMALIZATION_DEFAULT),
    Task("duel", 2, 10_000, (Match("vs optimal", ("optimal",), 2001),
                             Match("vs lookahead", ("lookahead",), 2002),
                             Match("vs ppo:2p-v1", ("ppo:2p-v1",), 2003)),
         about="two players against each reference agent: win rate (ties shared)"),
    Task("table4", 4, 10_000, (Match("vs 3x optimal", ("optimal", "optimal", "optimal"), 4001),),
         about="four players, against three optimal: win rate (ties shared), mean place"),
    Task("duel-also-match", 2, 10_000, (Match("vs optimal", ("optimal",), 5001),),
         rules=RulesConfig(triple_llama="also_match"), generalization=True,
         about="duel against optimal with triple_llama=also_match"),
    Task("solo-lean-dice", 1, 15_000, (Match("solo", (), 6001),),
         rules=RulesConfig(dice=LEAN_DICE), generalization=True,
         about="solo with one llama per die, normalized by that variant's exact values",
         normalization=NORMALIZATION_LEAN_DICE),
)
TASKS: dict[str, Task] = {t.name: t for t in SUITE}


def resolve_tasks(names: Sequence[str] | None) -> list[Task]:
    """The tasks called ``names`` in suite order (all for None); raises :class:`SuiteError` for an unknown one."""
    if names is None:
        return list(SUITE)
    unknown = [n for n in names if n not in TASKS]
    if unknown:
        raise SuiteError(f"unknown task {unknown[0]!r} (tasks of {SUITE_VERSION}: {', '.join(TASKS)})")
    return [t for t in SUITE if t.name in set(names)]


def normalize(points_per_round: float, random: float, optimum: float) -> float:
    """``(random - x) / (random - optimum)``: 0 for the uniform-random policy, 1 for the optimum."""
    return (random - points_per_round) / (random - optimum)


# ---------------------------------------------------------------------------
# Results
# ---------------------------------------------------------------------------
@dataclass
class Measure:
    """One number of the score card, with its 95% interval.

    Attributes:
        name: what it is (``"normalized score"``, ``"win rate vs optimal"``).
        value: the estimate.
        ci95: its 95% interval.
        games: the games it is measured over.
        percent: whether it is a share (shown as a percentage).
        interval: how the interval is computed.
    """

    name: str
    value: float
    ci95: tuple[float, float]
    games: int
    percent: bool = False
    interval: str = ""

    def __post_init__(self) -> None:
        """Store plain floats (not NumPy scalars)."""
        self.value = float(self.value)
        self.ci95 = (float(self.ci95[0]), float(self.ci95[1]))

    def to_json(self) -> dict:
        """A JSON-ready dict (NaN becomes null)."""
        def f(x: float) -> float | None:
            return None if math.isnan(x) else x
        return {"name": self.name, "value": f(self.value), "ci95": [f(self.ci95[0]), f(self.ci95[1])],
                "games": self.games, "percent": self.percent, "interval": self.interval}


@dataclass
class MatchResult:
    """One match's evaluation (agent 0 is the agent scored)."""

    match: Match
    result: EvalResult
    evaluate_command: str


@dataclass
class TaskResult:
    """A task's results: its measures (the first is the headline) and its matches."""

    task: Task
    games: int
    measures: list[Measure]
    matches: list[MatchResult]
    elapsed_s: float

    @property
    def headline(self) -> Measure:
        """The task's headline number."""
        return self.measures[0]

    def to_json(self) -> dict:
        """The task's JSON report (deterministic except ``elapsed_s``)."""
        t = self.task
        out: dict[str, Any] = {
            "name": t.name, "kind": t.kind, "players": t.players, "generalization": t.generalization,
            "about": t.about, "rules": t.rules.to_dict(include_dice=True), "games_per_match": self.games,
        }
        if t.normalization is not None:
            out["normalization"] = {"random": t.normalization[0], "optimal": t.normalization[1],
                                    "what": "exact expected solo round points from a fresh deal "
                                            "(lama_dice.agents.solo_random, lama_dice.agents.solver)"}
        out["headline"] = self.headline.to_json()
        out["measures"] = [m.to_json() for m in self.measures]
        out["matches"] = [{"label": m.match.label, "seed": m.match.seed, "games": m.result.games,
                           "agents": [a.spec for a in m.result.agents], "backend": m.result.backend,
                           "chunk_size": CHUNK_SIZE, "evaluate_command": m.evaluate_command,
                           "elapsed_s": round(m.result.elapsed_s, 3), "result": m.result.to_json()}
                          for m in self.matches]
        out["elapsed_s"] = round(self.elapsed_s, 3)
        return out


@dataclass
class SuiteResult:
    """A score card: the agent's results on the tasks played."""

    agent: str
    tasks: list[TaskResult]
    official: bool
    games_override: int | None
    elapsed_s: float
    workers: int = 1
    #: tasks of the suite the agent cannot play (a network trained for another player count), with why
    skipped: dict[str, str] = field(default_factory=dict)

    def to_json(self) -> dict:
        """The JSON report: suite version, package version, rules, seeds and every evaluation's report."""
        return {
            "suite": SUITE_VERSION,
            "package": "lama-dice",
            "package_version": __version__,
            "agent": self.agent,
            "official": self.official,
            "games_override": self.games_override,
            "confidence": CONFIDENCE,
            "chunk_size": CHUNK_SIZE,
            "rerun": score_command(self.agent, [t.task.name for t in self.tasks], self.games_override,
                                   all_playable=bool(self.skipped)),
            "tasks": [t.to_json() for t in self.tasks],
            "skipped": [{"task": k, "reason": v} for k, v in self.skipped.items()],
            "elapsed_s": round(self.elapsed_s, 3),
            "workers": self.workers,
            "environment": environment(),
        }


def environment() -> dict[str, str]:
    """Versions and machine (not part of the result: the same seeds give the same numbers anywhere)."""
    out = {"python": platform.python_version(), "numpy": np.__version__,
           "platform": f"{platform.system()} {platform.machine()}"}
    for mod in ("numba", "torch"):
        m = sys.modules.get(mod)
        if m is not None:
            out[mod] = str(getattr(m, "__version__", "?"))
    return out


def score_command(agent: str, tasks: Sequence[str], games: int | None = None, *, all_playable: bool = False) -> str:
    """The ``lama-dice score`` command that plays the same evaluations again.

    ``all_playable``: ``tasks`` are all the tasks the agent can play (no ``--tasks`` needed).
    """
    args = ["lama-dice", "score", agent]
    if list(tasks) != [t.name for t in SUITE] and not all_playable:
        args += ["--tasks", *tasks]
    if games is not None:
        args += ["--games", str(games)]
    return shlex.join(args)


def evaluate_command(agents: Sequence[str], task: Task, games: int, seed: int) -> str:
    """The ``lama-dice evaluate`` command that plays one match alone (same seed, same result)."""
    args = ["lama-dice", "evaluate", "--players", str(task.players), "--agents", *agents,
            "--games", str(games), "--seed", str(seed)]
    default = RulesConfig().to_dict(include_dice=True)
    for key, value in task.rules.to_dict(include_dice=True).items():
        if default.get(key) != value:
            text = value if isinstance(value, str) else _json_compact(value)
            args += ["--rule", f"{key}={text}"]
    return shlex.join(args)


def _json_compact(value: Any) -> str:
    import json

    return json.dumps(value, separators=(",", ":"))


def _solo_measures(task: Task, res: EvalResult) -> list[Measure]:
    assert task.normalization is not None
    rnd, opt = task.normalization
    a = res.agents[0]
    lo, hi = a.points_per_round_ci95
    n = a.games
    return [
        Measure("normalized score", normalize(a.mean_points_per_round, rnd, opt),
                (normalize(hi, rnd, opt), normalize(lo, rnd, opt)), n,
                interval=f"points-per-round interval mapped (0 = random {rnd:.4f}, 1 = optimal {opt:.4f})"),
        Measure("points per round", a.mean_points_per_round, (lo, hi), n,
                interval="ratio of sums, games as units (delta method)"),
    ]


def _table_measures(task: Task, results: list[tuple[Match, EvalResult]]) -> list[Measure]:
    per = []
    wins = games = 0.0
    for match, res in results:
        a = res.agents[0]
        per.append(Measure(f"win rate {match.label}", a.win_rate, a.win_rate_ci95, a.games, percent=True,
                           interval="Wilson"))
        wins += a.wins
        games += a.games
    out: list[Measure] = []
    if len(per) > 1:
        rate = wins / games if games else math.nan
        out.append(Measure("win rate overall", rate, wilson_interval(min(wins, games), games, CONFIDENCE),
                           int(games), percent=True, interval="Wilson over all games (equal games per opponent)"))
    out += per
    if task.players > 2:
        for match, res in results:
            o = res.outcomes
            assert o is not None  # evaluate() always returns its outcomes
            ranks = fractional_ranks(o.totals)[o.seating == 0]
            m, se = mean_se(ranks)
            z = z_value(CONFIDENCE)
            out.append(Measure(f"mean place {match.label}", m, (m - z * se, m + z * se), len(ranks),
                               interval="normal (1 = best; ties share their places)"))
    return out


# ---------------------------------------------------------------------------
# Running
# ---------------------------------------------------------------------------
#: Progress callback: ``f(label, done, total)`` over the games of the whole run.
SuiteProgress = Callable[[str, int, int], None]


def run_suite(
    agent: str | Policy,
    tasks: Sequence[str] | None = None,
    *,
    workers: int = 1,
    games: int | None = None,
    progress: SuiteProgress | None = None,
    backend: str = "auto",
) -> SuiteResult:
    """Score ``agent`` on the suite (or the tasks named in ``tasks``).

    Args:
        agent: an agent spec (any that :func:`~lama_dice.agents.registry.make_agent` accepts,
            ``python:MODULE:NAME`` included) or a :class:`~lama_dice.agents.base.Policy`.
        tasks: task names (default: every task of :data:`SUITE`).
        workers: processes to play in (0: all cores); does not change the result.
        games: play this many games per match instead of the suite's (the score is then not official).
        progress: called as ``progress(label, games_done, games_total)`` over the whole run.
        backend: ``"auto"`` (the suite's), ``"python"`` or ``"fast"`` (see :func:`evaluate`); another
            than ``"auto"`` may change the numbers of native heuristics: the score is then not official.

    Returns:
        A :class:`SuiteResult`.

    Raises:
        SuiteError: an unknown task, a bad agent spec or ``games``, or an illegal action
            (the message names the task, the match and the game).
    """
    chosen = resolve_tasks(tasks)
    if games is not None and (isinstance(games, bool) or not isinstance(games, int) or games < 1):
        raise SuiteError(f"games must be a positive integer, got {games!r}")
    check_int("workers", workers, 0)
    built = make_agent(agent)  # a bad spec fails here, before any game (AgentSpecError, one line)
    spec = agent.strip() if isinstance(agent, str) else str(getattr(built, "spec", type(built).__name__))
    skipped: dict[str, str] = {}
    check = getattr(built, "check_compatible", None)  # learned policies play one player count
    if callable(check):
        for task in list(chosen):
            try:
                check(task.players)
            except LamaDiceError as e:
                if tasks is not None:  # asked for by name: an error
                    raise SuiteError(f"task {task.name}: {e}") from None
                skipped[task.name] = str(e)
                chosen.remove(task)
        if not chosen:
            raise SuiteError(f"{spec} can play no task of {SUITE_VERSION}: " + "; ".join(skipped.values()))
    total = sum((games or t.games) * len(t.matches) for t in chosen)
    done = 0
    t0 = time.perf_counter()
    results: list[TaskResult] = []
    for task in chosen:
        n = games or task.games
        t_task = time.perf_counter()
        played: list[tuple[Match, EvalResult]] = []
        for match in task.matches:
            label = f"{task.name} {match.label}" if match.label != "solo" else task.name

            def tick(k: int, _total: int, _label: str = label, _base: int = done) -> None:
                if progress is not None:
                    progress(_label, _base + k, total)

            tick(0, n)
            res = _play(agent, task, match, n, workers=workers, backend=backend, progress=tick, label=label)
            played.append((match, res))
            done += n
        if task.players == 1:
            measures = _solo_measures(task, played[0][1])
        else:
            measures = _table_measures(task, played)
        mres = [MatchResult(m, r, evaluate_command([spec, *m.opponents], task, n, m.seed)) for m, r in played]
        results.append(TaskResult(task, n, measures, mres, time.perf_counter() - t_task))
    return SuiteResult(spec, results, official=games is None and backend == "auto", games_override=games,
                       elapsed_s=time.perf_counter() - t0, workers=workers, skipped=skipped)


def _play(agent: str | Policy, task: Task, match: Match, games: int, *, workers: int, backend: str,
          progress: Callable[[int, int], None], label: str) -> EvalResult:
    agents: list[str | Policy] = [agent, *match.opponents]
    where = f"task {label} (seed {match.seed})"
    try:
        return evaluate(agents, num_players=task.players, games=games, seed=match.seed, workers=workers,
                        rules=task.rules, progress=progress, backend=backend, chunk_size=CHUNK_SIZE)
    except LamaDiceError as e:
        if not isinstance(e, EvaluationError) or "illegal action" not in str(e):
            raise SuiteError(f"{where}: {e}") from None
        # find the game: play the match again in this process, watching every move (the same seeds
        # make the same games, so the first illegal action comes again)
        raise SuiteError(_locate_illegal(agents, task, match, games, where) or f"{where}: {e}") from None
    except Exception as e:
        e.add_note(f"while playing {where} of {SUITE_VERSION}")
        raise


# ---------------------------------------------------------------------------
# Locating an illegal action
# ---------------------------------------------------------------------------
class _IllegalActionError(Exception):
    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class _GameIndex:
    """Which game of the evaluation each engine game object is, for the scalar backend run in one process.

    The scalar backend (:mod:`lama_dice.evaluation.scalar`) reseeds every policy
    once at the start of each chunk (in chunk order, in one process), and the
    first move of every game of a chunk is asked of the agent in seat 0, one
    ``act_batch`` call per agent with its games in game order.  Should that
    ever change, the count check below fails and the game is reported unknown.
    """

    def __init__(self, seating: np.ndarray, chunk_size: int) -> None:
        self.seating = seating
        self.chunk_size = chunk_size
        self.chunk = -1
        self.index: dict[int, int] = {}
        self.keep: list[Any] = []  # the games seen, kept alive so that their ids stay unique
        self.first: dict[int, deque[int]] = {}
        self.ok = True

    def new_chunk(self) -> None:
        self.chunk += 1
        self.index.clear()
        self.keep.clear()
        start = self.chunk * self.chunk_size
        rows = self.seating[start:start + self.chunk_size]
        self.first = {}
        for k, row in enumerate(rows.tolist()):
            self.first.setdefault(row[0], deque()).append(start + k)

    def lookup(self, agent: int, games: Sequence[Any]) -> list[int | None]:
        new = [g for g in games if id(g) not in self.index]
        if new:
            queue = self.first.get(agent, deque())
            if len(new) != len(queue):
                self.ok = False
            else:
                for g in new:
                    self.index[id(g)] = queue.popleft()
                    self.keep.append(g)
        return [self.index.get(id(g)) if self.ok else None for g in games]


class _Watch(Policy):
    """A policy that checks its inner policy's actions and names the game of the first illegal one."""

    def __init__(self, inner: Policy, agent: int, games: _GameIndex, where: str) -> None:
        super().__init__()
        self.inner, self.agent, self.games, self.where = inner, agent, games, where
        self.spec = inner.spec

    def seed(self, seed: int | None) -> None:
        inner = getattr(self, "inner", None)
        if inner is None:  # Policy.__init__
            return super().seed(seed)
        if self.agent == 0:
            self.games.new_chunk()
        inner.seed(seed)

    def act_batch(self, games: Sequence[Any], legals: Sequence[Sequence[int]]) -> list[int]:
        index = self.games.lookup(self.agent, games)
        acts = self.inner.act_batch(games, legals)
        for k, (game, legal, a) in enumerate(zip(games, legals, acts, strict=False)):
            if a not in legal:
                which = f"game {index[k]}" if index[k] is not None else "a game"
                raise _IllegalActionError(
                    f"{self.where}, {which} (round {game.round_index + 1}, seat {game.current_player}): "
                    f"agent {self.spec!r} chose the illegal action {a!r} "
                    f"(legal: {', '.join(str(x) for x in legal)})")
        return list(acts)


def _locate_illegal(agents: list[str | Policy], task: Task, match: Match, games: int, where: str) -> str | None:
    """Play the match again in this process with every move checked; the message naming the game, or None."""
    seating = rotation_seating(task.players, games)
    index = _GameIndex(seating, CHUNK_SIZE)
    watched = [_Watch(make_agent(a), i, index, where) for i, a in enumerate(agents)]
    try:
        evaluate(watched, num_players=task.players, games=games, seed=match.seed, workers=1, rules=task.rules,
                 backend="python", chunk_size=CHUNK_SIZE)
    except _IllegalActionError as e:
        return e.message
    return None
