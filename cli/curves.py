"""Learning curves from a run's TensorBoard events, as a PNG (for READMEs and reports).

    lama-dice curves runs/ppo_2p-20261130-101500 --out curves.png

Plots, against training steps, each evaluation opponent's win rate with its
95% Wilson band (``eval/OPPONENT/win_rate``, ``..._ci_low``, ``..._ci_high``;
solo runs: points per round of the learner and of the baselines), and the
training episodes' win rate or points per round (``game/...``).
"""

from __future__ import annotations

import os
from pathlib import Path

from lama_env.errors import LamaDiceError


class CurvesError(LamaDiceError):
    """No TensorBoard events to plot."""


def read_scalars(run_dir: str | os.PathLike) -> dict[str, tuple[list[int], list[float]]]:
    """Every scalar of ``RUN/tb`` (or of the folder itself): tag -> (steps, values), steps increasing."""
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    run = Path(run_dir)
    tb = run / "tb" if (run / "tb").is_dir() else run
    if not tb.is_dir() or not any(tb.glob("events.out.tfevents.*")):
        raise CurvesError(f"no TensorBoard events in {tb}")
    merged: dict[str, dict[int, float]] = {}
    for f in sorted(tb.glob("events.out.tfevents.*")):  # a resumed run has several files
        ea = EventAccumulator(str(f), size_guidance={"scalars": 0})
        ea.Reload()
        for tag in ea.Tags()["scalars"]:
            for e in ea.Scalars(tag):
                merged.setdefault(tag, {})[e.step] = e.value
    return {tag: (sorted(d), [d[k] for k in sorted(d)]) for tag, d in merged.items()}


def plot_curves(run_dir: str | os.PathLike, out: str | os.PathLike, title: str | None = None) -> Path:
    """Save the learning curves of ``run_dir`` to ``out`` (PNG or any format matplotlib knows)."""
    from matplotlib.figure import Figure

    sc = read_scalars(run_dir)
    evals = sorted({t.split("/")[1] for t in sc if t.startswith("eval/") and t.endswith("/win_rate")})
    solo = "eval/solo/points_per_round" in sc
    fig = Figure(figsize=(10, 4), layout="constrained")
    ax1, ax2 = fig.subplots(1, 2)
    if solo:
        for t in sorted(x for x in sc if x.startswith("eval/") and x.endswith("/points_per_round")):
            steps, vals = sc[t]
            ax1.plot(steps, vals, marker="o", ms=3, label=t.split("/")[1].replace("baseline_", ""))
        ax1.set_ylabel("points per round (fewer is better)")
        ax1.set_title("evaluation: solo points per round")
    else:
        for name in evals:
            steps, vals = sc[f"eval/{name}/win_rate"]
            line = ax1.plot(steps, vals, marker="o", ms=3, label=f"vs {name}")[0]
            lo, hi = sc.get(f"eval/{name}/win_rate_ci_low"), sc.get(f"eval/{name}/win_rate_ci_high")
            if lo and hi and lo[0] == steps and hi[0] == steps:
                ax1.fill_between(steps, lo[1], hi[1], color=line.get_color(), alpha=0.2)
        ax1.set_ylabel("learner win rate (95% Wilson band)")
        ax1.set_title("evaluation against fixed opponents")
    ax1.set_xlabel("training steps")
    ax1.grid(alpha=0.3)
    if ax1.lines:
        ax1.legend()
    tag = "game/points_per_round" if solo else "game/win_rate"
    if tag in sc:
        steps, vals = sc[tag]
        ax2.plot(steps, vals, lw=1)
    ax2.set_title(f"training episodes: {tag.split('/')[1].replace('_', ' ')}")
    ax2.set_xlabel("training steps")
    ax2.grid(alpha=0.3)
    if title:
        fig.suptitle(title)
    out = Path(out)
    fig.savefig(out, dpi=110)
    return out
