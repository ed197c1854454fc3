"""Regenerate the figures of ``README.md`` and ``docs/*.md`` from the commands that measure them.

Every figure of the documentation lives in a block between the markers
``<!-- gen:NAME -->`` and ``<!-- /gen:NAME -->``.  Each NAME has a generator
here that runs the real command(s) in a subprocess (``sys.executable -m
lama_dice ...``: nothing is looked up on ``PATH``), renders what they print as
Markdown and ends the block with a line naming the exact commands, the date
and the machine.  A block may appear in several files; all are rewritten.

    python -m tools.regen_docs                          # every block (long: see --list)
    python -m tools.regen_docs --only solve evaluate-sample
    python -m tools.regen_docs --list                   # the blocks, their commands and rough costs
    python -m tools.regen_docs --check                  # exit 1 if a block is malformed, unknown,
                                                        # never generated, or an exact block is stale
    python -m tools.regen_docs --machine "the project's 2-core machine" --only bench

A block whose figures were carried over by hand (not yet produced by this
tool) starts with the comment ``<!-- pending ... -->``; ``--check`` lists it
until it is regenerated.  Run the ``rllib-sampling`` block with the RLlib
environment's interpreter: ``.venv-rllib/bin/python -m tools.regen_docs
--only rllib-sampling``.

Standard library plus the project itself.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import math
import os
import platform
import re
import shlex
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
#: Files whose gen blocks are filled: the README and every page under docs/.
DOC_GLOBS = ("README.md", "docs/*.md")
MARKER_RE = re.compile(r"<!-- (/?)gen:([A-Za-z0-9_.-]+) -->")
PENDING = "<!-- pending"
#: Terminal width the commands' tables are drawn for.
COLUMNS = "100"
#: The en dash of ranges (``10.1\u20132``), written as an escape.
DASH = "\u2013"


class GenError(RuntimeError):
    """A generator's command failed or printed something unexpected."""


class BlockError(ValueError):
    """Gen markers that do not pair up."""


# --------------------------------------------------------------------------- blocks in files
@dataclass(frozen=True)
class Block:
    """One ``<!-- gen:NAME -->`` block: ``text[start:end]`` is its content (between the markers)."""

    name: str
    start: int
    end: int
    line: int


def find_blocks(text: str, where: str = "<text>") -> list[Block]:
    """The gen blocks of ``text``, in order.

    Raises:
        BlockError: a closing marker without its opening one, an opening one
            that is never closed, a mismatched name, or blocks inside blocks.
    """
    blocks: list[Block] = []
    open_: tuple[str, int, int] | None = None  # name, content start, line
    for m in MARKER_RE.finditer(text):
        closing, name = m.group(1) == "/", m.group(2)
        line = text.count("\n", 0, m.start()) + 1
        if not closing:
            if open_ is not None:
                raise BlockError(f"{where}:{line}: <!-- gen:{name} --> inside the block gen:{open_[0]} "
                                 f"opened at line {open_[2]}")
            open_ = (name, m.end(), line)
        else:
            if open_ is None:
                raise BlockError(f"{where}:{line}: <!-- /gen:{name} --> closes no block")
            if open_[0] != name:
                raise BlockError(f"{where}:{line}: <!-- /gen:{name} --> closes gen:{open_[0]} "
                                 f"(opened at line {open_[2]})")
            blocks.append(Block(name, open_[1], m.start(), open_[2]))
            open_ = None
    if open_ is not None:
        raise BlockError(f"{where}:{open_[2]}: <!-- gen:{open_[0]} --> is never closed (<!-- /gen:{open_[0]} -->)")
    return blocks


def doc_files(root: Path = ROOT) -> list[Path]:
    """README.md and docs/*.md, in that order."""
    out: list[Path] = []
    for pattern in DOC_GLOBS:
        out += sorted(p for p in root.glob(pattern) if p.is_file())
    return out


def replace_block(text: str, name: str, content: str) -> str:
    """``text`` with every block ``name`` holding ``content`` (which starts and ends with a newline)."""
    for b in reversed([b for b in find_blocks(text) if b.name == name]):
        text = text[:b.start] + content + text[b.end:]
    return text


# --------------------------------------------------------------------------- running commands
@dataclass
class Run:
    """One finished command."""

    args: tuple[str, ...]
    shown: str
    stdout: str
    stderr: str
    seconds: float


def shown(args: Sequence[str]) -> str:
    """How a command is written in the docs: ``python -m ...`` (``sys.executable`` shown as ``python``)."""
    return "python " + shlex.join(args)


def run(args: Sequence[str], tmp: Path | None = None, timeout: float | None = None) -> Run:
    """Run ``sys.executable ARGS`` in the repository root; ``{tmp}`` in an argument is a temporary folder.

    Raises:
        GenError: the command exited with a non-zero status.
    """
    real = [a.replace("{tmp}", str(tmp)) if tmp is not None else a for a in args]
    env = dict(os.environ, COLUMNS=COLUMNS, NO_COLOR="1", PYTHONUNBUFFERED="1")
    env.pop("FORCE_COLOR", None)
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, *real], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=timeout)
    dt = time.perf_counter() - t0
    show = shown([a.replace("{tmp}", "TMP") for a in args])
    if proc.returncode != 0:
        tail = "\n".join((proc.stderr or proc.stdout).strip().splitlines()[-5:])
        raise GenError(f"`{show}` exited with status {proc.returncode}:\n{tail}")
    return Run(tuple(real), show, proc.stdout, proc.stderr, dt)


def last_json(text: str, what: str) -> Any:
    """The JSON document a command printed: the whole output, or else its last line that parses."""
    try:
        return json.loads(text)
    except ValueError:
        pass
    for line in reversed(text.strip().splitlines()):
        if line.startswith("{"):
            try:
                return json.loads(line)
            except ValueError:
                continue
    raise GenError(f"{what}: no JSON in its output")


def clean(text: str) -> str:
    """Command output for a Markdown code block: trailing blanks and blank edges removed."""
    return "\n".join(line.rstrip() for line in text.strip("\n").splitlines()).strip("\n")


# --------------------------------------------------------------------------- the machine note
def machine_note() -> str:
    """A short description of this machine (CPU model and count, OS, Python, load)."""
    model = ""
    try:
        for line in Path("/proc/cpuinfo").read_text(encoding="utf-8", errors="replace").splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        model = platform.processor()
    cpus = os.cpu_count() or 0
    note = f"{cpus} CPU{'s' if cpus != 1 else ''}" + (f" ({model})" if model else "")
    note += f", {platform.system()} {platform.machine()}, Python {platform.python_version()}"
    try:
        note += f", load average {os.getloadavg()[0]:.2f} at the start"
    except OSError:
        pass
    return note


# --------------------------------------------------------------------------- formatting helpers
def pct(x: float | None, digits: int = 1) -> str:
    """A share as a percentage, ``-`` for none."""
    return "-" if x is None else f"{100 * x:.{digits}f}%"


def pct_range(ci: Sequence[float], digits: int = 1) -> str:
    """An interval of shares as a percentage range."""
    return f"{100 * ci[0]:.{digits}f}{DASH}{100 * ci[1]:.{digits}f}%"


def num(x: float | None, digits: int = 0) -> str:
    """A number with thousands separators, ``-`` for none or non-finite."""
    return "-" if x is None or (isinstance(x, float) and not math.isfinite(x)) else f"{x:,.{digits}f}"


def ratio(x: float | None) -> str:
    """A speed ratio, ``1.23x``."""
    return "-" if x is None or not math.isfinite(x) else f"{x:.2f}x"


def md_table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    """A Markdown table."""
    lines = ["| " + " | ".join(header) + " |", "| " + " | ".join("---" for _ in header) + " |"]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(lines)


def code(text: str, lang: str = "text") -> str:
    """A fenced code block."""
    return f"```{lang}\n{text}\n```"


