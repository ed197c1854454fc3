"""The tasks of the suite ``lama-dice-suite/3``: definitions, constants, normalization.

``lama-dice-suite/3`` is five tasks (rules, opponents, games and seeds) plus
the optional ``exploit`` task, which trains best responders against the agent
(:mod:`lama_dice.evaluation.exploitability`) and is played only when named
(``--tasks exploit``); every evaluation plays the compiled engine's streams
(game ``i`` of a seed the same game on either backend).  The earlier versions,
``lama-dice-suite/1`` (the five tasks) and ``/2`` (the six), played the same
tasks on the python backend's former per-chunk NumPy streams; they are retired
(:data:`RETIRED_SUITES`: 0.1.0 was the last version with them), and asking for
one answers one line naming ``/3``.

See :mod:`lama_dice.evaluation.suite` for what a suite is and the table of its tasks.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from lama_env.errors import INSTEAD_OF_SUITES, RetiredError, retired
from lama_env.rules import RulesConfig

from .exploitability import DEFAULT_BUDGET, ExploitBudget
from .outcomes import EvaluationError
from .scalar import DEFAULT_CHUNK_SIZE

__all__ = [
    "CHUNK_SIZE", "EXPLOIT_BUDGET", "EXPLOIT_TASK", "LATEST", "LEAN_DICE", "NORMALIZATION_DEFAULT",
    "NORMALIZATION_LEAN_DICE", "RETIRED_SUITES", "SUITE", "SUITES", "SUITE_VERSION", "TASKS", "Match", "Suite",
    "SuiteError", "Task", "normalize", "resolve_tasks", "suite_of",
]

#: The suite's name and version; a change of any task, count, seed, constant or random stream makes a new version.
SUITE_VERSION = "lama-dice-suite/3"
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
        optional: played only when named (``--tasks``): the ``exploit`` task, which trains.
        exploit: for the ``exploit`` task, its budget (what is trained, which games choose and report).
    """

    name: str
    players: int
    games: int
    matches: tuple[Match, ...]
    rules: RulesConfig = field(default_factory=RulesConfig)
    generalization: bool = False
    about: str = ""
    normalization: tuple[float, float] | None = None
    optional: bool = False
    exploit: ExploitBudget | None = None

    @property
    def kind(self) -> str:
        """``"solo"`` or ``"Np"`` (N players)."""
        return "solo" if self.players == 1 else f"{self.players}p"


#: The exact normalization constants (expected round points from a fresh deal, solo): the uniform-random
#: policy and the optimum, under the default rules and under LEAN_DICE.  tests/test_score.py checks them
#: against the solver (lama_dice.agents.solo_random, lama_dice.agents.solver) to 1e-9.
NORMALIZATION_DEFAULT = (18.56915923870641, 10.177902880507007)
NORMALIZATION_LEAN_DICE = (18.792916356648856, 11.807685708994475)

#: The five tasks every version of the suite has played, in score-card order.
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

#: The budget of the ``exploit`` task: best responders trained against the agent (two players).
#: Its ``shipped`` start is pinned to ``ppo:2p-v2`` (the ``ppo:2p`` of the release that added the task), so
#: that a newer shipped agent does not change the task.
EXPLOIT_BUDGET = DEFAULT_BUDGET.replace(shipped="ppo:2p-v2")
EXPLOIT_TASK = Task("exploit", 2, EXPLOIT_BUDGET.report_games,
                    (Match("best responder", (), EXPLOIT_BUDGET.report_seed),),
                    about="approximate exploitability: the best responder's win rate against the agent "
                          "(lower is better; 50% = nothing found to exploit)",
                    optional=True, exploit=EXPLOIT_BUDGET)


@dataclass(frozen=True)
class Suite:
    """A version of the suite: its name and its tasks in score-card order."""

    version: str
    tasks: tuple[Task, ...]

    @property
    def by_name(self) -> dict[str, Task]:
        """Its tasks by name."""
        return {t.name: t for t in self.tasks}


#: Every suite by number (``--suite N``); :data:`LATEST` is the default.
SUITES: dict[int, Suite] = {3: Suite(SUITE_VERSION, (*SUITE, EXPLOIT_TASK))}
LATEST = 3
#: The retired suites (the python backend's NumPy streams): ``lama-dice-suite/1`` and ``/2``, retired in 0.2.0.
RETIRED_SUITES = (1, 2)


def suite_of(number: int) -> Suite:
    """The suite ``lama-dice-suite/NUMBER``.

    Raises:
        lama_env.errors.RetiredError: a retired suite (1, 2): one line naming ``/3``.
        SuiteError: an unknown one.
    """
    if not isinstance(number, bool) and number in RETIRED_SUITES:
        raise RetiredError(retired(f"lama-dice-suite/{number}", INSTEAD_OF_SUITES))
    if isinstance(number, bool) or number not in SUITES:
        raise SuiteError(f"unknown suite {number!r} (suites: {', '.join(map(str, SUITES))})")
    return SUITES[number]


def resolve_tasks(names: Sequence[str] | None, suite: int = LATEST) -> list[Task]:
    """The tasks called ``names`` in suite order (for None: every task but the optional ones).

    Raises:
        SuiteError: an unknown suite or task; lama_env.errors.RetiredError: a retired suite.
    """
    s = suite_of(suite)
    if names is None:
        return [t for t in s.tasks if not t.optional]
    known = s.by_name
    unknown = [n for n in names if n not in known]
    if unknown:
        raise SuiteError(f"unknown task {unknown[0]!r} (tasks of {s.version}: {', '.join(known)})")
    return [t for t in s.tasks if t.name in set(names)]


def normalize(points_per_round: float, random: float, optimum: float) -> float:
    """``(random - x) / (random - optimum)``: 0 for the uniform-random policy, 1 for the optimum."""
    return (random - points_per_round) / (random - optimum)

