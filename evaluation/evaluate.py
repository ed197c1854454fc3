"""Evaluate agents against each other, with confidence intervals.

:func:`evaluate` plays ``games`` complete games with one agent per seat and
reports, per agent, the win rate with a 95% Wilson interval, the mean points
per round, the mean final points and (for more than two players) the mean
rank::

    from lama_dice.evaluation import evaluate

    result = evaluate(["threshold:20", "random"], num_players=2, games=2000, seed=0)
    print(result.agents[0].win_rate, result.agents[0].win_rate_ci95)
    json.dump(result.to_json(), fh)

Agents are spec strings (see :mod:`lama_dice.agents.registry`) or
:class:`~lama_dice.agents.base.Policy` objects (e.g. the policy being trained).  The same
spec given twice is two separate agents, each reported.  :func:`run_games`
plays any schedule (the league's, a custom one) and returns the per-game arrays.

How games are played
--------------------
* **Seats rotate.**  Game ``i`` seats the agents in a rotation of a cyclic
  order: within each block of ``N`` consecutive games every agent plays every
  seat once, and successive blocks cycle through the ``(N-1)!`` cyclic orders
  (who sits after whom), so for ``N > 2`` neighbours are balanced too.  With
  ``games`` a multiple of ``N`` each agent plays each seat exactly equally
  often; otherwise the counts differ by at most one
  (see :func:`lama_dice.evaluation.seating.rotation_seating`).
* **Ties share the win.**  The ``k`` players tied for the fewest points each
  get a win share of ``1/k``; the win rate is the mean share and its interval
  is the Wilson interval with ``n`` = games played and ``p`` = win rate
  (conservative when ties occur, see :func:`lama_dice.evaluation.stats.wilson_interval`).
* **Backends.**  ``backend="auto"`` plays native heuristics in the compiled
  batched engine (:mod:`lama_dice.evaluation.compiled`) and everything else
  in the rules engine (:mod:`lama_dice.evaluation.scalar`: lockstep chunks of
  ``chunk_size`` games, one ``act_batch`` call per policy and step, optionally
  in ``workers`` processes, ``0`` = all cores); see
  :mod:`lama_dice.evaluation.backends`.
* **Same seed, same game.**  Game ``i`` of ``seed`` is the same game on
  either backend, with any ``chunk_size`` and any ``workers``: the compiled
  engine's game ``i`` (``LamaGame(seed=seed, game_id=i)``, its deals, dice
  and a ``random`` seat's draws).  So native agents give one result on both
  backends, and every shipped agent gives one result whatever ``chunk_size``
  and ``workers``: the ones that draw randomness of their own (``mcts:N``,
  ``search:``, a sampling network) take it from
  :meth:`~lama_dice.agents.base.Policy.decision_rng`, keyed by the game and the
  decision (a policy of your own that draws from its ``rng`` instead depends on
  ``chunk_size``).  These are the only streams: the scalar backend's former
  per-chunk NumPy streams (``streams="numpy"``) are retired (0.1.0 was the last
  version with them).  Policies must choose actions from the game, the legal
  actions and their own seeded randomness only.

Where the rest lives
--------------------
:mod:`~lama_dice.evaluation.outcomes` (per-game outcomes, per-agent
statistics, :class:`EvaluationError`), :mod:`~lama_dice.evaluation.stats` (the
math), :mod:`~lama_dice.evaluation.seating`, :mod:`~lama_dice.evaluation.backends`
(the :class:`~lama_dice.evaluation.backends.Backend` protocol and the choice),
:mod:`~lama_dice.evaluation.scalar`, :mod:`~lama_dice.evaluation.compiled`,
:mod:`~lama_dice.evaluation.saving` (``save_games=DIR``),
:mod:`~lama_dice.evaluation.report` (:class:`EvalResult`) and
:mod:`~lama_dice.evaluation.league`.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterable, Sequence
from typing import Any, TypeAlias, cast

import numpy as np

from lama_dice.agents.base import Policy
from lama_dice.agents.registry import make_agent
from lama_env.errors import INSTEAD_OF_STREAMS, RetiredError, retired
from lama_env.reader import MAX_SEED
from lama_env.rules import RulesConfig, check_num_players

from .backends import Backend, choose_backend
from .outcomes import EvaluationError, GameOutcomes, agent_stats
from .report import EvalResult
from .saving import GameSaver, sample_games
from .scalar import DEFAULT_CHUNK_SIZE, ScalarBackend
from .seating import rotation_seating
from .stats import tied_games

__all__ = [
    "AgentLike", "ProgressArg", "build_policies", "check_agents", "check_int", "check_save_args",
    "evaluate", "resolve_seed", "run_games", "spec_of",
]

#: An agent: a spec string (``"threshold:20"``) or a built policy.
AgentLike: TypeAlias = str | Policy
#: Progress reporting: True for a bar on stderr, a callback ``f(done, total)``, or False/None for none.
ProgressArg: TypeAlias = bool | Callable[[int, int], None] | None

_MAX_SEED = MAX_SEED  # the one bound of a seed (lama_env.reader)


# ---------------------------------------------------------------------------
# Argument checks (shared with lama_dice.evaluation.league)
# ---------------------------------------------------------------------------
def check_agents(agents: Any) -> list[AgentLike]:
    """``agents`` as a list of spec strings and policies; raises :class:`EvaluationError` otherwise."""
    if isinstance(agents, (str, Policy)) or not isinstance(agents, Iterable):
        raise EvaluationError("agents must be a list of agent specs or policies")
    agents = list(agents)
    for a in agents:
        if not isinstance(a, (str, Policy)):
            raise EvaluationError(f"an agent must be a spec string or a Policy, got {a!r}")
    return agents


def build_policies(agents: Sequence[AgentLike]) -> list[Policy]:
    """The policy of each agent (spec strings built, policies passed through)."""
    return [make_agent(a) for a in agents]


def spec_of(agent: AgentLike, policy: Policy) -> str:
    """What the results call ``agent``: its spec string, or its policy's ``spec``."""
    return agent.strip() if isinstance(agent, str) else str(getattr(policy, "spec", type(policy).__name__))