def rounded(x: Any, digits: int = 4) -> Any:
    """JSON data with floats rounded (for showing a sample)."""
    if isinstance(x, float):
        return round(x, digits)
    if isinstance(x, dict):
        return {k: rounded(v, digits) for k, v in x.items()}
    if isinstance(x, list):
        return [rounded(v, digits) for v in x]
    return x


# --------------------------------------------------------------------------- generators
@dataclass(frozen=True)
class Generator:
    """How one block is made.

    ``commands`` are argument lists for ``sys.executable`` (``{tmp}``: a
    temporary folder, shown as ``TMP``); ``render`` turns their runs into the
    block's Markdown.  ``exact`` blocks do not depend on the machine (no date
    in their stamp, and ``--check`` recomputes them).
    """

    name: str
    about: str
    cost: str
    commands: tuple[tuple[str, ...], ...]
    render: Callable[[list[Run]], str]
    exact: bool = False
    commands_in_body: bool = False
    #: in-process generators (no command to run) describe their source here
    source: str = ""
    needs: str = ""
    timeout: float | None = None
    extra: dict = field(default_factory=dict)


LAMA = ("-m", "lama_dice")


def _observation_table(_runs: list[Run]) -> str:
    from lama_env.observation import layout_table

    return layout_table()


#: The value networks whose self-play agent has been renamed since (their files say the name it had then).
_VALUE_AGENT_NOW = {"2p-v1": "ppo:2p-v3"}


def _value_networks(_runs: list[Run]) -> str:
    from lama_dice.agents.value import load_value, value_names

    rows = []
    for name in value_names():
        t = load_value(name).description.get("training", {})
        now = _VALUE_AGENT_NOW.get(name)  # the self-play agent's name when the file was trained, and its name now
        agent = f"`{t.get('agent')}`" + (f" (now `{now}`)" if now else "")
        rows.append([f"`value:{name}`", agent, f"{t.get('games', 0):,}",
                     f"{t.get('positions', 0):,}", f"{t.get('heldout_games', 0):,} ({t.get('heldout_positions', 0):,})",
                     f"{t.get('brier', 0):.4f}", f"{t.get('brier_constant', 0):.4f}", f"{t.get('log_loss', 0):.4f}",
                     f"{t.get('selfplay_seconds', 0):.0f} s + {t.get('fit_seconds', 0):.0f} s"])
    return md_table(["network", "self-play of", "games", "positions trained on", "held-out games (positions)",
                     "Brier", "Brier of 1/N", "log loss", "wall time (self-play + fit)"], rows)


def _config_keys(_runs: list[Run]) -> str:
    import ast

    from lama_dice.train.config import describe_keys

    rows = []
    for key, default, meaning in describe_keys():
        try:
            shown_default = json.dumps(ast.literal_eval(default))
        except (ValueError, SyntaxError):
            shown_default = default
        rows.append([f"`{key}`", f"`{shown_default}`", meaning])
    return md_table(["key", "default", "meaning"], rows)


def _solve(runs: list[Run]) -> str:
    base = last_json(runs[0].stdout, runs[0].shown)
    opt = base["expected_round_points"]
    from lama_dice.cli.commands.solve import sorted_policies

    pol = sorted_policies(base["policies"])  # the order `lama-dice solve` prints
    rows = [["`optimal`", f"**{opt:.4f}**", ""]]
    for spec, v in pol:
        rows.append([f"`{spec}`", "never ends" if v is None else f"{v:.4f}",
                     "" if v is None else f"+{v - opt:.4f}"])
    others = []
    labels = {2: "`also_match`", 3: "`must_discard=false` (free re-rolls)", 4: "both"}
    for i, r in enumerate(runs[1:], start=2):
        others.append(f"{labels.get(i, r.shown)} {last_json(r.stdout, r.shown)['expected_round_points']:.4f}")
    return (md_table(["policy", "expected round points", "vs optimal"], rows)
            + f"\n\n{base['states']:,} displays solved. The optimum under other rules: " + "; ".join(others) + ".")


def _evaluate_sample(runs: list[Run]) -> str:
    r = runs[0]
    return code(f"$ {r.shown}\n{clean(r.stdout)}")


def _evaluate_json(runs: list[Run]) -> str:
    from tools.rules_examples import dumps

    r = runs[0]
    data = rounded(last_json(r.stdout, r.shown))
    agents = data.get("agents", [])
    if len(agents) > 1:
        data["agents"] = [agents[0]] + [{"spec": a["spec"], "...": "..."} for a in agents[1:]]
    return f"`{r.shown}` prints:\n\n" + code(dumps(data, width=100), "json")


def _engine_games(runs: list[Run]) -> str:
    r = runs[0]
    return code(f"$ {r.shown}\n{clean(r.stdout)}")


LEAGUE_JSON = "docs/heuristics_league.json"


def _league_data() -> dict:
    path = ROOT / LEAGUE_JSON
    if not path.is_file():
        raise GenError(f"{LEAGUE_JSON} is missing: run the heuristics-league block first")
    return json.loads(path.read_text(encoding="utf-8"))


def _league_rows(d: dict) -> tuple[list[dict], dict[str, dict]]:
    agents = d["agents"]
    order = sorted(range(len(agents)), key=lambda i: -agents[i]["win_rate"])
    solo = {s["spec"]: s for s in d.get("solo_values") or []}
    return [dict(agents[i], index=i) for i in order], solo


def _solo_cell(s: dict | None) -> str:
    if not s or s.get("solo_points_per_round") is None:
        return "-"
    v = s["solo_points_per_round"]
    return f"{v:.3f} (exact)" if s.get("exact") else f"{v:.2f} ± {s.get('se') or 0:.2f}"


def _heuristics_league(_runs: list[Run]) -> str:
    d = _league_data()
    agents = d["agents"]
    specs = [a["spec"] for a in agents]
    pw = d["pairwise_win_rate"]
    rows, solo = _league_rows(d)
    out = []
    for a in rows:
        i = a["index"]
        out.append([f"`{a['spec']}`", pct(a["win_rate"]), pct_range(a["win_rate_ci95"])]
                   + ["" if pw[i][j] is None else pct(pw[i][j]) for j in range(len(specs))]
                   + [_solo_cell(solo.get(a["spec"]))])
    header = ["agent", "win rate (all games)", "95% CI"] + [f"vs {s}" for s in specs] + ["solo points per round"]
    per_pair = agents[0]["games"] // max(1, len(agents) - 1)
    half = 100 * 1.959964 * math.sqrt(0.25 / per_pair) if per_pair else float("nan")
    text = md_table(header, out) + (
        f"\n\nEach pairwise cell is the row agent's win share against the column agent over {per_pair:,} games "
        f"(95% Wilson half-width at most about {half:.0f} points).")
    if "lookahead" in specs and "optimal" in specs:
        la, op = specs.index("lookahead"), specs.index("optimal")
        text += (f" In solo play `lookahead` scores {_solo_cell(solo.get('lookahead'))} points per round against "
                 f"`optimal`'s {_solo_cell(solo.get('optimal'))}; at the table it beats `optimal` "
                 f"{pct(pw[la][op])} of the time.")
    return text


def _heuristics_summary(_runs: list[Run]) -> str:
    d = _league_data()
    specs = [a["spec"] for a in d["agents"]]
    pw = d["pairwise_win_rate"]
    rows, solo = _league_rows(d)
    opt = specs.index("optimal") if "optimal" in specs else None
    out = []
    for a in rows:
        i = a["index"]
        vs_opt = "" if opt is None or pw[i][opt] is None else pct(pw[i][opt])
        out.append([f"`{a['spec']}`", pct(a["win_rate"]), pct_range(a["win_rate_ci95"]), vs_opt,
                    _solo_cell(solo.get(a["spec"]))])
    return md_table(["agent", "win rate vs the pool", "95% CI", "vs `optimal`", "solo points per round"], out)


