"""The benchmark suite ``lama-dice-suite/3``: a fixed definition of "the score of an agent".

A suite is a small set of named tasks with fixed rules, opponents, game counts
and seeds (docs/benchmark.md states them and the reasons for the numbers).
Every task is played by :func:`lama_dice.evaluation.evaluate.evaluate` (seats
rotating, Wilson intervals, the compiled backend where it supports the agents),
so a score is a set of ordinary evaluations with fixed arguments; each one can
be re-run alone with the ``lama-dice evaluate`` command the JSON report lists.

===================  =======  ==========================================  ===========  ================
task                 players  opponents                                   games        seeds
===================  =======  ==========================================  ===========  ================
``solo``             1        none (points per round, normalized)         15,000       1001
``duel``             2        ``optimal``, ``lookahead``, ``ppo:2p-v1``   10,000 each  2001, 2002, 2003
``table4``           4        three ``optimal``                           10,000       4001
``duel-also-match``  2        ``optimal``, ``triple_llama=also_match``    10,000       5001
``solo-lean-dice``   1        none, one llama per die (normalized)        15,000       6001
``exploit``          2        best responders trained against the agent   10,000       2201, 2202, 2203
===================  =======  ==========================================  ===========  ================

``exploit`` is optional (played only when named: ``--tasks exploit``)
because it trains best responders (:mod:`lama_dice.evaluation.exploitability`;
its headline is the best responder's win rate against the agent, lower is
better).  Every evaluation plays the compiled engine's streams: game ``i`` of
a seed is one game on either backend.  ``lama-dice-suite/1`` (the first five
tasks) and ``/2`` (the six) played the same tasks on the python backend's
former NumPy streams; they are retired (0.1.0 was the last version with them:
``suite=1`` or ``2`` answers one line naming ``/3``).

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

The suite's parts live in their own modules: the task definitions
(:mod:`~lama_dice.evaluation.suite_tasks`), the result types
(:mod:`~lama_dice.evaluation.suite_results`), the command builders
(:mod:`~lama_dice.evaluation.suite_commands`) and the illegal-action locator
(:mod:`~lama_dice.evaluation.suite_illegal`); this module runs the suite and
re-exports their public names.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any

from lama_dice.agents.base import Policy
from lama_dice.agents.registry import make_agent
from lama_env.errors import LamaDiceError

from .evaluate import check_int, evaluate
from .outcomes import EvaluationError
from .report import EvalResult
from .suite_commands import evaluate_command, score_command
from .suite_illegal import locate_illegal
from .suite_results import MatchResult, Measure, SuiteResult, TaskResult, environment, solo_measures, table_measures
from .suite_tasks import (
    CHUNK_SIZE,
    LATEST,
    LEAN_DICE,
    NORMALIZATION_DEFAULT,
    NORMALIZATION_LEAN_DICE,
    RETIRED_SUITES,
    SUITE,
    SUITE_VERSION,
    SUITES,
    TASKS,
    Match,
    Suite,
    SuiteError,
    Task,
    normalize,
    resolve_tasks,
    suite_of,
)

__all__ = [
    "CHUNK_SIZE", "LATEST", "LEAN_DICE", "NORMALIZATION_DEFAULT", "NORMALIZATION_LEAN_DICE", "RETIRED_SUITES", "SUITE",
    "SUITES",
    "SUITE_VERSION", "TASKS", "ExploitRunner", "Match", "MatchResult", "Measure", "Suite", "SuiteError",
    "SuiteProgress", "SuiteResult", "Task", "TaskResult", "environment", "evaluate_command", "normalize",
    "resolve_tasks", "run_suite", "score_command", "suite_of",
]


#: Progress callback: ``f(label, done, total)`` over the games of the whole run.
SuiteProgress = Callable[[str, int, int], None]
#: Plays the ``exploit`` task (it trains, so it lives above the evaluation floor:
#: :func:`lama_dice.train.exploit.suite_exploit`): ``f(spec, task, workers, games)`` returns the task's
#: measures (the headline first) and its JSON report.
ExploitRunner = Callable[[str, Task, int, "int | None"], tuple[list[Measure], dict[str, Any]]]


def run_suite(
    agent: str | Policy,
    tasks: Sequence[str] | None = None,
    *,
    workers: int = 1,
    games: int | None = None,
    progress: SuiteProgress | None = None,
    backend: str = "auto",
    suite: int = LATEST,
    exploit: ExploitRunner | None = None,
) -> SuiteResult:
    """Score ``agent`` on the suite (or the tasks named in ``tasks``).

    Args:
        agent: an agent spec (any that :func:`~lama_dice.agents.registry.make_agent` accepts,
            ``python:MODULE:NAME`` included) or a :class:`~lama_dice.agents.base.Policy`.
        tasks: task names (default: every task of the suite but the optional ``exploit``).
        workers: processes to play in (0: all cores); does not change the result.
        games: play this many games per match instead of the suite's (the score is then not official).
        progress: called as ``progress(label, games_done, games_total)`` over the whole run.
        backend: ``"auto"`` (the suite's), ``"python"`` or ``"fast"`` (see :func:`evaluate`); another
            than ``"auto"`` may change the numbers of native heuristics: the score is then not official.
        suite: the suite's number: 3 (``lama-dice-suite/3``, the default and the only one; 1 and 2 are
            retired).
        exploit: what plays the ``exploit`` task (needed only when it is asked for).

    Returns:
        A :class:`SuiteResult`.

    Raises:
        SuiteError: an unknown suite or task, a bad agent spec or ``games``, the ``exploit`` task
            without a runner or for a policy object, or an illegal action (the message names the
            task, the match and the game).
        lama_env.errors.RetiredError: a retired suite (1, 2).
    """
    chosen = resolve_tasks(tasks, suite)
    if games is not None and (isinstance(games, bool) or not isinstance(games, int) or games < 1):
        raise SuiteError(f"games must be a positive integer, got {games!r}")
    check_int("workers", workers, 0)
    built = make_agent(agent)  # a bad spec fails here, before any game (AgentSpecError, one line)
    spec = agent.strip() if isinstance(agent, str) else str(getattr(built, "spec", type(built).__name__))
    if any(t.exploit is not None for t in chosen):
        if exploit is None:
            raise SuiteError("the exploit task trains: it needs lama_dice.train (lama-dice score runs it)")
        if not isinstance(agent, str):
            raise SuiteError("the exploit task trains in worker processes: give the agent as a spec")
    skipped = _playable(built, chosen, named=tasks is not None, spec=spec, suite=suite)
    total = sum((games or t.games) * len(t.matches) for t in chosen)
    done = 0
    t0 = time.perf_counter()
    results: list[TaskResult] = []
    for task in chosen:
        n = games or task.games
        t_task = time.perf_counter()
        if task.exploit is not None:
            assert exploit is not None and isinstance(agent, str)
            if progress is not None:
                progress(f"{task.name} (training)", done, total)
            measures, details = exploit(spec, task, workers, games)
            results.append(TaskResult(task, n, measures, [], time.perf_counter() - t_task, details=details))
            done += n
            continue
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
        measures = solo_measures(task, played[0][1]) if task.players == 1 else table_measures(task, played)
        mres = [MatchResult(m, r, evaluate_command([spec, *m.opponents], task, n, m.seed))
                for m, r in played]
        results.append(TaskResult(task, n, measures, mres, time.perf_counter() - t_task))
    return SuiteResult(spec, results, official=games is None and backend == "auto", games_override=games,
                       elapsed_s=time.perf_counter() - t0, workers=workers, skipped=skipped, suite=suite)


def _playable(built: Policy, chosen: list[Task], *, named: bool, spec: str, suite: int) -> dict[str, str]:
    """Drop from ``chosen`` the tasks a learned policy cannot play (an error if named); why, by task."""
    skipped: dict[str, str] = {}
    check = getattr(built, "check_compatible", None)  # learned policies play one player count
    if not callable(check):
        return skipped
    for task in list(chosen):
        try:
            check(task.players)
        except LamaDiceError as e:
            if named:  # asked for by name: an error
                raise SuiteError(f"task {task.name}: {e}") from None
            skipped[task.name] = str(e)
            chosen.remove(task)
    if not chosen:
        raise SuiteError(f"{spec} can play no task of {suite_of(suite).version}: " + "; ".join(skipped.values()))
    return skipped


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
        raise SuiteError(locate_illegal(agents, task, match, games, where) or f"{where}: {e}") from None
    except Exception as e:
        e.add_note(f"while playing {where} of the suite")
        raise