def check_int(name: str, value: Any, lo: int, hi: int | None = None) -> int:
    """``value`` as an int in ``lo..hi``; raises :class:`EvaluationError` naming ``name`` otherwise."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise EvaluationError(f"{name} must be an integer, got {value!r}")
    if value < lo or (hi is not None and value > hi):
        rng = f"{lo}..{hi}" if hi is not None else f"at least {lo}"
        raise EvaluationError(f"{name} must be {rng}, got {value}")
    return int(value)


def resolve_seed(seed: int | None) -> int:
    """``seed`` checked, or a fresh random seed for None."""
    if seed is None:
        return cast(int, np.random.SeedSequence().entropy) & _MAX_SEED  # drawn fresh, the entropy is an int
    return check_int("seed", seed, 0, _MAX_SEED)


def _resolve_workers(workers: int) -> int:
    workers = check_int("workers", workers, 0)
    return workers or (os.cpu_count() or 1)


def check_save_args(save_games: Any, save_sample: int | None, backend: str) -> int | None:
    """Check ``save_games``/``save_sample`` against each other and ``backend``; return ``save_sample``."""
    if save_sample is not None:
        save_sample = check_int("save_sample", save_sample, 1)
        if save_games is None:
            raise EvaluationError("save_sample needs save_games (a directory)")
    if save_games is not None and backend == "fast":
        raise EvaluationError("the fast backend cannot save games; use backend 'python' or 'auto'")
    return save_sample


# ---------------------------------------------------------------------------
# Progress
# ---------------------------------------------------------------------------
class _Progress:
    """Progress reporting: a rich bar on stderr (``True``), a callback ``f(done, total)``, or nothing."""

    def __init__(self, progress: ProgressArg, total: int, description: str) -> None:
        self.total, self.done = total, 0
        self._cb: Callable[[int, int], None] | None = None
        self._bar: Any = None
        self._task: Any = None
        if callable(progress):
            self._cb = progress
        elif progress:
            from rich.console import Console
            from rich.progress import (
                BarColumn,
                MofNCompleteColumn,
                Progress,
                TextColumn,
                TimeElapsedColumn,
                TimeRemainingColumn,
            )

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


# ---------------------------------------------------------------------------
# Playing a schedule
# ---------------------------------------------------------------------------
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
    rules = RulesConfig.from_dict(rules)
    chunk_size = check_int("chunk_size", chunk_size, 1)
    workers = _resolve_workers(workers)
    recorded = frozenset(record or ())
    policies = list(policies) if policies is not None else build_policies(agents)
    if len(policies) != len(agents):
        raise EvaluationError(f"got {len(policies)} policies for {len(agents)} agents")
    scalar = ScalarBackend(agents, workers=workers, chunk_size=chunk_size, record=recorded, on_record=on_record)
    chosen = choose_backend(backend, policies, num_players, rules, scalar, need_records=bool(recorded))
    bar = _Progress(progress, num_games, description)
    scalar.on_chunk = bar.advance
    try:
        if chosen is scalar:
            return scalar.play_games(policies, seating, num_players, rules, seed), scalar.name
        out = _play_checked(chosen, policies, seating, num_players, rules, seed, len(agents))
        bar.advance(num_games)
        return out, chosen.name
    finally:
        bar.close()


def _play_checked(backend: Backend, policies: list[Policy], seating: np.ndarray, num_players: int,
                  rules: RulesConfig, seed: int, num_agents: int) -> GameOutcomes:
    """``backend.play_games``, its outcomes checked against the :class:`~.backends.Backend` contract."""
    try:
        out = backend.play_games(policies, seating.copy(), num_players, rules, seed)
        out.validate(len(seating), num_players, num_agents)
    except ValueError as e:
        raise EvaluationError(f"the {backend.name} backend returned bad outcomes: {e}") from None
    if not np.array_equal(out.seating, seating):
        raise EvaluationError(f"the {backend.name} backend returned a different seating")
    return out


# ---------------------------------------------------------------------------
# evaluate()
# ---------------------------------------------------------------------------
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
    streams: None = None,
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
        chunk_size: games played in lockstep (and per worker task); part of what the result depends on
            only for an agent that draws from its own generator.
        streams: retired (a :class:`~lama_env.errors.RetiredError` if given): every backend plays the
            compiled engine's streams, game ``i`` of ``seed`` the same game on either.

    Returns:
        An :class:`~lama_dice.evaluation.report.EvalResult`.

    Raises:
        EvaluationError: bad arguments (one-line message).
        lama_dice.agents.registry.AgentSpecError: an unknown or malformed agent spec.
        lama_env.errors.RetiredError: ``streams`` given.
    """
    if streams is not None:
        raise RetiredError(retired(f"evaluate(streams={streams!r}) (the python backend's NumPy streams)",
                                   INSTEAD_OF_STREAMS))
    agents = check_agents(agents)
    if num_players is None:
        num_players = len(agents)
    num_players = check_num_players(num_players, EvaluationError)
    if len(agents) != num_players:
        raise EvaluationError(
            f"{num_players} players need {num_players} agent specs (one per seat), got {len(agents)}")
    games = check_int("games", games, 1)
    seed = resolve_seed(seed)
    rules = RulesConfig.from_dict(rules)
    save_sample = check_save_args(save_games, save_sample, backend)
    t0 = time.perf_counter()
    seating = rotation_seating(num_players, games)
    saver = GameSaver(save_games, games) if save_games is not None else None
    record = sample_games(games, save_sample, seed) if saver is not None else frozenset()
    policies = build_policies(agents)  # validates the specs before any work
    specs = [spec_of(a, p) for a, p in zip(agents, policies, strict=True)]
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