def _lookahead_vs_optimal(runs: list[Run]) -> str:
    parts = []
    for k, r in enumerate(runs):
        d = last_json(r.stdout, r.shown)
        a = d["agents"][0]
        lo, hi = a["win_rate_ci95"]
        if k == 0:
            shared = int(d.get("tied_games", 0))
            won = a["wins"] - shared / 2
            lost = a["games"] - won - shared
            parts.append(f"`{a['spec']}` scores {a['win_rate']:.3f} (95% Wilson interval {lo:.3f}{DASH}{hi:.3f}) over "
                         f"{a['games']:,} games ({won:,.0f} wins, {shared:,} shared, {lost:,.0f} losses)")
        else:
            parts.append(f"`{a['spec']}` {a['win_rate']:.3f} ({lo:.3f}{DASH}{hi:.3f}) over {a['games']:,}")
    return ("Measured in two-player games against `optimal` (seats alternating, ties counted one half): "
            + ", and ".join(parts) + ".")


def _mcts_strength(runs: list[Run]) -> str:
    speed = {a["spec"]: a["per_second"] for a in last_json(runs[0].stdout, runs[0].shown)["agents"]}
    rows = []
    for r in runs[1:]:
        a, b = last_json(r.stdout, r.shown)["agents"]
        lo, hi = a["win_rate_ci95"]
        rows.append([f"`{a['spec']}`", f"`{b['spec']}`", f"{a['games']:,}", pct(a["win_rate"]),
                     f"{pct_range(a['win_rate_ci95'])} (±{(hi - lo) * 50:.1f})",
                     f"{a['mean_points_per_round']:.2f} / {b['mean_points_per_round']:.2f}", f"`{r.shown}`"])
    table = md_table(["agent", "against", "games", "win", "95% CI (half-width, points)", "pts/rd (both)",
                      "command"], rows)
    rates = ", ".join(f"`{k}` {v:,.1f}" for k, v in speed.items())
    return (table + f"\n\nDecisions per second on the same {last_json(runs[0].stdout, runs[0].shown)['positions']} "
            f"two-player positions, side by side in one process: {rates} (`{runs[0].shown}`; "
            "`rollout=openspiel` is OpenSpiel's own `RandomRolloutEvaluator`, the same playouts through `pyspiel` "
            "states).")


def _exact_range(agent: dict) -> tuple[float, float, str]:
    """The lowest and highest exact value of a ``solve --agents`` entry over its totals, and the totals."""
    vals = [v["round_points"] for v in agent["values"].values()]
    return min(vals), max(vals), ", ".join(agent["values"])


SOLO_TOTALS = "0 10 20 30 39"


def _solo_networks(runs: list[Run]) -> str:
    d = last_json(runs[0].stdout, runs[0].shown)
    opt = d["expected_round_points"]
    totals = SOLO_TOTALS.split()
    rows = []
    for spec, a in d["agents"].items():
        if a["sees_totals"]:
            cells = [f"{a['values'][t]['round_points']:.4f} ({a['values'][t]['vs_optimum']:+.2%})" for t in totals]
        else:
            v = a["values"]["0"]
            cells = [f"{v['round_points']:.4f} ({v['vs_optimum']:+.2%})"] * len(totals)
        rows.append([f"`{spec}`", *cells])
    return (md_table(["agent", *(f"chip total {t}" for t in totals)], rows)
            + f"\n\nExpected round points from a fresh deal (lower is better), exact; the optimum is {opt:.4f}. "
              "Rule-based agents ignore the total (the same value in every column).")


def _shipped_agents(runs: list[Run]) -> str:
    opt = last_json(runs[0].stdout, runs[0].shown)["expected_round_points"]
    ev = [last_json(r.stdout, r.shown) for r in runs[1:]]
    solo, opt_solo, vs_opt, vs_la, four, vs_prev, four_prev, exact = ev
    rows = []
    a = solo["agents"][0]
    v, (lo, hi) = a["mean_points_per_round"], a["points_per_round_ci95"]
    xlo, xhi, totals = _exact_range(exact["agents"][a["spec"]])
    rows.append([f"`{a['spec']}`", f"the exact optimum, {opt:.4f} points per round",
                 f"exact: {xlo:.4f}{DASH}{xhi:.4f} points per round at chip totals {totals} "
                 f"({xlo / opt - 1:+.2%} to {xhi / opt - 1:+.2%}); sampled: {v:.3f} ({a['rounds']:,} rounds)",
                 f"exact (no sampling error); sampled {lo:.3f}{DASH}{hi:.3f}",
                 "within 0.5%: " + ("met" if xhi / opt - 1 <= 0.005 else "**not met**"),
                 f"`{runs[8].shown}`; `{runs[1].shown}`"])
    for d, r, against, goal in ((vs_opt, runs[3], "`optimal`", 0.5),
                                (vs_la, runs[4], "`lookahead` (the strongest heuristic)", 0.58),
                                (vs_prev, runs[6], "`ppo:2p-v4` (the previous shipped agent)", 0.525),
                                (four_prev, runs[7], "three `ppo:4p-v1` (the previous shipped agent)", 0.25),
                                (four, runs[5], "three `optimal`", 0.25)):
        a = d["agents"][0]
        res = f"{pct(a['win_rate'])} wins"
        if a.get("mean_rank") is not None:
            res += f" (mean place {a['mean_rank']:.2f})"
        rows.append([f"`{a['spec']}`", against, res, pct_range(a["win_rate_ci95"]),
                     f"lower end > {goal * 100:g}%: " + ("met" if a["win_rate_ci95"][0] > goal else "**not met**"),
                     f"`{r.shown}`"])
    o = opt_solo["agents"][0]
    p, q = vs_opt["agents"][0], vs_opt["agents"][1]
    return (md_table(["agent", "against", "result", "95% CI", "target", "command"], rows)
            + f"\n\n`optimal` itself scores {o['mean_points_per_round']:.3f} (95% CI "
              f"{o['points_per_round_ci95'][0]:.3f}{DASH}{o['points_per_round_ci95'][1]:.3f}) on the same "
              f"{o['games']:,} solo games (`{runs[2].shown}`); points-per-round intervals take games as the "
              f"independent units. Against `optimal`, `ppo:2p` busts in {pct(p.get('bust_rate'))} and goes out in "
              f"{pct(p.get('went_out_rate'))} of its rounds (`optimal`: {pct(q.get('bust_rate'))}, "
              f"{pct(q.get('went_out_rate'))}) and scores {p['mean_points_per_round']:.2f} points per round "
              f"(`optimal`: {q['mean_points_per_round']:.2f}).")


#: The shipped networks of the three-, five- and six-player tables against lookahead: one
#: ``lama-dice evaluate --json`` file each, written by the command of its row (:func:`table_command`).
TABLES_DIR = "docs/shipped_tables"
TABLE_SIZES = (3, 5, 6)


def table_command(n: int, games: int, seed: int = 2026) -> str:
    """``ppo:Np`` against N-1 copies of lookahead (seats rotating), as the ``lama-dice evaluate`` of its JSON file."""
    seats = " ".join(["lookahead"] * (n - 1))
    return (f"python -m lama_dice evaluate --agents ppo:{n}p {seats} --games {games} --seed {seed} --workers 2 "
            f"--no-progress --json {TABLES_DIR}/ppo_{n}p.json")


def _shipped_tables(_runs: list[Run]) -> str:
    """One row per table size: the shipped network's win share against N-1 lookahead, and its target 1/N."""
    rows = []
    for n in TABLE_SIZES:
        f = ROOT / TABLES_DIR / f"ppo_{n}p.json"
        if not f.is_file():
            rows.append([f"`ppo:{n}p`", f"{n - 1} `lookahead`", "-", "not measured", "-", "-", "-"])
            continue
        d = json.loads(f.read_text(encoding="utf-8"))
        a, others = d["agents"][0], [b["win_rate"] for b in d["agents"][1:]]
        res = (f"{pct(a['win_rate'])} wins (mean place {a['mean_rank']:.2f}; each `lookahead` "
               f"{pct(min(others))}{DASH}{pct(max(others))})")
        rows.append([f"`{a['spec']}`", f"{n - 1} `lookahead`", f"{a['games']:,}", res, pct_range(a["win_rate_ci95"]),
                     f"lower end {a['win_rate_ci95'][0]:.2%} > 1/{n} = {1 / n:.2%}: "
                     + ("met" if a["win_rate_ci95"][0] > 1 / n else "**not met**"),
                     f"`{table_command(n, a['games'], d['seed'])}`"])
    return md_table(["agent", "against", "games", "result", "95% CI", "target", "command"], rows)


