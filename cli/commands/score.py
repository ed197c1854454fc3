"""Score an agent on the benchmark suite lama-dice-suite/3 (docs/benchmark.md).

  lama-dice score threshold:0.2
  lama-dice score ppo:2p --tasks duel duel-also-match --workers 2 --json ppo2p.json
  lama-dice score ppo:2p --tasks exploit --workers 2         (trains best responders: minutes)
  lama-dice score python:my_agent.py:MyPolicy --tasks solo
  lama-dice score --list

Plays the suite's fixed tasks (rules, opponents, game counts, seeds) with the
agent in every seat in turn and prints the score card: each task's headline
number with its 95% interval (solo tasks: the normalized score, 0 = the
uniform-random policy, 1 = the exact optimum; table tasks: the win rate, ties
shared, Wilson interval). --json writes the suite version, the package
version, the rules, the seeds and every evaluation's full report, with the
`lama-dice evaluate` command that replays each one. The same seeds give the
same numbers whatever --workers is and on any machine (for an agent whose
decisions depend only on the game and its own seeded randomness).
lama-dice-suite/3 plays the compiled engine's random streams (game i of a seed
is the same game on either evaluation backend). --suite 1 and --suite 2 (the
same tasks on the python backend's former NumPy streams) are retired: 0.1.0
was the last version with them; their saved JSON cards still show on the
Results page of lama-dice serve --results DIR.

Your own policy: the spec python:MODULE:NAME (a module on the path or in the
current directory, or a path/to/file.py; NAME a Policy subclass or factory).
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from lama_dice.cli.commands import agent_specs_epilog
from lama_dice.cli.options import add_json, add_progress, add_workers

#: The default suite (``lama_dice.evaluation.suite_tasks.LATEST``; tests/test_score.py checks they agree), here so
#: that building the parser imports no evaluation code.
LATEST = 3

HELP = "score an agent on the benchmark suite (lama-dice-suite/3): the numbers to report"


def add_arguments(p: argparse.ArgumentParser) -> None:
    """Add the ``score`` options to ``p``."""
    p.add_argument("agent", nargs="?", metavar="AGENT_SPEC",
                   help="the agent to score (see 'Agent specs' below; python:MODULE:NAME for your own)")
    p.add_argument("--tasks", nargs="+", metavar="TASK", default=None,
                   help="play only these tasks (default: all but the optional exploit, which trains; see --list)")
    p.add_argument("--suite", type=int, default=LATEST, metavar="N",
                   help="the suite's version: 3 (the default and the only one; 1 and 2 are retired)")
    add_json(p, "the score card")
    add_workers(p)
    p.add_argument("--games", type=int, default=None, metavar="G",
                   help="play G games per match instead of the suite's (for a quick look: not an official score)")
    p.add_argument("--list", action="store_true", help="print the suite's tasks, games, seeds and constants")
    add_progress(p)
    p.epilog = agent_specs_epilog()


def run(args: argparse.Namespace) -> int:
    """Score the agent, print the card (and write the JSON); return the exit status."""
    from lama_dice.cli.recordfile import emit_json_report
    from lama_dice.evaluation.suite import SuiteError, run_suite, suite_of

    suite_of(args.suite)  # an unknown or retired suite: one line, before anything else
    if args.list:
        _print_suite(args.suite)
        return 0
    if not args.agent:
        raise SuiteError("give the AGENT_SPEC to score (or --list to see the suite)")
    from lama_dice.cli.recordfile import check_output_path

    check_output_path("--json", args.json, SuiteError)
    from rich.console import Console

    to_stdout = args.json == "-"
    console = Console(stderr=to_stdout, highlight=False)
    if not console.is_terminal:
        console.width = max(console.width, 110)
    bar = _ProgressBar(enabled=not args.no_progress)
    try:
        card = run_suite(args.agent, args.tasks, workers=args.workers, games=args.games, progress=bar.update,
                         suite=args.suite, exploit=_exploit_runner(args.tasks))
    finally:
        bar.close()
    data = card.to_json()
    emit_json_report(console, args.json, data, SuiteError, lambda: render_card(console, card))
    return 0


def _exploit_runner(tasks: list[str] | None) -> Any:
    """The exploit task's runner when it is asked for (importing the trainer only then)."""
    if not tasks or "exploit" not in tasks:
        return None
    from lama_env.extras import require_extra

    require_extra("train", "the exploit task (it trains best responders)")
    from lama_dice.train.exploit import suite_exploit

    return suite_exploit


