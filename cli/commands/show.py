"""Show a game record turn by turn: the table after every turn, round and game summaries.

Records come from `lama-dice play --save`, `lama-dice evaluate --save-games`
or any lama-dice-record/1 file.  Round and turn numbers are 1-based.  An
illegal record prints its first fault on one line and exits 1.
"""

from __future__ import annotations

import argparse
import sys

HELP = "show a game record turn by turn"


def add_arguments(p: argparse.ArgumentParser) -> None:
    """Add the ``show`` arguments to ``p``."""
    p.add_argument("record", help="path to a lama-dice-record/1 JSON file ('-' for standard input)")
    p.add_argument("--step", action="store_true", help="wait for Enter between turns (q + Enter stops)")


def run(args: argparse.Namespace, stdin=None, console=None) -> int:
    """Show a record file turn by turn (``stdin``, ``console``: for tests); return 0, or 1 for an illegal record."""
    from rich.console import Console

    from lama_dice.cli.recordfile import load_record_file
    from lama_dice.cli.tui import show_record
    from lama_env.record import replay

    rec, fault = load_record_file(args.record)
    result = fault if fault is not None else replay(rec)
    if not result["valid"]:
        print(f"lama-dice show: invalid record: {fault_line(result)}", file=sys.stderr)
        return 1
    tty = None
    if stdin is None:
        stdin = sys.stdin
        if args.step and args.record == "-":  # the record came on stdin: read the keys from the terminal
            try:
                stdin = tty = open("/dev/tty", encoding="utf-8")
            except OSError:
                pass
    try:
        show_record(rec, console or Console(highlight=False), step=args.step, stdin=stdin)
    finally:
        if tty is not None:
            tty.close()
    return 0


def fault_line(result: dict) -> str:
    """A replay fault as one line: ``round 2, turn 5 (1-based): <error>`` (numbered as `show` displays them)."""
    where = []
    if result.get("round") is not None:
        where.append(f"round {result['round'] + 1}")
    if result.get("turn") is not None:
        where.append(f"turn {result['turn'] + 1}")
    return (", ".join(where) + " (1-based): " if where else "") + str(result["error"])