#: The rollout search against its own networks: one ``lama-dice evaluate --json`` file each, written by
#: the command of its row (:func:`search_command`), with the run's wall time and load in ``NAME.meta.json``.
SEARCH_DIR = "docs/search_results"
#: (file name, agents, games, seed, fair share of seat 0, what seat 0 is compared with)
SEARCH_RUNS: tuple[tuple[str, tuple[str, ...], int, int, float, str], ...] = (
    # (the first rows ran with the value network then shipped as value:2p, value:2p-v1 since 2026-12-06: spelled out)
    ("search_2p", ("search:ppo:2p-v3,rollouts=128,rounds=1,z=2,value=2p-v1", "ppo:2p-v3"), 20000, 2026, 1 / 2,
     "`ppo:2p-v3`"),
    ("search_4p", ("search:ppo:4p,rollouts=128,rounds=1,z=2", "ppo:4p", "ppo:4p", "ppo:4p"), 4000, 2026, 1 / 4,
     "three `ppo:4p`"),
    # the policy network distilled from the two-player search (python -m lama_dice.train.distil, docs/training.md),
    # shipped as ppo:2p (now ppo:2p-v4) because it beat the network it learned from (ppo:2p-v3)
    ("distilled_2p", ("ppo:2p-v4", "ppo:2p-v3"), 100000, 3000, 1 / 2, "`ppo:2p-v3`"),
    # and the same search over the distilled network against it, on fresh games
    ("search_2p_distilled", ("search:ppo:2p-v4,rollouts=128,rounds=1,z=2,value=2p-v1", "ppo:2p-v4"), 4000, 4000, 1 / 2,
     "`ppo:2p-v4`"),
    # the former default (z=2, value:2p-v1) over today's ppo:2p, the expert-iteration network
    # (docs/training.md#expert-iteration-networks-that-keep-what-the-search-knows): no longer stronger than it
    ("search_z2_2p", ("search:ppo:2p,z=2,value=2p-v1", "ppo:2p"), 4000, 5151, 1 / 2, "`ppo:2p`"),
    # search:NET as typed (z=1 and the value:2p retrained on ppo:2p's self-play): the strongest measured
    ("search_default_2p", ("search:ppo:2p", "ppo:2p"), 4000, 8080, 1 / 2, "`ppo:2p`"),
    ("search_default_4p", ("search:ppo:4p", "ppo:4p", "ppo:4p", "ppo:4p"), 4000, 8181, 1 / 4, "three `ppo:4p`"),
)


def search_command(name: str, agents: Sequence[str], games: int, seed: int, workers: int = 1) -> str:
    """The ``lama-dice evaluate`` that writes ``SEARCH_DIR/NAME.json``, on the compiled streams.

    The result is the same with any ``workers``: the searches draw at each decision from
    ``Policy.decision_rng`` (keyed by the game and the decision), whichever process plays it.
    """
    return (f"python -m lama_dice evaluate --agents {' '.join(agents)} --games {games} --seed {seed} "
            f"--workers {workers} --no-progress --json {SEARCH_DIR}/{name}.json")


def _search_strength(_runs: list[Run]) -> str:
    """One row per search run: seat 0's win share with its interval, the target (fair share), wall time and load."""
    rows = []
    for name, agents, games, seed, share, against in SEARCH_RUNS:
        f = ROOT / SEARCH_DIR / f"{name}.json"
        meta_f = ROOT / SEARCH_DIR / f"{name}.meta.json"
        meta = json.loads(meta_f.read_text(encoding="utf-8")) if meta_f.is_file() else {}
        workers = int(meta.get("workers", 1))  # the --workers of the run (1 unless its meta file says)
        cmd = f"`{search_command(name, agents, games, seed, workers)}`"
        if not f.is_file():
            rows.append([f"`{agents[0]}`", against, "-", "not measured", "-", "-", "-", cmd])
            continue
        d = json.loads(f.read_text(encoding="utf-8"))
        a = d["agents"][0]
        res = f"{pct(a['win_rate'])} wins" + (f" (mean place {a['mean_rank']:.2f})" if len(agents) > 2 else "")
        low = a["win_rate_ci95"][0]
        rows.append([f"`{a['spec']}`", against, f"{a['games']:,}", res, pct_range(a["win_rate_ci95"]),
                     f"lower end {low:.2%} > {share:.0%}: " + ("met" if low > share else "**not met**"),
                     meta.get("wall", "-"), f"`{search_command(name, agents, d['games'], d['seed'], workers)}`"])
    return md_table(["agent", "against", "games", "result", "95% CI", "target", "wall time (machine load)",
                     "command"], rows)


def _bench(runs: list[Run]) -> str:
    """The full ``lama-dice bench`` report, less its first_use section (the first-use block shows that one)."""
    from lama_dice.bench.report import markdown

    r = runs[0]
    rep = last_json(r.stdout, r.shown)
    rep["sections"].pop("first_use", None)
    return markdown(rep)


def _first_use(runs: list[Run]) -> str:
    """The first_use section of ``lama-dice bench --only first_use --json -`` with the run's line (no targets)."""
    from lama_dice.bench.report import markdown

    r = runs[0]
    rep = last_json(r.stdout, r.shown)
    rep["targets"] = []
    return markdown(rep)


def _bench_pgx(runs: list[Run]) -> str:
    """The pgx section of ``lama-dice bench --only pgx --json -``, with its target row and the run's line."""
    from lama_dice.bench.report import markdown

    r = runs[0]
    rep = last_json(r.stdout, r.shown)
    if "skipped" in rep["sections"]["pgx"]:
        raise GenError(rep["sections"]["pgx"]["skipped"])
    rep["targets"] = [t for t in rep.get("targets", []) if "Pgx" in t["target"]]
    return markdown(rep)


def _train_default(runs: list[Run]) -> str:
    r = runs[0]
    tmp = r.args[r.args.index("--runs-root") + 1]
    out = clean(r.stdout).replace(tmp.rstrip("/") + "/", "runs/").replace(tmp, "runs")
    lines = out.splitlines()
    start = next((i for i, line in enumerate(lines) if line.startswith("training ")), 0)
    return code(f"$ {r.shown}\n...\n" + "\n".join(lines[start:]))


TIME_JSON = "docs/time_to_strength_2p.json"
TIME_PNG = "docs/images/time_to_strength_2p.png"


def _curve_row(point: dict, opp: str) -> list[str]:
    """One checkpoint of a ``lama-dice curves --json`` file: minutes of training, steps, win rate, interval."""
    r = point["results"][opp]
    return [f"{point['train_seconds'] / 60:.1f}", f"{point['timesteps'] / 1e6:.1f}M", pct(r["win_rate"]),
            pct_range(r["win_rate_ci95"])]


def _time_to_strength(runs: list[Run]) -> str:
    train_run = runs[0]
    trained = next((line for line in train_run.stdout.splitlines() if line.startswith("trained ")), "")
    data = json.loads((ROOT / TIME_JSON).read_text(encoding="utf-8"))
    opp = data["opponents"][0]
    rows, first = [], None
    for p in data["points"]:
        lo = p["results"][opp]["win_rate_ci95"][0]
        if first is None and lo > 0.5:
            first = p
        rows.append([*_curve_row(p, opp), "yes" if lo > 0.5 else ""])
    text = (f"![win rate against lookahead over wall time](images/{Path(TIME_PNG).name})\n\n"
            + md_table(["minutes of training", "steps", f"win rate vs `{opp}`", "95% CI", "lower end > 50%"], rows))
    text += (f"\n\nEach checkpoint against `{opp}` over the same {data['games']:,} games (seed {data['seed']}, "
             "seats alternating); minutes: the wall time of `learn()` its sidecar records (`train_seconds`). ")
    if first is not None:
        text += (f"The first checkpoint whose 95% lower bound is above 50%: {first['checkpoint']} after "
                 f"{first['train_seconds'] / 60:.1f} minutes. ")
    text += f"The whole run: {trained.split(';')[0].removeprefix('trained ')}."
    return text