class _ProgressBar:
    """One rich progress bar over the games of the whole run (stderr, terminals only)."""

    def __init__(self, enabled: bool) -> None:
        self._bar: Any = None
        self._task: Any = None
        if not enabled:
            return
        from rich.console import Console

        console = Console(stderr=True)
        if console.is_terminal:
            from rich.progress import (
                BarColumn,
                MofNCompleteColumn,
                Progress,
                TextColumn,
                TimeElapsedColumn,
                TimeRemainingColumn,
            )

            self._bar = Progress(TextColumn("{task.description:<28}"), BarColumn(), MofNCompleteColumn(),
                                 TextColumn("games"), TimeElapsedColumn(), TimeRemainingColumn(),
                                 console=console, transient=True)
            self._bar.start()

    def update(self, label: str, done: int, total: int) -> None:
        if self._bar is None:
            return
        if self._task is None:
            self._task = self._bar.add_task(label, total=total)
        self._bar.update(self._task, completed=done, description=label)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.stop()
            self._bar = None


def _fmt(value: float, percent: bool) -> str:
    if value != value:
        return "-"
    return f"{100 * value:.1f}%" if percent else f"{value:.3f}"


def _fmt_ci(ci: tuple[float, float], percent: bool) -> str:
    lo, hi = ci
    if lo != lo or hi != hi:
        return "-"
    if percent:
        return f"{100 * lo:.1f}–{100 * hi:.1f}%"  # noqa: RUF001 - the en dash of a range is meant
    return f"{lo:.3f}–{hi:.3f}"  # noqa: RUF001 - en dash


def render_card(console: Any, card: Any) -> None:
    """Print ``card`` (a :class:`lama_dice.evaluation.suite.SuiteResult`) as a table."""
    from rich import box
    from rich.table import Table

    from lama_dice.evaluation.suite import suite_of
    from lama_env import __version__

    t = Table(box=box.SIMPLE_HEAD, pad_edge=False)
    t.add_column("task", no_wrap=True)
    t.add_column("measure", no_wrap=True)
    t.add_column("value", justify="right", no_wrap=True)
    t.add_column("95% CI", justify="right", no_wrap=True)
    t.add_column("games", justify="right", no_wrap=True)
    t.add_column("backend", no_wrap=True)
    t.add_column("time", justify="right", no_wrap=True)
    gen = False
    for k, tr in enumerate(card.tasks):
        name = tr.task.name + (" *" if tr.task.generalization else "")
        gen = gen or tr.task.generalization
        backends = ",".join(dict.fromkeys(m.result.backend for m in tr.matches))
        for i, m in enumerate(tr.measures):
            style = "bold" if i == 0 else None
            t.add_row(name if i == 0 else "", m.name, _fmt(m.value, m.percent), _fmt_ci(m.ci95, m.percent),
                      f"{m.games:,}", backends if i == 0 else "", f"{tr.elapsed_s:.1f} s" if i == 0 else "",
                      style=style, end_section=k < len(card.tasks) - 1 and i == len(tr.measures) - 1)
    why = f"{card.games_override:,} games per match" if card.games_override else "another backend"
    official = "" if card.official else f" [bold]not official[/bold]: {why};"
    version = suite_of(card.suite).version
    console.print(f"[bold]{version}[/bold] score card: [bold]{card.agent}[/bold] (lama-dice {__version__};"
                  f"{official} {card.elapsed_s:.1f} s, {card.workers} worker{'s' if card.workers != 1 else ''})")
    console.print(t)
    legend = ("first row of each task: its headline; normalized score: 0 = uniform random, 1 = exact optimum "
              "(solo points per round mapped); win rates: ties shared, Wilson intervals")
    if gen:
        legend += "; * generalization task (rules other than the defaults)"
    console.print(legend, style="dim")
    for name, why in card.skipped.items():
        console.print(f"not played: {name} ({why})")


def _print_suite(number: int) -> None:
    from lama_dice.evaluation.suite import CHUNK_SIZE, suite_of

    suite = suite_of(number)
    print(f"{suite.version} (chunk size {CHUNK_SIZE}; the compiled engine's streams; the agent plays every seat in "
          "turn)")
    for t in suite.tasks:
        rules = t.rules.to_dict()
        changed = {k: v for k, v in rules.items() if type(t.rules)().to_dict().get(k) != v}
        tag = " (generalization)" if t.generalization else " (optional: trains; --tasks exploit)" if t.optional else ""
        print(f"  {t.name}{tag}: {t.kind}, {t.games:,} games per match; {t.about}")
        if t.exploit is not None:
            b = t.exploit
            print(f"    budget: config {b.config}, {b.steps:,} steps per responder, seeds {list(b.seeds)}; "
                  f"choice over {b.select_games:,} games (seed {b.select_seed}), report over "
                  f"{b.report_games:,} fresh games (seed {b.report_seed})")
            continue
        if changed:
            print("    rules: " + ", ".join(f"{k}={json.dumps(v) if not isinstance(v, str) else v}"
                                         for k, v in changed.items()))
        for m in t.matches:
            opp = " ".join(m.opponents) or "-"
            print(f"    {m.label}: opponents {opp}, seed {m.seed}")
        if t.normalization is not None:
            r, o = t.normalization
            print(f"    normalization: random {r:.6f}, optimal {o:.6f} expected round points (exact)")
