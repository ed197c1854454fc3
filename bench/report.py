"""The one renderer of a ``lama-dice bench`` report: its tables, for the terminal and for the docs.

:func:`blocks` turns the report (:func:`lama_dice.bench.suite.run_suite`, or the JSON of
``lama-dice bench --json``) into :class:`Table` and :class:`Line` blocks, one table per section
that ran, then the targets and the run's machine line.  ``lama-dice bench`` prints them with rich
(:func:`lama_dice.cli.commands.bench.render`); ``python -m tools.regen_docs --only bench``
writes them as Markdown (:func:`markdown`) into ``docs/performance.md``.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

__all__ = ["BASELINE_COLUMNS", "Line", "Table", "blocks", "markdown"]

#: The columns of a section's table.
COLUMNS = ("measure", "per s (wall)", "per CPU s", "note")
#: The columns of the targets table.
TARGET_COLUMNS = ("target", "goal", "ratio", "CPU ratio", "met")


@dataclass
class Table:
    """A titled table: ``rows`` of strings, one per column."""

    title: str
    rows: list[tuple[str, ...]] = field(default_factory=list)
    columns: tuple[str, ...] = COLUMNS

    def add(self, *cells: str) -> None:
        """Append a row."""
        self.rows.append(tuple(cells))


@dataclass
class Line:
    """A line of text: ``kind`` ``"text"``, ``"note"`` (a skipped comparison), ``"error"`` or ``"meta"``."""

    text: str
    kind: str = "text"


Block = Table | Line


def n(x: Any, digits: int = 0) -> str:
    """A number with thousands separators, or ``-`` when missing."""
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "-"
    return f"{x:,.{digits}f}"


def x(r: Any) -> str:
    """A ratio as ``2.50x``, or ``-`` when missing."""
    return "-" if r is None or (isinstance(r, float) and math.isnan(r)) else f"{r:.2f}x"


def _target(r: dict[str, Any]) -> str:
    return f"target ≥ {r['target']:g}x" if "target" in r else ""


def _ratio_rows(t: Table, ratios: dict[str, dict[str, Any]]) -> None:
    for r in ratios.values():
        t.add(f"ratio {r['of']} / {r['over']}", x(r["ratio"]), x(r.get("ratio_cpu")), _target(r))


# ------------------------------------------------------------------------------ sections
def _aec(a: dict[str, Any]) -> list[Block]:
    t = Table(f"AEC env: agent-steps/s, random legal actions ({a['steps_per_run']:,} steps x {a['repeats']} repeats)")
    names = {"lama_env": "lama_dice_v1.env(num_players=2)", "lama_raw": "lama_dice_v1.raw_env(num_players=2)",
             "leduc": "leduc_holdem_v4.env()", "engine": "LamaGame alone (no env)"}
    for k, r in a["results"].items():
        t.add(names.get(k, k), n(r["per_s"]), n(r["per_cpu_s"]), f"{n(r['us_per_unit'], 1)} µs/step")
    _ratio_rows(t, a["ratios"])
    return [t, *(Line(note, "note") for note in a.get("notes", []))]


def _vector(v: dict[str, Any]) -> list[Block]:
    t = Table(f"Vector game (lama_env.vector): agent-steps/s, random legal actions, 2 players "
              f"({v['num_envs']:,} games x {v['vector_steps_per_run']:,} steps x {v['repeats']} repeats)")
    vr, ar = v["results"]["vector"], v["results"]["aec_env"]
    t.add(f"VectorGame({v['num_envs']:,}), NumPy sampler", n(vr["per_s"]), n(vr["per_cpu_s"]),
          f"step() {100 * vr['step_share']:.0f}% of the time: {n(vr['step_only_per_s'])}/s inside it")
    t.add("lama_dice_v1.env(num_players=2), AEC loop", n(ar["per_s"]), n(ar["per_cpu_s"]), "")
    _ratio_rows(t, v["ratios"])
    for r in v["scaling"].values():
        t.add(f"  {r['num_envs']:,} games, {r['num_players']} players", n(r["per_s"]), n(r["per_cpu_s"]),
              f"{n(r['step_only_per_s'])}/s inside step()")
    out: list[Block] = [t]
    if "env" in v:
        out.append(_vector_env(v["env"]))
    tr = v.get("training")
    if tr:
        out += [Line(tr["skipped"], "note")] if "skipped" in tr else [_vector_training(tr)]
    return out


def _vector_env(e: dict[str, Any]) -> Table:
    t = Table(f"Vector env (lama_env.vector_env): learner-steps/s, 2 players vs threshold:0.2, random legal "
              f"learner actions ({e['steps_per_run']:,} vector steps x {e['repeats']} repeats)")
    vr, sr = e["results"]["vector_env"], e["results"]["sync"]
    t.add(f"make_vec(num_envs={e['num_envs']}, vector_entry_point)", n(vr["per_s"]), n(vr["per_cpu_s"]),
          f"step() {100 * vr['step_share']:.0f}% of the time")
    t.add(f"make_vec(num_envs={e['sync_envs']}, sync)", n(sr["per_s"]), n(sr["per_cpu_s"]),
          f"step() {100 * sr['step_share']:.0f}% of the time")
    _ratio_rows(t, e["ratios"])
    return t


def _vector_training(tr: dict[str, Any]) -> Table:
    cfg = tr["config"]
    t = Table(f"MaskablePPO learn(): env-steps/s by env.vec_env, the same PPO settings ({cfg['env']['n_envs']} envs, "
              f"n_steps {cfg['ppo']['n_steps']}, {cfg['total_timesteps']:,} steps x {tr['repeats']} repeats)")
    wide = tr.get("wide_config")
    for k, r in tr["results"].items():
        name = (f"native, {wide['env']['n_envs']} envs x n_steps {wide['ppo']['n_steps']}"
                if k == "native_wide" and wide else k)
        t.add(name, n(r["per_s"]), n(r["per_cpu_s"]),
              f"envs {100 * r['env_share']:.0f}%, PPO update {100 * r['train_share']:.0f}%, rest of the rollout "
              f"{100 * r['rollout_other_share']:.0f}%; {n(r['env_us_per_step'], 1)} µs/env-step in the envs")
    for r in tr["ratios"].values():
        t.add(f"ratio {r['of']} / {r['over']}" + (" (rollouts alone)" if "note" in r else ""), x(r["ratio"]),
              x(r.get("ratio_cpu")), _target(r))
    return t


def _render(r: dict[str, Any]) -> list[Block]:
    t = Table(f"Pictures: frames/s of render_mode=\"rgb_array\" and GIF encoding ({r['frames']:,} random-game "
              f"states, {r['repeats']} repeats)")
    res = r["results"]
    for players in (2, 4, 6):
        k = res.get(f"picture_{players}p")
        if k:
            h, w, _ = k["frame_shape"]
            t.add(f"table picture, {players} players ({w}x{h})", n(k["per_s"]), n(k["per_cpu_s"]),
                  f"{n(k['us_per_unit'], 0)} µs/frame")
    if "env_rgb_array" in res:
        e = res["env_rgb_array"]
        t.add("LamaDice-v1: step + render()", n(e["per_s"]), n(e["per_cpu_s"]),
              f"render adds {n(r['render_us_per_env_step'], 0)} µs/step "
              f"({100 * r['render_share_of_env_step']:.0f}% of a rendered step)")
    if "gif" in res:
        g = res["gif"]
        t.add(f"GIF encoding, 2 players ({r['gif_frames']:,} frames)", n(g["per_s"]), n(g["per_cpu_s"]),
              f"{n(g['us_per_unit'] / 1000, 1)} ms/frame, {n(g['bytes_per_frame'] / 1024, 1)} KiB/frame")
    return [t]


def _evaluate(e: dict[str, Any], sec: dict[str, Any]) -> list[Block]:
    t = Table(f"Evaluation: two-player games/s, threshold:0.2 vs itself ({e['games']:,} games; naive and "
              f"python backend {e['naive_games']:,}; {e['repeats']} repeats)")
    names = {"naive": "naive engine (bench/naive_engine.py)",
             "evaluate": f"evaluate() ({e.get('evaluate_backend')} backend, kernel loaded)",
             "kernel": "batched kernel alone (play_batch)", "python_backend": "evaluate(backend='python')"}
    for k, r in e["results"].items():
        t.add(names.get(k, k), n(r["per_s"]), n(r["per_cpu_s"]), "")
    _ratio_rows(t, e["ratios"])
    if "kernel_load" in sec:
        kl = sec["kernel_load"]
        c = kl["cached"]
        t.add("kernel load, fresh process", "", "",
              f"import {c['import_s']:.2f} s + first call {c['first_call_s']:.2f} s (Numba cache)"
              + (f"; {kl['empty_cache']['first_call_s']:.1f} s with an empty cache (compile)"
                 if "empty_cache" in kl else ""))
    if "one_shot" in sec:
        o = sec["one_shot"]
        t.add(f"one-shot command, {o['games']:,} games", n(o["games_per_s"]), "",
              f"wall {o['wall_s']:.2f} s (start-up and kernel load included): {o['command']}")
    return [t]


def _ppo_inference(pi: dict[str, Any]) -> list[Block]:
    if "skipped" in pi:
        return [Line(pi["skipped"], "note")]
    t = Table(f"Learned policy (untrained MaskablePPO [64, 64]) vs threshold:0.2, scalar backend, "
              f"{pi['games']} games: games/s by chunk_size")
    for r in pi["results"].values():
        t.add(f"chunk_size {r['chunk_size']}", n(r["per_s"]), n(r["per_cpu_s"]),
              f"{r['forward_passes']:,} forward passes for {r['decisions']:,} decisions "
              f"(mean batch {n(r['mean_batch'], 1)})")
    _ratio_rows(t, pi["ratios"])
    return [t]


def _training(tr: dict[str, Any]) -> list[Block]:
    if "skipped" in tr:
        return [Line(tr["skipped"], "note")]
    c = tr["config"]
    t = Table(f"MaskablePPO training: env-steps/s (n_envs {c['n_envs']}, n_steps {c['n_steps']}, "
              f"batch {c['batch_size']}, epochs {c['n_epochs']}, {c['timesteps']:,} steps, [64, 64], "
              f"{tr['repeats']} repeats)")
    names = {"lama": "LamaDice-v1 (2p vs threshold:0.2)", "connect_four": "connect_four_v3 + SB3ActionMaskWrapper"}
    for k, r in tr["results"].items():
        t.add(names.get(k, k), n(r["per_s"]), n(r["per_cpu_s"]),
              f"env {100 * r['env_share']:.0f}% of the time ({n(r['env_us_per_step'], 0)} µs/step), "
              f"train() {100 * r['train_share']:.0f}%, rollouts alone {n(r['rollout_per_s'])}/s")
    _ratio_rows(t, tr["ratios"])
    d = tr.get("diagnosis", {})
    if "logsumexp_us_129_actions" in d:
        a, b = d["logsumexp_us_129_actions"], d["logsumexp_us_7_actions"]
        t.add("train() per env-step", "", "",
              " vs ".join(f"{k} {n(r['train_us_per_step'])} µs" for k, r in tr["results"].items())
              + f"; torch logsumexp, 256 x 129 logits: {n(a['plain'])} µs plain, "
                f"{n(a['masked_-1e8'])} µs masked with -1e8 (256 x 7: {n(b['masked_-1e8'])} µs)")
    return [t]


def _scaling(s: dict[str, Any]) -> list[Block]:
    t = Table(f"Scaling ({s['games']:,} games for the scalar backend; {s['cpu_count']} CPUs)")
    for k, r in s["python_chunk_size"].items():
        t.add(f"python backend, chunk_size {k.split('_')[-1]}", n(r["per_s"]), n(r["per_cpu_s"]), "")
    for k, r in s["kernel_games_per_call"].items():
        t.add(f"batched kernel, {int(k.split('_')[-1]):,} games per call", n(r["per_s"]), n(r["per_cpu_s"]), "")
    for k, r in s["workers"].items():
        t.add(f"python backend, --workers {k.split('_')[-1]}", n(r["per_s"]), n(r["per_cpu_s"]),
              "CPU s: this process only" if k != "workers_1" else "")
    r = s["ratios"]["workers_2_vs_1"]
    t.add("ratio workers 2 / 1", x(r["ratio"]), "", "")
    return [t]


FIRST_USE_COLUMNS = ("fresh process", "cold: wall / CPU s", "warm: wall / CPU s", "note")


def _first_use(f: dict[str, Any]) -> list[Block]:
    cold = f.get("cold_measured", False)
    t = Table("First use: seconds of a fresh process, cold (empty Numba cache: the compile) and warm "
              "(cache filled)" if cold else "First use: seconds of a fresh process, warm (Numba cache filled; "
              "cold not measured: --quick)", columns=FIRST_USE_COLUMNS)

    def cell(r: dict[str, Any] | None) -> str:
        return "-" if r is None else f"{r['wall_s']:.1f} / {r['cpu_s']:.1f}"

    for e in f["results"].values():
        notes = []
        c = e.get("cold", {})
        if "cached_functions" in c:
            notes.append(f"{c['cached_functions']} functions compiled and cached" if c["cached_functions"]
                         else "nothing compiled")
        cli = e["what"].startswith("lama-dice ")
        if cli and c:
            notes.append("the CLI's compile note: " + ("printed" if c["note"] else "not printed"))
        if e["warm"]["note"]:
            notes.append("compile note printed when warm")
        t.add(e["what"], cell(e.get("cold")), cell(e["warm"]), "; ".join(notes))
    return [t]


def _solver(so: dict[str, Any]) -> list[Block]:
    return [Line(so.get("skipped") or f"exact solo solver: {so['seconds']:.2f} s to solve {so['states']:,} "
                                      f"displays (first run {so['first_run_s']:.2f} s)")]


def _memory(m: dict[str, Any]) -> list[Block]:
    return [Line(f"peak memory, {m['games']:,}-game evaluation ({r['backend']} backend, fresh process): "
                 f"max RSS {r['maxrss_after_kib'] / 1024:.0f} MiB ({r['maxrss_before_kib'] / 1024:.0f} "
                 f"MiB before it); Python allocations peak {r['tracemalloc_peak_bytes'] / 2**20:.1f} MiB")
            for r in m.values() if isinstance(r, dict)]


def _pgx(p: dict[str, Any]) -> list[Block]:
    if "skipped" in p:
        return [Line(p["skipped"], "note")]
    from .pgx_speed import table_rows

    title, rows, notes = table_rows(p)
    t = Table(title)
    for row in rows:
        t.add(*row)
    return [t, *(Line(note, "note") for note in notes)]


_SECTIONS: dict[str, Callable[[dict[str, Any], dict[str, Any]], list[Block]]] = {
    "aec": lambda s, _: _aec(s),
    "vector": lambda s, _: _vector(s),
    "pgx": lambda s, _: _pgx(s),
    "render": lambda s, _: _render(s),
    "evaluate": _evaluate,
    "first_use": lambda s, _: _first_use(s),
    "ppo_inference": lambda s, _: _ppo_inference(s),
    "training": lambda s, _: _training(s),
    "scaling": lambda s, _: _scaling(s),
    "solver": lambda s, _: _solver(s),
    "memory": lambda s, _: _memory(s),
}


#: The columns of a ``--baseline`` comparison.
BASELINE_COLUMNS = ("measure", "current per s", "baseline per s", "ratio", "CPU ratio")


def _baseline_blocks(report: dict[str, Any]) -> list[Block]:
    """A ``lama-dice bench --baseline`` report (:func:`lama_dice.bench.baseline.compare`) as blocks."""
    meta = report["meta"]
    t = Table(f"Current code vs baseline ({meta['baseline']}): fresh process per run, alternating, "
              f"{meta['repeats']} repeats; ratio = median of paired current / baseline rates", columns=BASELINE_COLUMNS)
    notes: list[Block] = []
    for name, r in report["probes"].items():
        cur, base = r["current"], r["baseline"]
        t.add(r["what"], n(cur["per_s"], 1 if cur["per_s"] < 100 else 0),
              n(base["per_s"], 1 if base["per_s"] < 100 else 0), x(r["ratio"]), x(r["ratio_cpu"]))
        if "vs_leduc" in cur or "vs_leduc" in base:
            notes.append(Line(f"{name}: vs leduc_holdem_v4 in the same process: current {x(cur.get('vs_leduc'))} "
                              f"({cur.get('env', '-')}), baseline {x(base.get('vs_leduc'))} ({base.get('env', '-')})"))
        if "first_call_s" in cur:
            notes.append(Line(f"{name}: import {cur['import_s']:.2f} s + first call {cur['first_call_s']:.2f} s "
                              f"(current), {base.get('import_s', float('nan')):.2f} s + "
                              f"{base.get('first_call_s', float('nan')):.2f} s (baseline)"))
        for side, d in (("current", cur), ("baseline", base)):
            notes += [Line(f"{name} ({side}): {e}", "error") for e in d.get("errors", [])]
    out: list[Block] = [t, *notes]
    out.append(Line(f"{'quick' if meta['quick'] else 'full'} run, {meta['seconds']:.0f} s; load average "
                    f"{meta['load_average_before']} before, {meta['load_average_after']} after; current code from "
                    f"{meta.get('current_imported_from')}, baseline from {meta.get('baseline_imported_from')}; "
                    f"{meta.get('date_utc', '')}", "meta"))
    return out


def blocks(report: dict[str, Any]) -> list[Block]:
    """The report as blocks: a table per section that ran, the targets, the run's line, failed sections.

    A ``--baseline`` report (its ``probes``) gives its comparison table instead.
    """
    if "probes" in report:
        return _baseline_blocks(report)
    sec, meta = report["sections"], report["meta"]
    out: list[Block] = []
    for name, make in _SECTIONS.items():
        if name in sec:
            out += make(sec[name], sec)
    t = Table("Targets (paired wall-clock ratios, medians; CPU-time ratios beside them)", columns=TARGET_COLUMNS)
    for row in report.get("targets", []):
        met = "-" if row["met"] is None else ("yes" if row["met"] else "no")
        t.add(row["target"], f"≥ {row['goal']:g}x", x(row["ratio"]), x(row.get("ratio_cpu")),
              met if row["met"] is not None else row.get("note", "-"))
    if t.rows:
        out.append(t)
    out.append(Line(f"{'quick' if meta['quick'] else 'full'} run, {meta['seconds']:.0f} s on {meta['cpu_count']} "
                    f"CPUs; load average {meta['load_average_before']} before, {meta['load_average_after']} after "
                    f"(over 1, 5 and 15 minutes); {meta.get('date_utc', '')}, Python {meta['python']}", "meta"))
    out += [Line(f"section {name} failed: {err}", "error") for name, err in report.get("errors", {}).items()]
    return out


def _md_cell(text: str) -> str:
    return text.replace("|", "\\|")


def markdown(report: dict[str, Any]) -> str:
    """The report as Markdown: each table under its title in bold, each line a paragraph."""
    parts = []
    for b in blocks(report):
        if isinstance(b, Table):
            lines = [f"**{b.title}**", "", "| " + " | ".join(b.columns) + " |",
                     "| " + " | ".join("---" for _ in b.columns) + " |"]
            lines += ["| " + " | ".join(_md_cell(c) for c in row) + " |" for row in b.rows]
            parts.append("\n".join(lines))
        else:
            parts.append(b.text[:1].upper() + b.text[1:])
    return "\n\n".join(parts)