LEAGUE_CURVE_JSON = "docs/league_2p_curve.json"
LEAGUE_CURVE_PNG = "docs/images/league_2p.png"
#: The command of 0.1.0 that wrote LEAGUE_CURVE_JSON (its ``--streams numpy``: the python backend's NumPy streams,
#: retired in 0.2.0; the run it evaluated is not in the repository, so the file is not remade).
LEAGUE_CURVE = ("lama-dice curves runs/ppo_2p_league --evaluate lookahead --games 1000 --seed 0 --streams numpy "
                "--goal 0.58 --force "
                f"--json {LEAGUE_CURVE_JSON} --out {LEAGUE_CURVE_PNG} --title 'ppo_2p_league (warm start from "
                "ppo:2p-v2): win rate against lookahead (1,000 games per checkpoint)'")


def _league_curve(_runs: list[Run]) -> str:
    """ppo:2p-v3's run (configs/ppo_2p_league.yaml): each checkpoint against lookahead, from its JSON."""
    data = json.loads((ROOT / LEAGUE_CURVE_JSON).read_text(encoding="utf-8"))
    opp = data["opponents"][0]
    rows = [_curve_row(p, opp) for p in data["points"]]
    return (f"![win rate against lookahead over wall time](images/{Path(LEAGUE_CURVE_PNG).name})\n\n"
            + md_table(["minutes of training", "steps", f"win rate vs `{opp}`", "95% CI"], rows)
            + f"\n\nEach checkpoint against `{opp}` over the same {data['games']:,} games (seed {data['seed']}, "
              "seats alternating; about ±3 points each; the run starts from `ppo:2p-v2`'s weights). "
              "Minutes: the wall time of `learn()` its sidecar records "
              "(`train_seconds`), measured while three other jobs shared the two cores.")


def _rllib_sampling(runs: list[Run]) -> str:
    by: dict[tuple[int, int], list[float]] = {}
    for r in runs:
        d = last_json(r.stdout, r.shown)
        by.setdefault((d["env_runners"], d["envs_per_env_runner"]), []).append(d["steps_per_s"])
    rows = [[f"{n} ({k} envs each)", ", ".join(f"{v:,.0f}" for v in vals)] for (n, k), vals in sorted(by.items())]
    return md_table(["env runners", "env steps per second (one figure per run)"], rows)


#: The agents of the benchmark's results table (docs/benchmark.md), each scored on every task it can play
#: (the shipped networks: the tasks of their player count).
SCORE_AGENTS = ("random", "always-roll", "threshold:0.2", "points:10", "optimal", "lookahead",
                "ppo:solo", "ppo:solo-v1", "ppo:2p", "ppo:2p-v4", "ppo:2p-v3", "ppo:2p-v2", "ppo:2p-v1", "ppo:4p",
                "ppo:4p-v1")


def _score_cell(m: dict | None) -> str:
    """A measure of a score card as ``value (low-high)``: shares as percentages, scores to 3 decimals."""
    if not m or m.get("value") is None:
        return "-"
    lo, hi = m["ci95"]
    if m.get("percent"):
        return f"{100 * m['value']:.1f}% ({100 * lo:.1f}{DASH}{100 * hi:.1f})"
    digits = 3 if m["name"] != "points per round" else 2
    return f"{m['value']:.{digits}f} ({lo:.{digits}f}{DASH}{hi:.{digits}f})"


def _score_table(runs: list[Run]) -> str:
    cards = [last_json(r.stdout, r.shown) for r in runs]
    suite = cards[0]["suite"]
    names = [t["name"] for t in cards[0]["tasks"]] if cards else []
    for c in cards:  # every task of the suite, in order, from the cards that played it
        names += [t["name"] for t in c["tasks"] if t["name"] not in names]
    gen = {t["name"] for c in cards for t in c["tasks"] if t["generalization"]}

    def task(c: dict, name: str) -> dict | None:
        return next((t for t in c["tasks"] if t["name"] == name), None)

    def measure(c: dict, name: str, what: str) -> dict | None:
        t = task(c, name)
        return None if t is None else next((m for m in t["measures"] if m["name"] == what), None)

    head, detail = [], []
    for c, r in zip(cards, runs, strict=True):
        row = [f"`{c['agent']}`"]
        for n in names:
            t = task(c, n)
            row.append("not played" if t is None else _score_cell(t["headline"]))
        head.append([*row, f"{r.seconds:,.0f} s"])
        duel = [_score_cell(measure(c, "duel", f"win rate vs {o}")) for o in ("optimal", "lookahead", "ppo:2p-v1")]
        detail.append([f"`{c['agent']}`", _score_cell(measure(c, "solo", "points per round")), *duel,
                       _score_cell(measure(c, "table4", "mean place vs 3x optimal"))])
    official = all(c["official"] for c in cards)
    games = {t["name"]: t["games_per_match"] for c in cards for t in c["tasks"]}
    header = ["agent"] + [f"{n}{' *' if n in gen else ''}" for n in names] + ["time"]
    text = md_table(header, head)
    text += ("\n\n" + md_table(["agent", "solo points per round", "duel vs `optimal`", "duel vs `lookahead`",
                                 "duel vs `ppo:2p-v1`", "table4 mean place"], detail))
    counts = ", ".join(f"{n} {g:,}" for n, g in games.items())
    text += (f"\n\n{suite}{'' if official else ' (NOT the official game counts)'}: games per match {counts}. "
             "Every number is followed by its 95% interval. Headlines: solo tasks, the normalized score (0 = "
             "`random`, 1 = `optimal`); table tasks, the win rate, ties shared (Wilson interval; `duel`: over its "
             "three opponents' games together). * generalization task. `not played`: a shipped network plays only "
             "the player count it was trained for. Time: wall-clock seconds of the command (start-up included).")
    return text


EXPLOIT_DIR = "docs/exploitability"
#: The targets the exploitability table covers, in its order (a target without a JSON file is listed as not measured).
EXPLOIT_TARGETS = ("random", "always-roll", "threshold:0.2", "points:10", "solo-optimal", "lookahead", "ppo:2p",
                   "ppo:2p-v4", "ppo:2p-v3", "ppo:2p-v2", "ppo:2p-v1", "ppo:4p --players 4")


def exploit_results() -> dict[str, dict]:
    """The committed ``lama-dice exploit --json`` results of :data:`EXPLOIT_DIR`, by target."""
    import json

    out = {}
    for f in sorted((ROOT / EXPLOIT_DIR).glob("*.json")):
        d = json.loads(f.read_text(encoding="utf-8"))
        out[d["target"] if d["players"] == 2 else f"{d['target']} --players {d['players']}"] = d
    return out


def _exploit_label(target: str, d: dict) -> str:
    """A row's target: the spec, and for more than two players what the number is (not a Nash measure)."""
    if d["players"] == 2:
        return f"`{target}`"
    return (f"`{d['target']}`, {d['players']} players: share against {d['players'] - 1} copies "
            f"(fair share {d['fair_share']:.0%}; not a Nash measure)")


def _exploit_curves(d: dict) -> str:
    """Every responder's curve: its win rate at each evaluated checkpoint (steps in millions)."""
    return "; ".join(f"{r['start']['name']}: " + ", ".join(f"{p['timesteps'] / 1e6:.3g}M {100 * p['win_rate']:.1f}"
                                                          for p in r["curve"]) for r in d["responders"])


