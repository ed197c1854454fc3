"""Solve the solo round exactly and compare the heuristics with the optimum.

Prints the optimal expected round points from a fresh deal (averaged exactly
over every 6-card deal) and the exact solo values of the rule-based agents
(``always-roll``, ``threshold:T``, ``points:K``), lower is better.  Chips are
ignored; going out scores 0.

With ``--agents`` it also gives the exact value of any deterministic solo
agent, trained networks included (``ppo:solo``, ``ppo:PATH``: the network is
asked at every state of the round, :mod:`lama_dice.agents.solo_exact`), at
the chip totals of ``--totals`` (the observation shows the total).

Examples::

    lama-dice solve
    lama-dice solve --rule triple_llama=also_match --rule must_discard=false --json -
    lama-dice solve --agents ppo:solo ppo:solo-v1 --totals 0 20 39 --json solo.json
"""

from __future__ import annotations

import argparse
import math
from typing import Any, cast

from lama_dice.cli.options import add_json, add_rules, rules_from_args

HELP = "solve the solo round exactly; compare heuristics with the optimum"

#: The heuristics compared with the optimum, in table order.
POLICY_SPECS: tuple[str, ...] = (
    "always-roll",
    "threshold:0.1", "threshold:0.15", "threshold:0.2", "threshold:0.25", "threshold:0.3",
    "points:5", "points:8", "points:10", "points:12", "points:15",
)


def add_arguments(p: argparse.ArgumentParser) -> None:
    """Add the ``solve`` options to ``p``."""
    add_rules(p)
    # the spellings of earlier versions, kept working (hidden): --rule triple_llama=M, must_discard=false,
    # end_threshold=N say the same
    p.add_argument("--triple-llama", choices=("chip_only", "also_match"), default=None, help=argparse.SUPPRESS)
    p.add_argument("--no-must-discard", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--end-threshold", type=int, default=None, help=argparse.SUPPRESS)
    p.add_argument("--agents", nargs="+", metavar="SPEC", default=None,
                   help="exact solo values of these deterministic agents instead of the heuristics "
                        "(e.g. ppo:solo, ppo:PATH, threshold:0.2)")
    p.add_argument("--totals", nargs="+", type=int, metavar="T", default=[0],
                   help="with --agents: the chip totals a network sees (default: 0, a fresh game)")
    add_json(p, "the report")


def _rules(args: argparse.Namespace) -> Any:
    """The rules of ``--rule`` items, after the older flags (``--triple-llama`` ...) if given."""
    old: dict[str, Any] = {}
    if args.triple_llama is not None:
        old["triple_llama"] = args.triple_llama
    if args.no_must_discard:
        old["must_discard"] = False
    if args.end_threshold is not None:
        old["end_threshold"] = args.end_threshold
    return rules_from_args(args, old)


def sorted_policies(policies: dict[str, float | None]) -> list[tuple[str, float | None]]:
    """``policies`` (spec -> exact value, None: never ends) best first, ties by spec, never-ending ones last."""
    return sorted(policies.items(), key=lambda kv: (math.inf if kv[1] is None else kv[1], kv[0]))


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


def solve_agents(rules, specs: list[str], totals: list[int]) -> dict:
    """Exact solo values of ``specs`` (networks at each chip total of ``totals``) as a JSON-ready dict.

    Raises:
        lama_env.errors.LamaDiceError: a spec does not build, is not a solo agent, or samples its actions.
    """
    from lama_dice.agents.registry import make_agent
    from lama_dice.agents.solo_exact import exact_solo_value
    from lama_dice.agents.solver import SolverError, solver_for

    optimum = solver_for(rules).expected_round_points()
    bad = [t for t in totals if not 0 <= t < rules.end_threshold]
    if bad:
        raise SolverError(f"--totals must lie in 0..{rules.end_threshold - 1} (a game ends at "
                          f"{rules.end_threshold}), got {bad[0]}")
    agents = {}
    for spec in specs:
        agent = make_agent(spec)
        network = hasattr(agent, "act_observations")
        values = {}
        for t in (totals if network else [0]):
            v = exact_solo_value(agent, rules, t)
            values[str(t)] = {"round_points": v if math.isfinite(v) else None,
                              "vs_optimum": v / optimum - 1 if math.isfinite(v) else None}
        agents[spec] = {"sees_totals": network, "values": values}
    return {"rules": rules.to_dict(), "expected_round_points": optimum, "agents": agents}


def run(args: argparse.Namespace) -> int:
    """Solve the solo round under the given rules and print the table (and the JSON); return the exit status."""
    from lama_dice.agents.solver import SolverError
    from lama_dice.cli.recordfile import check_output_path, emit_json_report

    check_output_path("--json", args.json, SolverError)
    rules = _rules(args)
    # a LamaDiceError (a spec that does not build, a sampling agent) is one line (cli.main)
    report = solve_agents(rules, args.agents, args.totals) if args.agents else solve(rules)
    from rich.console import Console

    console = Console(stderr=args.json == "-", highlight=False)

    def render() -> None:
        console.print(_agents_table(report) if args.agents else _policies_table(report))
        if not args.agents:
            r = report["rules"]
            console.print(f"rules: triple_llama={r['triple_llama']}, must_discard={str(r['must_discard']).lower()}; "
                          f"{report['states']} displays of at most 6 cards solved; sorted best first")

    emit_json_report(console, args.json, report, SolverError, render)
    return 0


def _policies_table(report: dict) -> Any:
    from rich.table import Table

    opt = report["expected_round_points"]
    table = Table(title="Solo round: expected round points from a fresh deal (exact; lower is better)")
    table.add_column("policy")
    table.add_column("round points", justify="right")
    table.add_column("vs optimal", justify="right")
    table.add_row("optimal", f"{opt:.4f}", "", style="bold")
    for spec, v in sorted_policies(report["policies"]):
        table.add_row(spec, "never ends" if v is None else f"{v:.4f}", "" if v is None else f"+{v - opt:.4f}")
    return table


def _agents_table(report: dict) -> Any:
    from rich.table import Table

    opt = report["expected_round_points"]
    table = Table(title="Solo round: exact expected round points (lower is better)")
    for col in ("agent", "chip total", "round points", "vs optimal"):
        table.add_column(col, justify="left" if col == "agent" else "right")
    table.add_row("optimal", "any", f"{opt:.4f}", "", style="bold")
    for spec, a in report["agents"].items():
        for t, v in a["values"].items():
            rp = v["round_points"]
            table.add_row(spec, t if a["sees_totals"] else "any", "never ends" if rp is None else f"{rp:.4f}",
                          "" if rp is None else f"{100 * v['vs_optimum']:+.2f}%")
    return table
