"""Measure lama-dice's speed against baselines, side by side, and print the ratios.

  lama-dice bench                       # the full run: a minute or two (5 at most on a busy machine)
  lama-dice bench --quick               # small sizes: about ten seconds
  lama-dice bench --json bench.json --repeats 5

Three comparisons, each run alternately (A, B, A, B, ...) in one process so
that the machine's load hits both alike, reported as medians and as the
median of the ratios measured within one repeat:

1. AEC env: agent-steps/s of ``lama_dice_v0.env(num_players=2)`` with random
   legal actions vs PettingZoo's ``leduc_holdem_v4`` (same loop, same
   sampler; needs rlcard: ``pip install 'lama-dice[bench]'``, else skipped).
2. Evaluation: full two-player games/s of ``lama-dice evaluate --agents
   threshold:0.2 threshold:0.2`` vs a naive one-game-at-a-time Python
   implementation (bench/naive_engine.py); the compiled kernel's load time
   and the one-shot command's wall time apart; batched inference of a learned
   policy by chunk size.
3. Training: MaskablePPO env-steps/s on LamaDice-v0 vs connect_four_v3
   through PettingZoo's SB3 action-mask wrapper, with each env's share of
   the training time.

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
from pathlib import Path
from typing import Any

from lama_env.errors import LamaDiceError

HELP = "measure speed against baselines (PettingZoo envs, a naive engine) and print the ratios"


class BenchError(LamaDiceError, ValueError):
    """A bad ``lama-dice bench`` argument, or no benchmark suite to run."""


def add_arguments(p: argparse.ArgumentParser) -> None:
    """Add the ``bench`` options to ``p``."""
    p.add_argument("--quick", action="store_true", help="small sizes and one repeat: under a minute")
    p.add_argument("--json", metavar="OUT", default=None,
                   help="also write the results as JSON to OUT ('-' = standard output; the tables then go to stderr)")
    p.add_argument("--repeats", type=int, default=None, metavar="K",
                   help="alternating repeats per comparison (default 5, heavy sections 3; --quick: 1)")
    p.add_argument("--seed", type=int, default=0, metavar="S", help="random seed (default 0)")
    p.add_argument("--only", nargs="+", metavar="SECTION", default=None,
                   help="run only these sections: aec vector render evaluate kernel_load one_shot scaling memory "
                        "solver ppo_inference training")
    p.add_argument("--quiet", action="store_true", help="no progress lines on stderr")


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
    if args.json:
        text = json.dumps(_clean(report), indent=1) + "\n"
        if to_stdout:
            sys.stdout.write(text)
        else:
            try:
                Path(args.json).write_text(text, encoding="utf-8")
            except OSError as e:
                raise BenchError(f"cannot write {args.json}: {e.strerror or e}") from None
            console.print(f"JSON: {args.json}")
    return 1 if report["errors"] else 0


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
def _n(x: Any, digits: int = 0) -> str:
    if x is None or (isinstance(x, float) and x != x):
        return "-"
    return f"{x:,.{digits}f}"


def _x(x: Any) -> str:
    return "-" if x is None or (isinstance(x, float) and x != x) else f"{x:.2f}x"


def _vector_env_tables(console: Any, table: Any, v: dict[str, Any]) -> None:
    """The vector section's env comparison and, if it ran, its training comparison."""
    e = v["env"]
    t = table(f"Vector env (lama_env.vector_env): learner-steps/s, 2 players vs threshold:0.2, random legal "
              f"learner actions ({e['steps_per_run']:,} vector steps x {e['repeats']} repeats)")
    vr, sr = e["results"]["vector_env"], e["results"]["sync"]
    t.add_row(f"make_vec(num_envs={e['num_envs']}, vector_entry_point)", _n(vr["per_s"]), _n(vr["per_cpu_s"]),
              f"step() {100 * vr['step_share']:.0f}% of the time")
    t.add_row(f"make_vec(num_envs={e['sync_envs']}, sync)", _n(sr["per_s"]), _n(sr["per_cpu_s"]),
              f"step() {100 * sr['step_share']:.0f}% of the time")
    r = e["ratios"]["vector_env_vs_sync"]
    t.add_row("ratio vector_env / sync", _x(r["ratio"]), _x(r["ratio_cpu"]), f"target ≥ {r['target']:g}x")
    console.print(t)
    tr = v.get("training")
    if not tr:
        return
    if "skipped" in tr:
        console.print(f"[yellow]{tr['skipped']}[/yellow]")
        return
    cfg = tr["config"]
    t = table(f"MaskablePPO learn(): env-steps/s by env.vec_env ({cfg['env']['n_envs']} envs, n_steps "
              f"{cfg['ppo']['n_steps']}, {cfg['total_timesteps']:,} steps x {tr['repeats']} repeats)")
    wide = tr.get("wide_config")
    for k, r in tr["results"].items():
        name = (f"native, {wide['env']['n_envs']} envs x n_steps {wide['ppo']['n_steps']}"
                if k == "native_wide" and wide else k)
        t.add_row(name, _n(r["per_s"]), _n(r["per_cpu_s"]),
                  f"envs {100 * r['env_share']:.0f}%, PPO update {100 * r['train_share']:.0f}%, rest of the rollout "
                  f"{100 * r['rollout_other_share']:.0f}%; {_n(r['env_us_per_step'], 1)} µs/env-step in the envs")
    for r in tr["ratios"].values():
        t.add_row(f"ratio {r['of']} / {r['over']}" + (" (rollouts alone)" if "note" in r else ""), _x(r["ratio"]),
                  _x(r.get("ratio_cpu")), "")
    console.print(t)