def _on_numpy_streams(d: dict) -> bool:
    """Whether a result was measured on the python backend's NumPy streams (0.1.0; retired in 0.2.0).

    Such a result's budget names no ``streams`` (or ``"numpy"``); its command now plays the same measurement on
    the compiled engine's streams, whose numbers differ within the interval.
    """
    return d["budget"].get("streams", "numpy") == "numpy"


def _exploit_command(d: dict) -> str:
    """The command that measures a result again, marked † when the result came from 0.1.0's NumPy streams."""
    return f"`{d['command']}`" + (" †" if _on_numpy_streams(d) else "")


def _exploit_table(_runs: list[Run]) -> str:
    res = exploit_results()
    rows, missing = [], []
    for target in EXPLOIT_TARGETS:
        d = res.get(target)
        if d is None:
            missing.append(f"`{target}`")
            continue
        ex, b = d["exploitability"], d["budget"]
        starts = "; ".join(f"{r['start']['name']} {pct(r['select']['win_rate'])}" for r in d["responders"])
        mins = d["elapsed_s"] / 60
        load = d.get("machine", {}).get("load_average_at_start")
        rows.append([_exploit_label(target, d), pct(ex["win_rate"]), pct_range(ex["ci95"]), d["best"], starts,
                     _exploit_curves(d), f"{b['steps'] / 1e6:.2g}M x {len(d['starts'])} x seeds {b['seeds']}",
                     f"{mins:.0f} min" + (f" (load {load:.1f})" if load is not None else ""),
                     _exploit_command(d)])
    text = md_table(["target", "best responder's win rate", "95% CI", "best", "each start (choice games)",
                     "curves (steps: win rate %)", "budget (steps x starts x seeds)",
                     "wall time", "command"], rows)
    text += ("\n\nWin rates of the responder against the target (ties shared): the best is chosen on "
             "4,000 games per responder and reported on 10,000 fresh games (Wilson interval, about ±1 point); "
             "50% = nothing found to exploit. Curves: 1,000 games per checkpoint (±3 points).")
    if any(_on_numpy_streams(d) for d in res.values()):
        text += (" †: measured by 0.1.0, whose evaluations played the python backend's NumPy streams (`--streams "
                 "numpy`, retired in 0.2.0); the command plays the same measurement on the compiled engine's streams.")
    if missing:
        text += " Not measured yet: " + ", ".join(missing) + "."
    return text


def _exploit_summary(_runs: list[Run]) -> str:
    res = exploit_results()
    rows = [[_exploit_label(t, res[t]), pct(res[t]["exploitability"]["win_rate"]),
             pct_range(res[t]["exploitability"]["ci95"])] for t in EXPLOIT_TARGETS if t in res]
    missing = [f"`{t}`" for t in EXPLOIT_TARGETS if t not in res]
    text = md_table(["target", "best responder's win rate against it", "95% CI"], rows)
    if missing:
        text += "\n\nNot measured yet: " + ", ".join(missing) + "."
    return text


def lama(command: str) -> tuple[str, ...]:
    """``-m lama_dice COMMAND...``: a ``lama-dice`` command as arguments of ``sys.executable``."""
    return (*LAMA, *shlex.split(command))

LEAGUE = ("evaluate --league random always-roll threshold:0.2 points:10 optimal lookahead --games 1000 --seed 0 "
          f"--solo-values --json {LEAGUE_JSON}")
SAMPLE = "evaluate --players 2 --agents threshold:0.2 random --games 2000 --seed 0 --no-progress"
RLLIB = ("-m", "lama_dice.train.rllib", "configs/rllib_2p.yaml", "--measure-sampling")


def _web_load(runs: list[Run]) -> str:
    rows = []
    for r in runs:
        d = last_json(r.stdout, r.shown)
        rows.append([f"{d['games']} at once" if d["games"] > 1 else "1 alone",
                     f"{d['players']}, against {' '.join(d['opponents'])}", f"{d['requests']:,}",
                     f"{d['requests_per_s']:,.0f}", f"{d['p50_ms']:.1f}", f"{d['p90_ms']:.1f}", f"{d['p99_ms']:.1f}",
                     f"{d['max_ms']:.1f}", str(d["errors"]), f"{d['valid_records']} of {d['finished']}"])
    return md_table(["games", "players", "requests", "requests/s", "p50 ms", "p90 ms", "p99 ms", "max ms", "errors",
                     "records valid"], rows)


def _mb(n: float) -> str:
    return f"{n / 1e6:,.0f} MB" if n >= 10e6 else f"{n / 1e6:,.1f} MB"


def _install_size(runs: list[Run]) -> str:
    d = last_json(runs[0].stdout, runs[0].shown)
    heavy = ", ".join(d["core_heavy_modules"]) or "none of torch, stable_baselines3, sb3_contrib, tensorboard"
    rows = [["core (the wheel alone)", _mb(d["core_bytes"]), _mb(d["core_bytes"]), f"{d['core_install_s']:.0f} s"]]
    rows += [[f"core + `{name}`", f"+{_mb(x['bytes'])}", _mb(x["total_bytes"]), f"{x['install_s']:.0f} s"]
             for name, x in d["extras"].items()]
    imports = "; ".join(f"`import {m}` {t * 1000:,.0f} ms" for m, t in d["import_s"].items())
    compiled = (f" With the bytecode a plain `pip install` writes, the core is {_mb(d['core_bytes_compiled'])}."
                if "core_bytes_compiled" in d else "")
    return (md_table(["install", "adds", "site-packages (no bytecode)", "pip install"], rows) + compiled
            + f"\n\nIn the core venv: {heavy} installed (checked by import); {imports} (fresh interpreters, "
            f"median of 5, bytecode written); `{d['evaluate_command']}` (`lama-dice` from another folder) "
            f"{d['evaluate_first_s']:.1f} s the first time (Numba compiling the engine's kernels) and "
            f"{d['evaluate_warm_s']:.1f} s warm. Load average "
            f"{d['load_average_start'][0]:.1f} at the start, {d['load_average_end'][0]:.1f} at the end.")


def _wheel_size(runs: list[Run]) -> str:
    d = last_json(runs[0].stdout, runs[0].shown)
    return f"The wheel (`{d['wheel']}`): {_mb(d['wheel_bytes'])}, {d['wheel_files']:,} files."


def _inference_speed(runs: list[Run]) -> str:
    d = last_json(runs[0].stdout, runs[0].shown)
    rows = [[f"`{d['agent']}` vs {', '.join(d['opponents'])}, {d['games']:,} games", f"{d['numpy']['per_s']:,.0f}",
             f"{d['torch']['per_s']:,.0f}", f"{d['numpy_over_torch']:.2f}x",
             "yes" if d["same_results"] else "**no**"]]
    text = md_table(["evaluation", "NumPy games/s", "torch games/s", "NumPy / torch (paired median)",
                     "same results"], rows)
    fwd = [[b, f"{x['numpy_us']:,.0f}", f"{x['torch_us']:,.0f}", f"{x['numpy_over_torch']:.2f}x"]
           for b, x in d["forward_us"].items()]
    return text + "\n\n" + md_table(["batch", "NumPy forward µs", "torch forward µs",
                                      "torch time / NumPy time (paired median)"], fwd)


