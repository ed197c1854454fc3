"""Solve the solo round exactly and compare the heuristics with the optimum.

Prints the optimal expected round points from a fresh deal (averaged exactly
over every 6-card deal) and the exact solo values of the rule-based agents
(``always-roll``, ``threshold:T``, ``points:K``), lower is better.  Chips are
ignored; going out scores 0.

Examples::

    lama-dice solve
    lama-dice solve --triple-llama also_match --no-must-discard --json
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from typing import cast

HELP = "solve the solo round exactly; compare heuristics with the optimum"

#: The heuristics compared with the optimum, in table order.
POLICY_SPECS: tuple[str, ...] = (
    "always-roll",
    "threshold:0.1", "threshold:0.15", "threshold:0.2", "threshold:0.25", "threshold:0.3",
    "points:5", "points:8", "points:10", "points:12", "points:15",
)


def add_arguments(p: argparse.ArgumentParser) -> None:
    """Add the ``solve`` options to ``p``."""
    p.add_argument("--triple-llama", choices=("chip_only", "also_match"), default="chip_only",
                   help="what a triple llama does (default: chip_only)")
    p.add_argument("--no-must-discard", action="store_true",
                   help="a matching roll may discard nothing (must_discard=false)")
    p.add_argument("--end-threshold", type=int, default=40,
                   help="game-end threshold (part of the rules; it does not change solo round values)")
    p.add_argument("--json", action="store_true", help="print a JSON object instead of a table")


def solve(rules, specs=POLICY_SPECS) -> dict:
    """The solve report of ``rules`` as a JSON-ready dict (infinite values become None)."""
    from lama_dice.agents.registry import make_agent
    from lama_dice.agents.solver import SoloPolicy, SoloSolver

    solver = SoloSolver(rules)
    optimum = solver.expected_round_points()
    policies = {}
    for spec in specs:
        # the specs compared are rule-based agents, which implement SoloPolicy (wants_quit, choose_discard)
        v = solver.policy_value(cast(SoloPolicy, make_agent(spec)))
        policies[spec] = v if math.isfinite(v) else None
    return {
        "rules": rules.to_dict(),
        "expected_round_points": optimum,
        "states": solver.solve_all(),
        "policies": policies,
    }


def run(args: argparse.Namespace) -> int:
    """Solve the solo round under the given rules and print the table or JSON; return the exit status."""
    from lama_env.rules import RulesConfig

    rules = RulesConfig(triple_llama=args.triple_llama, must_discard=not args.no_must_discard,
                        end_threshold=args.end_threshold)
    report = solve(rules)
    if args.json:
        json.dump(report, sys.stdout, indent=2)
        sys.stdout.write("\n")
        return 0

    from rich.console import Console
    from rich.table import Table

    opt = report["expected_round_points"]
    table = Table(title="Solo round: expected round points from a fresh deal (exact; lower is better)")
    table.add_column("policy")
    table.add_column("round points", justify="right")
    table.add_column("vs optimal", justify="right")
    table.add_row("optimal", f"{opt:.4f}", "", style="bold")
    for spec, v in report["policies"].items():
        table.add_row(spec, "never ends" if v is None else f"{v:.4f}", "" if v is None else f"+{v - opt:.4f}")
    console = Console()
    console.print(table)
    r = report["rules"]
    console.print(f"rules: triple_llama={r['triple_llama']}, must_discard={str(r['must_discard']).lower()}; "
                  f"{report['states']} displays of at most 6 cards solved")
    return 0
