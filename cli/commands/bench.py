"""Measure lama-dice's speed against baselines, side by side, and print the ratios.

  lama-dice bench                       # the full run: a minute or two (5 at most on a busy machine)
  lama-dice bench --quick               # small sizes: about ten seconds
  lama-dice bench --json bench.json --repeats 5

Three comparisons, each run alternately (A, B, A, B, ...) in one process so
that the machine's load hits both alike, reported as medians and as the
median of the ratios measured within one repeat:

1. AEC env: agent-steps/s of ``lama_dice_v1.env(num_players=2)`` with random
   legal actions vs PettingZoo's ``leduc_holdem_v4`` (same loop, same
   sampler; needs rlcard: ``pip install 'lama-dice[bench]'``, else skipped).
2. Evaluation: full two-player games/s of ``lama-dice evaluate --agents
   threshold:0.2 threshold:0.2`` vs a naive one-game-at-a-time Python
   implementation (bench/naive_engine.py); the compiled kernel's load time
   and the one-shot command's wall time apart; batched inference of a learned
   policy by chunk size.
3. Training: MaskablePPO env-steps/s on LamaDice-v1 vs connect_four_v3
   through PettingZoo's SB3 action-mask wrapper, with each env's share of
   the training time.

With ``jax`` and ``pgx`` installed (``pip install "lama-dice[bench-pgx]"``), section ``pgx``:
random play with autoreset on the vector game (``sample_actions()`` + ``step()``) vs Pgx's
``leduc_holdem`` and ``backgammon`` (``jit(vmap(...))``), each contender in its own process, in
turn, with a sweep of batch sizes (lama_dice.bench.pgx_speed); without them it is skipped with a note.

Also: the exact solver's solve time, peak memory of a 20,000-game
evaluation, throughput by batch size and by worker processes, and the
frames per second of the table picture (render_mode="rgb_array") and of GIF
encoding (section ``render``).

Figures depend on the machine and its load (the JSON records the load
average before and after).  The benchmarks ship with the package
(``lama_dice.bench``); the PettingZoo baselines need the ``bench`` extra
(``pip install "lama-dice[bench]"``: rlcard for leduc_holdem_v4, pygame for
connect_four_v3); a section whose baseline is missing is skipped with a note.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from lama_dice.cli.options import add_json, add_seed
from lama_env.errors import LamaDiceError

HELP = "measure speed against baselines (PettingZoo envs, a naive engine) and print the ratios"


class BenchError(LamaDiceError, ValueError):
    """A bad ``lama-dice bench`` argument, or no benchmark suite to run."""


def add_arguments(p: argparse.ArgumentParser) -> None:
    """Add the ``bench`` options to ``p``."""
    p.add_argument("--quick", action="store_true", help="small sizes and one repeat: under a minute")
    add_json(p)
    p.add_argument("--repeats", type=int, default=None, metavar="K",
                   help="alternating repeats per comparison (default 5, heavy sections 3; --quick: 1)")
    add_seed(p)
    p.add_argument("--only", nargs="+", metavar="SECTION", default=None,
                   help="run only these sections: aec vector pgx render evaluate kernel_load one_shot first_use "
                        "scaling memory solver ppo_inference training")
    p.add_argument("--quiet", action="store_true", help="no progress lines on stderr")
    p.add_argument("--baseline", metavar="CHECKOUT", default=None,
                   help="instead: measure the current code against a baseline checkout (a folder, or a git revision "
                        "of this repository), each run in a fresh process, alternately; --only picks probes: "
                        "aec evaluate vector vector_env engine lookahead solver kernel_load")


def _import_suite() -> Any:
    """The benchmark suite (imported on demand: it pulls in torch and the baselines' envs)."""
    from lama_dice.bench import suite

    return suite


def run(args: argparse.Namespace) -> int:
    """Run the benchmark suite and print its tables (optionally its JSON); return the exit status."""
    if args.repeats is not None and args.repeats < 1:
        raise BenchError(f"--repeats must be at least 1, got {args.repeats}")
    from lama_dice.cli.recordfile import check_output_path

    check_output_path("--json", args.json, BenchError)
    if args.baseline is not None:
        return _run_baseline(args)
    suite = _import_suite()
    sections = tuple(args.only) if args.only else suite.SECTIONS
    unknown = [s for s in sections if s not in suite.SECTIONS]
    if unknown:
        raise BenchError(f"unknown section {unknown[0]!r} (valid: {', '.join(suite.SECTIONS)})")

    from rich.console import Console

    to_stdout = args.json == "-"
    console = Console(stderr=to_stdout, highlight=False)
    progress = Console(stderr=True, highlight=False)
    log = None if args.quiet else (lambda msg: progress.print(f"[dim]bench: {msg}[/dim]"))
    report = suite.run_suite(quick=args.quick, repeats=args.repeats, seed=args.seed, sections=sections, log=log)
    render(console, report)
    _write_json(args, report, console)
    return 1 if report["errors"] else 0


def _run_baseline(args: argparse.Namespace) -> int:
    """``--baseline``: the probes on the current code and on the baseline, alternately (lama_dice.bench.baseline)."""
    from rich.console import Console

    from lama_dice.bench import baseline

    probes = tuple(args.only) if args.only else baseline.PROBES
    unknown = [p for p in probes if p not in baseline.PROBES]
    if unknown:
        raise BenchError(f"unknown probe {unknown[0]!r} for --baseline (valid: {', '.join(baseline.PROBES)})")
    console = Console(stderr=args.json == "-", highlight=False)
    progress = Console(stderr=True, highlight=False)
    log = None if args.quiet else (lambda msg: progress.print(f"[dim]bench: {msg}[/dim]"))
    try:
        report = baseline.compare(args.baseline, probes, repeats=args.repeats or (1 if args.quick else 3),
                                  quick=args.quick, seed=args.seed, log=log)
    except baseline.BaselineError as e:
        raise BenchError(str(e)) from None
    render(console, report)
    _write_json(args, report, console)
    failed = any("errors" in r["current"] or "errors" in r["baseline"] for r in report["probes"].values())
    return 1 if failed else 0


def _write_json(args: argparse.Namespace, report: dict[str, Any], console: Any) -> None:
    if not args.json:
        return
    text = json.dumps(_clean(report), indent=1) + "\n"
    if args.json == "-":
        sys.stdout.write(text)
        return
    from lama_dice.atomic import write_text

    write_text(args.json, text, error=BenchError)
    console.print(f"JSON: {args.json}")


def _clean(x: Any) -> Any:
    """JSON-safe: NaN and infinities become null."""
    if isinstance(x, float):
        return x if x == x and x not in (float("inf"), float("-inf")) else None
    if isinstance(x, dict):
        return {k: _clean(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_clean(v) for v in x]
    return x


# ----------------------------------------------------------------------------- rendering
_STYLES = {"note": "yellow", "error": "red", "meta": "dim"}


def render(console: Any, report: dict[str, Any]) -> None:
    """Print the report's blocks (:func:`lama_dice.bench.report.blocks`, which the docs show too) with rich."""
    from rich import box
    from rich.table import Table
    from rich.text import Text

    from lama_dice.bench.report import BASELINE_COLUMNS, TARGET_COLUMNS, Line, blocks

    for b in blocks(report):
        if isinstance(b, Line):
            console.print(Text(b.text, style=_STYLES.get(b.kind, "")))
            continue
        t = Table(title=b.title, title_justify="left", box=box.SIMPLE_HEAD, pad_edge=False)
        numeric = (1, 2, 3) if b.columns == TARGET_COLUMNS else (1, 2, 3, 4) if b.columns == BASELINE_COLUMNS \
            else (1, 2)
        for i, col in enumerate(b.columns):
            t.add_column(col, justify="right" if i in numeric else "left",
                         overflow="fold" if i == len(b.columns) - 1 else "ellipsis")
        for row in b.rows:  # as text: a note's "[bench-pgx]" is not rich markup
            t.add_row(*(Text(cell) for cell in row))
        console.print(t)