MCTS_EVAL = "--seed 0 --workers 2 --no-progress --json -"
GENERATORS: dict[str, Generator] = {g.name: g for g in (
    Generator("observation-table", "the observation vector's layout (docs/environments.md)", "instant", (),
              _observation_table, exact=True, source="`lama_env.observation.layout_table()`"),
    Generator("value-networks", "the shipped value networks' training and held-out calibration (docs/training.md)",
              "instant", (), _value_networks, exact=True,
              source="the `training` description of `agents/pretrained/value_*.safetensors`"),
    Generator("config-keys", "every training-config key with its default (docs/training.md)", "instant", (),
              _config_keys, exact=True, source="`lama_dice.train.config.describe_keys()`"),
    Generator("solve", "exact solo values of the optimum and the heuristics, default and other rules", "~5 s",
              (lama("solve --json"), lama("solve --json --rule triple_llama=also_match"),
               lama("solve --json --rule must_discard=false"),
               lama("solve --json --rule triple_llama=also_match --rule must_discard=false")),
              _solve, exact=True),
    Generator("evaluate-sample", "a sample evaluation table", "~2 s",
              (lama(SAMPLE),), _evaluate_sample, commands_in_body=True),
    Generator("evaluate-json", "the same evaluation as JSON (abbreviated)", "~2 s",
              (lama(SAMPLE + " --json -"),), _evaluate_json, commands_in_body=True),
    Generator("engine-games", "random games per second of the bare rules engine", "~7 s",
              (("-m", "lama_dice.bench.engine_games", "--seconds", "3"),), _engine_games, commands_in_body=True),
    Generator("heuristics-league", "the heuristics' league with solo values (writes docs/heuristics_league.json)",
              "long: ~3 min on 2 cores", (lama(LEAGUE + " --no-progress"),), _heuristics_league),
    Generator("heuristics-summary", "the README's summary of the league, rendered from docs/heuristics_league.json",
              "instant (reads the JSON that heuristics-league writes)", (), _heuristics_summary, exact=True,
              source=f"{LEAGUE_JSON}, written by `python -m lama_dice {LEAGUE}` (the heuristics-league block)"),
    Generator("lookahead-vs-optimal", "lookahead and lookahead:points against optimal, two players",
              "long: ~3 min on 2 cores",
              (lama("evaluate --agents lookahead optimal --games 4000 --seed 0 --no-progress --json -"),
               lama("evaluate --agents lookahead:points optimal --games 2000 --seed 0 --no-progress --json -")),
              _lookahead_vs_optimal),
    Generator("mcts-strength", "mcts:N (OpenSpiel's MCTSBot) against lookahead and ppo:2p-v2, with decisions per "
              "second (needs the openspiel extra)", "long: ~40 min on 2 busy cores",
              (("-m", "lama_dice.bench.search_speed", "mcts:50", "mcts:200", "mcts:50,rollout=openspiel",
                "lookahead", "ppo:2p-v2", "--positions", "60", "--json", "-"),
               lama(f"evaluate --agents mcts:50 lookahead --games 800 {MCTS_EVAL}"),
               lama(f"evaluate --agents mcts:50 ppo:2p-v2 --games 800 {MCTS_EVAL}"),
               lama(f"evaluate --agents mcts:200 lookahead --games 200 {MCTS_EVAL}"),
               lama(f"evaluate --agents mcts:200 ppo:2p-v2 --games 200 {MCTS_EVAL}")),
              _mcts_strength, commands_in_body=True, needs="pyspiel"),
    Generator("shipped-agents", "the strength of ppo:solo, ppo:2p and ppo:4p (20,000 games each)",
              "long: ~4 min on 2 cores",
              (lama("solve --json"),
               lama("evaluate --players 1 --agents ppo:solo --games 20000 --seed 1 --no-progress --json -"),
               lama("evaluate --players 1 --agents optimal --games 20000 --seed 1 --no-progress --json -"),
               lama("evaluate --agents ppo:2p optimal --games 20000 --seed 2026 --workers 2 --no-progress --json -"),
               lama("evaluate --agents ppo:2p lookahead --games 20000 --seed 2026 --workers 2 --no-progress "
                    "--json -"),
               lama("evaluate --agents ppo:4p optimal optimal optimal --games 20000 --seed 2026 --workers 2 "
                    "--no-progress --json -"),
               # the games that decided the swap: a seed picked after the run (its own seeds derive from its seed,
               # the iteration and the step)
               lama("evaluate --agents ppo:2p ppo:2p-v4 --games 20000 --seed 9191 --workers 2 --no-progress "
                    "--json -"),
               lama("evaluate --agents ppo:4p ppo:4p-v1 ppo:4p-v1 ppo:4p-v1 --games 20000 --seed 2026 --workers 2 "
                    "--no-progress --json -"),
               lama(f"solve --agents ppo:solo --totals {SOLO_TOTALS} --json")),
              _shipped_agents, commands_in_body=True),
    Generator("shipped-tables", f"ppo:3p, ppo:5p and ppo:6p against N-1 copies of lookahead, rendered from "
              f"{TABLES_DIR}/*.json", "instant (reads what lama-dice evaluate --json wrote)", (), _shipped_tables,
              exact=True, source=f"{TABLES_DIR}/ppo_Np.json, each written by the command of its row"),
    Generator("search-strength", f"the rollout search against its own networks, rendered from {SEARCH_DIR}/*.json",
              "instant (reads what lama-dice evaluate --json wrote)", (), _search_strength, exact=True,
              source=f"{SEARCH_DIR}/NAME.json, each written by the command of its row"),
    Generator("solo-networks", "exact solo values of the shipped solo networks at several chip totals", "~20 s",
              (lama(f"solve --agents ppo:solo ppo:solo-v1 optimal threshold:0.2 --totals {SOLO_TOTALS} --json"),),
              _solo_networks),
    Generator("bench", "lama-dice bench: speed against the baselines (needs the bench extra)",
              "long: ~3 min with the first_use compiles (up to 10 min on a busy machine)",
              (lama("bench --quiet --json -"),), _bench),
    Generator("first-use", "lama-dice bench --only first_use: the first evaluate and the first vector env, "
              "cold (empty Numba cache) and warm", "long: ~2 min on 2 cores (the compiles)",
              (lama("bench --only first_use --quiet --json -"),), _first_use),
    Generator("bench-pgx", "lama-dice bench --only pgx: random play, the vector game beside Pgx (JAX)",
              "long: ~3 min on 2 cores; needs the bench-pgx extra (make bench-pgx)",
              (lama("bench --only pgx --quiet --json -"),), _bench_pgx, needs="pgx"),
    Generator("train-default", "what `make train` prints: steps/s, the evaluations and the final table",
              "long: ~3 min on 2 cores", (lama("train default --runs-root {tmp} --no-progress"),), _train_default,
              commands_in_body=True),
    Generator("time-to-strength", "configs/ppo_2p_fast.yaml from scratch, each checkpoint against lookahead "
              "(writes docs/time_to_strength_2p.json and its picture)", "long: ~20 min on 2 cores",
              (lama("train ppo_2p_fast --run-dir {tmp}/ppo_2p_fast --no-progress"),
               lama("curves {tmp}/ppo_2p_fast --evaluate lookahead --games 2000 --workers 2 "
                    f"--goal 0.5 --force --json {TIME_JSON} --out {TIME_PNG} "
                    "--title 'ppo_2p_fast from scratch: win rate "
                    "against lookahead (2,000 games per checkpoint)'")),
              _time_to_strength),
    Generator("score-table", "the benchmark's results: every heuristic and shipped agent on lama-dice-suite/3 "
              "(its five tasks; the optional exploit task has its own table)",
              "long: ~15-20 min on 2 cores",
              tuple(lama(f"score {a} --workers 2 --no-progress --json -") for a in SCORE_AGENTS),
              _score_table),
    Generator("league-curve", "ppo:2p-v3's training run (the league) against lookahead, rendered from "
              f"{LEAGUE_CURVE_JSON}", "instant (reads what lama-dice curves --json wrote)", (), _league_curve,
              exact=True, source=f"{LEAGUE_CURVE_JSON}, written by 0.1.0's `{LEAGUE_CURVE}` (`--streams numpy` was "
                                 "retired in 0.2.0: the same command without it plays the compiled engine's streams)"),
    Generator("exploit-table", "approximate exploitability of the heuristics and shipped agents (docs/benchmark.md), "
              "rendered from docs/exploitability/*.json", "instant (reads what lama-dice exploit --json wrote)",
              (), _exploit_table, exact=True,
              source=f"{EXPLOIT_DIR}/*.json, each written by the `lama-dice exploit TARGET --json` command of "
                     "its row"),
    Generator("exploit-summary", "the README's headline rows of the exploitability table", "instant", (),
              _exploit_summary, exact=True, source=f"{EXPLOIT_DIR}/*.json (the exploit-table block)"),
    Generator("web-load", "lama-dice serve under load: 50 games at once through its API (needs the web extra)",
              "~15 s", (("-m", "lama_dice.cli.web.loadtest", "--games", "50"),
                        ("-m", "lama_dice.cli.web.loadtest", "--games", "1", "--seed", "3")), _web_load,
              needs="uvicorn"),
    Generator("rllib-sampling", "RLlib env-runner throughput (--measure-sampling), one and two runners",
              "long: ~2 min; needs the rllib extra: run with .venv-rllib/bin/python",
              ((*RLLIB, "--env-runners", "1"), (*RLLIB, "--env-runners", "1"),
               (*RLLIB, "--env-runners", "2"), (*RLLIB, "--env-runners", "2")),
              _rllib_sampling, needs="ray"),
    Generator("install-size", "installed size of the core and of each extra, import times and the first and warm "
              "evaluate, in fresh venvs from the wheel", "long: ~10-20 min (installs torch and every extra)",
              (("-m", "lama_dice.bench.install_size"),), _install_size, timeout=7200),
    Generator("wheel-size", "the wheel's size and number of files (docs/performance.md; checked by "
              "tests/test_packaging.py)", "~15 s (builds the wheel)",
              (("-m", "lama_dice.bench.install_size", "--wheel-only"),), _wheel_size),
    Generator("inference-speed", "ppo:2p against random with the NumPy and the torch forward pass, side by side "
              "(needs torch)", "~1 min", (("-m", "lama_dice.bench.inference_speed"),), _inference_speed,
              needs="torch"),
)}


