"""Evaluate agents against each other: win rates with 95% Wilson intervals, points, ranks.

  lama-dice evaluate --players 2 --agents threshold:0.2 random --games 2000
  lama-dice evaluate --agents optimal threshold:0.2 random --games 3000 --workers 0 --json out.json
  lama-dice evaluate --league random always-roll threshold:0.2 points:10 --games 200 --plot league.png
  lama-dice evaluate --agents random random --games 100 --save-games games/ --save-sample 5

One spec per seat; seats rotate so that every agent plays every seat equally
often (exactly so when --games is a multiple of --players). A game won
jointly by k players gives each of them 1/k win. The same --seed plays the
same games on either --backend, with any --chunk-size and --workers (game i
is the compiled engine's game i of the seed), so it gives the same result
(for agents without randomness of their own).

--league plays a round-robin between the agents (2 players: --games games
per pair) or, for more players, --games games with random lineups, and rates
the agents with OpenSkill (mu, sigma; sorted by mu - 3 sigma).
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from typing import TYPE_CHECKING, Any

from lama_dice.cli.commands import agent_specs_epilog
from lama_dice.cli.options import (
    add_json,
    add_progress,
    add_rules,
    add_seed,
    add_streams,
    add_workers,
    at_least,
    rules_from_args,
)

if TYPE_CHECKING:
    from lama_dice.evaluation import EvalResult, LeagueResult

HELP = "play agents against each other and report win rates with confidence intervals"


def add_arguments(p: argparse.ArgumentParser) -> None:
    """Add the ``evaluate`` options to ``p`` (its epilog lists the agent specs)."""
    who = p.add_mutually_exclusive_group(required=True)
    who.add_argument("--agents", nargs="+", metavar="SPEC",
                     help="one agent spec per seat (see 'Agent specs' below)")
    who.add_argument("--league", nargs="+", metavar="SPEC",
                     help="a pool of agents to play a league between and rate (OpenSkill)")
    p.add_argument("--players", type=int, default=None, metavar="N",
                   help="players per game (default: the number of --agents; 2 for --league)")
    p.add_argument("--games", type=int, default=None, metavar="G",
                   help="games to play (default 1000); with --league and 2 players: games per pair (default 100)")
    add_seed(p)
    add_workers(p)
    add_json(p)
    p.add_argument("--plot", metavar="FILE", default=None,
                   help="save a plot (win rates with intervals; for --league the rating history)")
    p.add_argument("--save-games", metavar="DIR", default=None,
                   help="save the games played as lama-dice-record/1 files in DIR (with DIR/index.json); DIR must "
                        "be new or hold no saved games (one run's games a folder)")
    p.add_argument("--save-sample", type=int, metavar="K", default=None,
                   help="with --save-games: save only K games chosen at random (default: all)")
    add_rules(p)
    p.add_argument("--backend", choices=("auto", "python", "fast"), default="auto",
                   help="auto (default): the compiled fast engine when it supports the agents; "
                        "python: the rules engine")
    p.add_argument("--chunk-size", type=at_least(1), default=None, metavar="C",
                   help="games played in lockstep / per worker task (default 128; part of what the result "
                        "depends on only for an agent with randomness of its own)")
    add_streams(p)
    p.add_argument("--solo-values", action="store_true",
                   help="with --league: add each agent's solo points per round (exact from the solver "
                        "where the agent allows, else measured over --games solo games)")
    add_progress(p)
    p.epilog = agent_specs_epilog()


def run(args: argparse.Namespace) -> int:
    """Play the evaluation or league, print the table (optionally JSON, plot, saved games); return the exit status."""
    from lama_dice.cli.recordfile import check_output_path, write_json_file
    from lama_dice.evaluation import DEFAULT_CHUNK_SIZE, EvaluationError

    rules = rules_from_args(args)
    if args.players is not None and not 1 <= args.players <= 6:
        raise EvaluationError(f"--players must be 1..6, got {args.players}")
    if args.solo_values and args.league is None:
        raise EvaluationError("--solo-values goes with --league")
    if args.save_sample is not None and args.save_games is None:
        raise EvaluationError("--save-sample needs --save-games DIR")
    for opt, path in (("--json", args.json), ("--plot", args.plot)):
        check_output_path(opt, path, EvaluationError)
    common = dict(seed=args.seed, workers=args.workers, rules=rules, progress=not args.no_progress,
                  save_games=args.save_games, backend=args.backend, save_sample=args.save_sample,
                  chunk_size=args.chunk_size or DEFAULT_CHUNK_SIZE)
    result: EvalResult | LeagueResult
    if args.league is not None:
        from lama_dice.evaluation import league

        players = 2 if args.players is None else args.players
        games = 100 if args.games is None and players == 2 else (args.games or 1000)
        result = league(args.league, num_players=players, games=games, **common)
        if args.solo_values:
            from lama_dice.evaluation import solo_values

            result.solo = solo_values(args.league, rules, games=games, seed=args.seed)
        render = _render_league
    else:
        from lama_dice.evaluation import evaluate

        players = len(args.agents) if args.players is None else args.players
        if len(args.agents) != players:
            raise EvaluationError(
                f"--players {players} needs {players} specs after --agents (one per seat), got {len(args.agents)}")
        games = 1000 if args.games is None else args.games
        result = evaluate(args.agents, num_players=players, games=games, **common)
        render = _render_eval
    if args.plot:
        result.plot(args.plot)
    data = result.to_json()
    to_stdout = args.json == "-"
    if args.json and not to_stdout:
        write_json_file(args.json, data, EvaluationError)
    from rich.console import Console

    console = Console(stderr=to_stdout, highlight=False)
    if not console.is_terminal:  # a file or a pipe: wide enough that no column is dropped
        console.width = max(console.width, 120)
    render(console, result)
    notes = [f"JSON: {args.json}" if args.json and not to_stdout else "",
             f"plot: {args.plot}" if args.plot else "",
             f"games saved in {result.saved_games}/ (replay: lama-dice replay FILE)" if result.saved_games else ""]
    for n in notes:
        if n:
            console.print(n)
    if to_stdout:
        json.dump(data, sys.stdout, indent=2)
        sys.stdout.write("\n")
    return 0


def _pct(x: float | None) -> str:
    return "-" if x is None or x != x else f"{100 * x:.1f}%"


def _num(x: float | None, digits: int = 2) -> str:
    return "-" if x is None or x != x else f"{x:.{digits}f}"


def _ci(lo: float, hi: float) -> str:
    return f"{100 * lo:.1f}–{100 * hi:.1f}%"  # noqa: RUF001 - the en dash of a range is meant


def _agent_width(agents: Any) -> int:
    return min(32, max(len(a.spec) for a in agents))


def _header(result: Any, what: str) -> str:
    rules = result.rules.to_dict()
    default = type(result.rules)().to_dict()
    changed = {k: v for k, v in rules.items() if default.get(k) != v}
    rules_txt = ", ".join(f"{k}={v}" for k, v in changed.items()) or "default rules"
    players = f"{result.players} player{'s' if result.players != 1 else ''}"
    return (f"[bold]{what}[/bold]: {players}, {result.games} games, seed {result.seed}, "
            f"{rules_txt}; {result.backend} backend, {result.elapsed_s:.2f} s "
            f"({result.games_per_s:,.0f} games/s)")


def _render_eval(console: Any, result: Any) -> None:
    from rich import box
    from rich.table import Table

    solo = result.players == 1  # every solo game is "won": the measure is points per round
    multi = result.players > 2
    t = Table(box=box.SIMPLE_HEAD, pad_edge=False)
    t.add_column("#", justify="right", no_wrap=True)
    t.add_column("agent", min_width=_agent_width(result.agents), overflow="fold")
    if not solo:
        t.add_column("win", justify="right", no_wrap=True)
        t.add_column("95% CI", justify="right", no_wrap=True)
    t.add_column("pts/rd", justify="right", no_wrap=True)
    if solo:
        t.add_column("95% CI", justify="right", no_wrap=True)
    t.add_column("final ±se", justify="right", no_wrap=True)
    if multi:
        t.add_column("rank", justify="right", no_wrap=True)
    t.add_column("bust", justify="right", no_wrap=True)
    t.add_column("out", justify="right", no_wrap=True)
    for i, a in enumerate(result.agents):
        row = [str(i), a.spec]
        if not solo:
            row += [_pct(a.win_rate), _ci(*a.win_rate_ci95)]
        row.append(_num(a.mean_points_per_round))
        if solo:
            lo, hi = a.points_per_round_ci95
            row.append("-" if math.isnan(lo) or math.isnan(hi) else f"{lo:.2f}–{hi:.2f}")  # noqa: RUF001 - en dash
        row.append(f"{_num(a.mean_final_points, 1)} ±{_num(a.final_points_se, 1)}")
        if multi:
            row.append(_num(a.mean_rank))
        row += [_pct(a.bust_rate), _pct(a.went_out_rate)]
        t.add_row(*row)
    console.print(_header(result, "evaluation"))
    console.print(t)
    if solo:
        legend = "solo: fewer points is better; pts/rd: mean round points with its 95% CI; final: mean final total"
    else:
        legend = (f"win: ties share the win ({result.tied_games} of {result.games} games tied); "
                  "95% CI: Wilson; pts/rd: mean round points; final: mean final total"
                  + ("; rank: mean place (1 = best)" if multi else ""))
    console.print(legend + "; bust, out: share of rounds busted / gone out", style="dim")


def _render_league(console: Any, result: Any) -> None:
    from rich import box
    from rich.table import Table

    multi = result.players > 2
    t = Table(box=box.SIMPLE_HEAD, pad_edge=False)
    t.add_column("#", justify="right", no_wrap=True)
    t.add_column("agent", min_width=_agent_width(result.entries), overflow="fold")
    t.add_column("mu", justify="right", no_wrap=True)
    t.add_column("σ", justify="right", no_wrap=True)  # noqa: RUF001 - Greek sigma (the rating's) is meant
    t.add_column("mu-3σ", justify="right", no_wrap=True)  # noqa: RUF001 - Greek sigma is meant
    t.add_column("games", justify="right", no_wrap=True)
    t.add_column("win", justify="right", no_wrap=True)
    t.add_column("95% CI", justify="right", no_wrap=True)
    t.add_column("rank" if multi else "final", justify="right", no_wrap=True)
    solo = {id(e): v for e, v in zip(result.entries, result.solo, strict=True)} if result.solo else None
    if solo:
        t.add_column("solo pts/rd", justify="right", no_wrap=True)
    ranked = result.ranking()  # every table numbers the agents 1, 2, ... by this order (1 = best)
    for r, e in enumerate(ranked, 1):
        s = e.stats
        row = [str(r), e.spec, _num(e.mu), _num(e.sigma), _num(e.ordinal), str(s.games),
               _pct(s.win_rate), _ci(*s.win_rate_ci95),
               _num(s.mean_rank) if multi else _num(s.mean_final_points, 1)]
        if solo:
            v = solo[id(e)]
            row.append(f"{v.value:.3f}" if v.exact else f"{v.value:.2f} ±{v.se or 0:.2f}")
        t.add_row(*row)
    console.print(_header(result, "league"))
    console.print(t)
    if result.pairwise is not None and len(result.entries) <= 12:
        m = Table(box=box.SIMPLE_HEAD, pad_edge=False, title_justify="left",
                  title="win rate of row vs column (agents numbered # as in the ranking above)")
        m.add_column("#", justify="right")
        m.add_column("agent")
        for r in range(1, len(ranked) + 1):
            m.add_column(str(r), justify="right")
        where = {id(e): i for i, e in enumerate(result.entries)}  # result.pairwise is in input order
        for r, e in enumerate(ranked, 1):
            row = result.pairwise[where[id(e)]]
            m.add_row(str(r), e.spec, *[_pct(row[where[id(o)]]) if row[where[id(o)]] is not None else ""
                                         for o in ranked])
        console.print(m)
    console.print("OpenSkill Plackett-Luce ratings, sorted by mu - 3σ; ties share a rank and the win; "  # noqa: RUF001 - sigma
                  "95% CI: Wilson; " + ("rank: mean place (1 = best)" if multi else "final: mean final total")
                  + ("; solo pts/rd: expected round points in the solo variant, exact (3 decimals) or "
                     "measured ±se" if solo else ""),
                  style="dim")