def render(console: Any, report: dict[str, Any]) -> None:
    """Print the report's tables (one per section that ran) and the targets."""
    from rich import box
    from rich.table import Table

    sec = report["sections"]
    meta = report["meta"]

    def table(title: str) -> Table:
        t = Table(title=title, title_justify="left", box=box.SIMPLE_HEAD, pad_edge=False)
        t.add_column("measure")
        t.add_column("per s (wall)", justify="right")
        t.add_column("per CPU s", justify="right")
        t.add_column("note", overflow="fold")
        return t

    if "aec" in sec:
        a = sec["aec"]
        t = table(f"1. AEC env: agent-steps/s, random legal actions ({a['steps_per_run']:,} steps x "
                  f"{a['repeats']} repeats)")
        names = {"lama_env": "lama_dice_v0.env(num_players=2)", "lama_raw": "lama_dice_v0.raw_env(num_players=2)",
                 "leduc": "leduc_holdem_v4.env()", "engine": "LamaGame alone (no env)"}
        for k, r in a["results"].items():
            t.add_row(names.get(k, k), _n(r["per_s"]), _n(r["per_cpu_s"]), f"{_n(r['us_per_unit'], 1)} µs/step")
        for r in a["ratios"].values():
            t.add_row(f"ratio {r['of']} / {r['over']}", _x(r["ratio"]), _x(r["ratio_cpu"]),
                      f"target ≥ {r['target']:g}x" if "target" in r else "")
        console.print(t)
        for note in a.get("notes", []):
            console.print(f"[yellow]{note}[/yellow]")
    if "vector" in sec:
        v = sec["vector"]
        t = table(f"Vector game (lama_env.vector): agent-steps/s, random legal actions, 2 players "
                  f"({v['num_envs']:,} games x {v['vector_steps_per_run']:,} steps x {v['repeats']} repeats)")
        vr, ar = v["results"]["vector"], v["results"]["aec_env"]
        t.add_row(f"VectorGame({v['num_envs']:,}), NumPy sampler", _n(vr["per_s"]), _n(vr["per_cpu_s"]),
                  f"step() {100 * vr['step_share']:.0f}% of the time: {_n(vr['step_only_per_s'])}/s inside it")
        t.add_row("lama_dice_v0.env(num_players=2), AEC loop", _n(ar["per_s"]), _n(ar["per_cpu_s"]), "")
        r = v["ratios"]["vector_vs_aec"]
        t.add_row("ratio vector / aec_env", _x(r["ratio"]), _x(r["ratio_cpu"]), f"target ≥ {r['target']:g}x")
        for r in v["scaling"].values():
            t.add_row(f"  {r['num_envs']:,} games, {r['num_players']} players", _n(r["per_s"]), _n(r["per_cpu_s"]),
                      f"{_n(r['step_only_per_s'])}/s inside step()")
        console.print(t)
        if "env" in v:
            _vector_env_tables(console, table, v)
    if "render" in sec:
        _render_table(console, table, sec["render"])
    if "evaluate" in sec:
        e = sec["evaluate"]
        t = table(f"2. Evaluation: two-player games/s, threshold:0.2 vs itself ({e['games']:,} games; naive and "
                  f"python backend {e['naive_games']:,}; {e['repeats']} repeats)")
        names = {"naive": "naive engine (bench/naive_engine.py)",
                 "evaluate": f"evaluate() ({e.get('evaluate_backend')} backend, kernel loaded)",
                 "kernel": "batched kernel alone (play_batch)", "python_backend": "evaluate(backend='python')"}
        for k, r in e["results"].items():
            t.add_row(names.get(k, k), _n(r["per_s"]), _n(r["per_cpu_s"]), "")
        for r in e["ratios"].values():
            t.add_row(f"ratio {r['of']} / {r['over']}", _x(r["ratio"]), _x(r["ratio_cpu"]),
                      f"target ≥ {r['target']:g}x" if "target" in r else "")
        if "kernel_load" in sec:
            kl = sec["kernel_load"]
            c = kl["cached"]
            t.add_row("kernel load, fresh process", "", "",
                      f"import {c['import_s']:.2f} s + first call {c['first_call_s']:.2f} s (Numba cache)"
                      + (f"; {kl['empty_cache']['first_call_s']:.1f} s with an empty cache (compile)"
                         if "empty_cache" in kl else ""))
        if "one_shot" in sec:
            o = sec["one_shot"]
            t.add_row(f"one-shot command, {o['games']:,} games", _n(o["games_per_s"]), "",
                      f"wall {o['wall_s']:.2f} s (start-up and kernel load included): {o['command']}")
        console.print(t)
    if "ppo_inference" in sec:
        pi = sec["ppo_inference"]
        if "skipped" in pi:
            console.print(f"[yellow]{pi['skipped']}[/yellow]")
        else:
            t = table(f"Learned policy (untrained MaskablePPO [64, 64]) vs threshold:0.2, scalar backend, "
                      f"{pi['games']} games: games/s by chunk_size")
            for r in pi["results"].values():
                t.add_row(f"chunk_size {r['chunk_size']}", _n(r["per_s"]), _n(r["per_cpu_s"]),
                          f"{r['forward_passes']:,} forward passes for {r['decisions']:,} decisions "
                          f"(mean batch {_n(r['mean_batch'], 1)})")
            for r in pi["ratios"].values():
                t.add_row(f"ratio {r['of']} / {r['over']}", _x(r["ratio"]), _x(r["ratio_cpu"]), "")
            console.print(t)
    if "training" in sec:
        tr = sec["training"]
        if "skipped" in tr:
            console.print(f"[yellow]{tr['skipped']}[/yellow]")
        else:
            c = tr["config"]
            t = table(f"3. MaskablePPO training: env-steps/s (n_envs {c['n_envs']}, n_steps {c['n_steps']}, "
                      f"batch {c['batch_size']}, epochs {c['n_epochs']}, {c['timesteps']:,} steps, [64, 64], "
                      f"{tr['repeats']} repeats)")
            names = {"lama": "LamaDice-v0 (2p vs threshold:0.2)",
                     "connect_four": "connect_four_v3 + SB3ActionMaskWrapper"}
            for k, r in tr["results"].items():
                t.add_row(names.get(k, k), _n(r["per_s"]), _n(r["per_cpu_s"]),
                          f"env {100 * r['env_share']:.0f}% of the time ({_n(r['env_us_per_step'], 0)} µs/step), "
                          f"train() {100 * r['train_share']:.0f}%, rollouts alone {_n(r['rollout_per_s'])}/s")
            r = tr["ratios"]["lama_vs_connect_four"]
            t.add_row("ratio lama / connect_four", _x(r["ratio"]), _x(r["ratio_cpu"]), f"target ≥ {r['target']:g}x")
            r = tr["ratios"]["rollout_lama_vs_connect_four"]
            t.add_row("ratio, rollout collection alone", _x(r["ratio"]), "", "")
            d = tr.get("diagnosis", {})
            if "logsumexp_us_129_actions" in d:
                a, b = d["logsumexp_us_129_actions"], d["logsumexp_us_7_actions"]
                t.add_row("train() per env-step", "", "",
                          " vs ".join(f"{k} {_n(r['train_us_per_step'])} µs" for k, r in tr["results"].items())
                          + f"; torch logsumexp, 256 x 129 logits: {_n(a['plain'])} µs plain, "
                            f"{_n(a['masked_-1e8'])} µs masked with -1e8 (256 x 7: {_n(b['masked_-1e8'])} µs)")
            console.print(t)
    if "scaling" in sec:
        s = sec["scaling"]
        t = table(f"Scaling ({s['games']:,} games for the scalar backend; {s['cpu_count']} CPUs)")
        for k, r in s["python_chunk_size"].items():
            t.add_row(f"python backend, chunk_size {k.split('_')[-1]}", _n(r["per_s"]), _n(r["per_cpu_s"]), "")
        for k, r in s["kernel_games_per_call"].items():
            t.add_row(f"batched kernel, {int(k.split('_')[-1]):,} games per call", _n(r["per_s"]),
                      _n(r["per_cpu_s"]), "")
        for k, r in s["workers"].items():
            t.add_row(f"python backend, --workers {k.split('_')[-1]}", _n(r["per_s"]), _n(r["per_cpu_s"]),
                      "CPU s: this process only" if k != "workers_1" else "")
        r = s["ratios"]["workers_2_vs_1"]
        t.add_row("ratio workers 2 / 1", _x(r["ratio"]), "", "")
        console.print(t)
    other = []
    if "solver" in sec:
        so = sec["solver"]
        other.append(so.get("skipped") or f"exact solo solver: {so['seconds']:.2f} s to solve {so['states']:,} "
                                          f"displays (first run {so['first_run_s']:.2f} s)")
    if "memory" in sec:
        m = sec["memory"]
        for r in m.values():
            if isinstance(r, dict):
                other.append(f"peak memory, {m['games']:,}-game evaluation ({r['backend']} backend, fresh process): "
                             f"max RSS {r['maxrss_after_kib'] / 1024:.0f} MiB ({r['maxrss_before_kib'] / 1024:.0f} "
                             f"MiB before it); Python allocations peak {r['tracemalloc_peak_bytes'] / 2**20:.1f} MiB")
    for line in other:
        console.print(line)

    t = Table(title="Targets (paired wall-clock ratios, medians; CPU-time ratios beside them)", title_justify="left",
              box=box.SIMPLE_HEAD, pad_edge=False)
    t.add_column("target")
    t.add_column("goal", justify="right")
    t.add_column("ratio", justify="right")
    t.add_column("CPU ratio", justify="right")
    t.add_column("met")
    for row in report["targets"]:
        met = "-" if row["met"] is None else ("yes" if row["met"] else "[red]no[/red]")
        t.add_row(row["target"], f"≥ {row['goal']:g}x", _x(row["ratio"]), _x(row.get("ratio_cpu")),
                  met if row["met"] is not None else row.get("note", "-"))
    console.print(t)
    console.print(f"[dim]{'quick' if meta['quick'] else 'full'} run, {meta['seconds']:.0f} s; load average "
                  f"{meta['load_average_before']} before, {meta['load_average_after']} after; "
                  f"{meta['cpu_count']} CPUs; Python {meta['python']}[/dim]")
    for name, err in report["errors"].items():
        console.print(f"[red]section {name} failed: {err}[/red]")