# --------------------------------------------------------------------------- producing a block
def stamp(gen: Generator, runs: list[Run], date: str, machine: str) -> str:
    """The block's last line: how it was made (and, for measurements, when and where)."""
    me = f"`python -m tools.regen_docs --only {gen.name}`"
    if gen.source:
        return f"*Generated by {me} from {gen.source}.*"
    cmds = "" if gen.commands_in_body else " from " + "; ".join(f"`{r.shown}`" for r in runs)
    if gen.exact:
        return f"*Generated by {me}{cmds} (exact: the same on every machine).*"
    secs = sum(r.seconds for r in runs)
    return f"*Generated by {me}{cmds} on {date}, {machine}; {secs:,.0f} s.*"


def generate(gen: Generator, machine: str | None = None, date: str | None = None) -> str:
    """The block content for ``gen`` (with a leading and a trailing newline)."""
    if gen.needs:
        try:
            __import__(gen.needs)
        except ImportError:
            raise GenError(f"needs the module {gen.needs!r}, missing from {sys.executable}") from None
    machine = machine or machine_note()
    date = date or _dt.date.today().isoformat()
    runs: list[Run] = []
    with tempfile.TemporaryDirectory(prefix="regen-docs-") as tmp:
        for args in gen.commands:
            runs.append(run(args, Path(tmp), timeout=gen.timeout))
        body = gen.render(runs)
    return f"\n{body}\n\n{stamp(gen, runs, date, machine)}\n"


# --------------------------------------------------------------------------- command line
def scan(files: Sequence[Path]) -> tuple[dict[str, list[str]], list[str]]:
    """Where each block is (``name -> ["file:line", ...]``) and the marker errors."""
    where: dict[str, list[str]] = {}
    errors: list[str] = []
    for f in files:
        rel = f.relative_to(ROOT).as_posix() if f.is_relative_to(ROOT) else str(f)
        try:
            for b in find_blocks(f.read_text(encoding="utf-8"), rel):
                where.setdefault(b.name, []).append(f"{rel}:{b.line}")
                if b.name not in GENERATORS:
                    errors.append(f"{rel}:{b.line}: unknown block gen:{b.name} (known: {', '.join(GENERATORS)})")
        except BlockError as e:
            errors.append(str(e))
    return where, errors


def pending(files: Sequence[Path]) -> list[str]:
    """Blocks still holding hand-carried figures (``<!-- pending ... -->``)."""
    out = []
    for f in files:
        text = f.read_text(encoding="utf-8")
        for b in find_blocks(text):
            if text[b.start:b.end].lstrip().startswith(PENDING):
                out.append(f"{f.relative_to(ROOT).as_posix()}:{b.line}: gen:{b.name}")
    return out


def _list(where: dict[str, list[str]]) -> None:
    for g in GENERATORS.values():
        print(f"{g.name}  [{g.cost}]  {g.about}")
        print(f"    in: {', '.join(where.get(g.name, [])) or '(no block)'}")
        if g.source:
            print(f"    from: {g.source}")
        for args in g.commands:
            print(f"    $ {shown([a.replace('{tmp}', 'TMP') for a in args])}")


def _check(files: Sequence[Path], where: dict[str, list[str]]) -> list[str]:
    problems = [f"{p}: still pending (figures carried over by hand); regenerate it" for p in pending(files)]
    for g in GENERATORS.values():
        if not g.exact or g.name not in where:
            continue
        try:
            want = generate(g, machine="-", date="-")
        except GenError as e:
            problems.append(f"gen:{g.name}: {e}")
            continue
        for f in files:
            text = f.read_text(encoding="utf-8")
            for b in find_blocks(text):
                if b.name == g.name and text[b.start:b.end] != want \
                        and not text[b.start:b.end].lstrip().startswith(PENDING):
                    problems.append(f"{f.relative_to(ROOT).as_posix()}:{b.line}: gen:{g.name} is stale")
    return problems


def main(argv: Sequence[str] | None = None) -> int:
    """Command line: see the module docstring; returns the exit status."""
    p = argparse.ArgumentParser(prog="python -m tools.regen_docs", description=__doc__.splitlines()[0])
    p.add_argument("--only", nargs="+", metavar="NAME", help="regenerate only these blocks (see --list)")
    p.add_argument("--list", action="store_true", help="print every block with its commands and rough cost")
    p.add_argument("--check", action="store_true",
                   help="change nothing; exit 1 if a block is malformed, unknown or pending, or an exact block "
                        "is stale")
    p.add_argument("--machine", default=None, help="the machine note of the stamps (default: detected)")
    args = p.parse_args(argv)

    files = doc_files()
    where, errors = scan(files)
    for e in errors:
        print(f"regen_docs: {e}", file=sys.stderr)
    if args.list:
        _list(where)
        return 1 if errors else 0
    if errors:
        return 1
    if args.check:
        problems = _check(files, where)
        for e in problems:
            print(f"regen_docs: {e}", file=sys.stderr)
        return 1 if problems else 0

    names = args.only or list(GENERATORS)
    unknown = [n for n in names if n not in GENERATORS]
    if unknown:
        print(f"regen_docs: unknown block {unknown[0]!r} (known: {', '.join(GENERATORS)})", file=sys.stderr)
        return 2
    machine = args.machine or machine_note()
    failed = 0
    for name in [n for n in GENERATORS if n in names]:
        if name not in where:
            print(f"regen_docs: {name}: no block in the docs, skipped", file=sys.stderr)
            continue
        print(f"regen_docs: {name} [{GENERATORS[name].cost}] ...", file=sys.stderr, flush=True)
        try:
            content = generate(GENERATORS[name], machine=machine)
        except (GenError, subprocess.TimeoutExpired, KeyError, IndexError, ValueError) as e:
            print(f"regen_docs: {name}: failed: {e}", file=sys.stderr)
            failed += 1
            continue
        for f in files:
            text = f.read_text(encoding="utf-8")
            new = replace_block(text, name, content)
            if new != text:
                f.write_text(new, encoding="utf-8")
                print(f"regen_docs: {name}: wrote {f.relative_to(ROOT).as_posix()}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
