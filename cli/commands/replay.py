"""Check a game record against the rules and print its replay result as JSON.

Exit status: 0 for a legal record, 1 for an illegal one or a file that is
not a record (the JSON result then has ``"valid": false`` and names the
first bad round and turn).
"""

from __future__ import annotations

import argparse
import json
import sys

HELP = "check a game record and print its replay result (JSON)"


def add_arguments(p: argparse.ArgumentParser) -> None:
    """Add the ``replay`` arguments to ``p``."""
    p.add_argument("record", help="path to a lama-dice-record/1 or /2 JSON file ('-' for standard input)")
    p.add_argument("--indent", type=int, default=None, help="pretty-print the JSON with this indent")


def run(args: argparse.Namespace) -> int:
    """Replay a record file and print the result as JSON; return 0 if the record is legal, else 1."""
    from lama_dice.cli.recordfile import load_record_file
    from lama_env.record import replay

    rec, fault = load_record_file(args.record)
    result = fault if fault is not None else replay(rec)
    json.dump(result, sys.stdout, indent=args.indent)
    sys.stdout.write("\n")
    return 0 if result["valid"] else 1