def _render_table(console: Any, table: Any, r: dict[str, Any]) -> None:
    """The ``render`` section: frames/s of the table picture, of an env rendering every step, of GIF encoding."""
    t = table(f"Pictures: frames/s of render_mode=\"rgb_array\" and GIF encoding ({r['frames']:,} random-game states, "
              f"{r['repeats']} repeats)")
    res = r["results"]
    for n in (2, 4, 6):
        k = res.get(f"picture_{n}p")
        if k:
            h, w, _ = k["frame_shape"]
            t.add_row(f"table picture, {n} players ({w}x{h})", _n(k["per_s"]), _n(k["per_cpu_s"]),
                      f"{_n(k['us_per_unit'], 0)} µs/frame")
    if "env_rgb_array" in res:
        e = res["env_rgb_array"]
        t.add_row("LamaDice-v0: step + render()", _n(e["per_s"]), _n(e["per_cpu_s"]),
                  f"render adds {_n(r['render_us_per_env_step'], 0)} µs/step "
                  f"({100 * r['render_share_of_env_step']:.0f}% of a rendered step)")
    if "gif" in res:
        g = res["gif"]
        t.add_row(f"GIF encoding, 2 players ({r['gif_frames']:,} frames)", _n(g["per_s"]), _n(g["per_cpu_s"]),
                  f"{_n(g['us_per_unit'] / 1000, 1)} ms/frame, {_n(g['bytes_per_frame'] / 1024, 1)} KiB/frame")
    console.print(t)
