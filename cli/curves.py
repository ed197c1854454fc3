"""Learning curves of a run, as a PNG (for READMEs and reports).

    lama-dice curves runs/ppo_2p-20261130-101500 --out curves.png
    lama-dice curves runs/ppo_2p_fast --evaluate lookahead --games 2000 --out time.png --json time.json

From the run's TensorBoard events (:func:`plot_curves`): against training
steps, each evaluation opponent's win rate with its 95% Wilson band
(``eval/OPPONENT/win_rate``, ``..._ci_low``, ``..._ci_high``; solo runs: points
per round of the learner and of the baselines), and the training episodes'
win rate or points per round (``game/...``).

From the run's checkpoints (``--evaluate``, :func:`checkpoint_curve`): every
``checkpoints/step-*.zip`` and ``final.zip`` is evaluated afterwards against
the given opponents (the same games for each checkpoint: one seed), and the
win rates are plotted against the wall time of training each checkpoint's
sidecar records (``train_seconds``) and against steps.  A run that evaluates
nothing while it trains (the fast configs) gets its curve this way, and its
training time is not inflated by evaluations.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from lama_dice.atomic import atomic_path
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


def spec_names(run_dir: str | os.PathLike) -> dict[str, str]:
    """The evaluation opponents' specs by their TensorBoard names (``threshold_0.2`` -> ``threshold:0.2``).

    From the run folder's ``config.yaml`` (``eval.opponents``); empty when there is none to read.
    """
    import yaml

    from lama_dice.train.callbacks import tag_of

    run = Path(run_dir)
    for config in (run / "config.yaml", run.parent / "config.yaml"):
        if config.is_file():
            try:
                specs = ((yaml.safe_load(config.read_text(encoding="utf-8")) or {}).get("eval") or {}).get("opponents")
            except (OSError, yaml.YAMLError, AttributeError):
                return {}
            return {tag_of(str(s)): str(s) for s in specs or ()}
    return {}


def _no_data(ax: Any, note: str) -> None:
    """Say in an empty panel why it is empty (no ticks to read a scale from)."""
    ax.text(0.5, 0.5, note, transform=ax.transAxes, ha="center", va="center", color="0.35", wrap=True)
    ax.set_xticks([])
    ax.set_yticks([])


def _millions(steps: Sequence[int]) -> list[float]:
    return [s / 1e6 for s in steps]


def plot_curves(run_dir: str | os.PathLike, out: str | os.PathLike, title: str | None = None) -> Path:
    """Save the learning curves of ``run_dir`` (:func:`curves_figure`) to ``out`` (PNG, or another format by suffix)."""
    out = Path(out)
    fig = curves_figure(run_dir, title)
    with atomic_path(out) as tmp:  # a full disk or a kill leaves the old file (or none), never half of one
        fig.savefig(tmp, dpi=110)
    return out


def curves_figure(run_dir: str | os.PathLike, title: str | None = None) -> Any:
    """The learning curves of ``run_dir`` as a matplotlib ``Figure``: evaluations, then training episodes.

    Steps are in millions (no offset label beside the axis label); the opponents are named by
    their specs (the run's ``config.yaml``); a panel with no data says so.
    """
    from matplotlib.figure import Figure

    sc = read_scalars(run_dir)
    names = spec_names(run_dir)
    evals = sorted({t.split("/")[1] for t in sc if t.startswith("eval/") and t.endswith("/win_rate")})
    solo = "eval/solo/points_per_round" in sc
    fig = Figure(figsize=(10, 4), layout="constrained")
    ax1, ax2 = fig.subplots(1, 2)
    if solo:
        for t in sorted(x for x in sc if x.startswith("eval/") and x.endswith("/points_per_round")):
            steps, vals = sc[t]
            name = t.split("/")[1].replace("baseline_", "")
            ax1.plot(_millions(steps), vals, marker="o", ms=3, label=names.get(name, name))
        ax1.set_ylabel("points per round (fewer is better)")
        ax1.set_title("evaluation: solo points per round")
    else:
        for name in evals:
            steps, vals = sc[f"eval/{name}/win_rate"]
            line = ax1.plot(_millions(steps), vals, marker="o", ms=3, label=f"vs {names.get(name, name)}")[0]
            lo, hi = sc.get(f"eval/{name}/win_rate_ci_low"), sc.get(f"eval/{name}/win_rate_ci_high")
            if lo and hi and lo[0] == steps and hi[0] == steps:
                ax1.fill_between(_millions(steps), lo[1], hi[1], color=line.get_color(), alpha=0.2)
        ax1.set_ylabel("learner win rate (95% Wilson band)")
        ax1.set_title("evaluation against fixed opponents")
    ax1.set_xlabel("training steps (millions)")
    ax1.grid(alpha=0.3)
    if ax1.lines:
        ax1.legend()
    else:
        _no_data(ax1, "no evaluation in this run's events\n(a run with eval.every: 0 logs none:\n"
                      "lama-dice curves RUN --evaluate SPEC\nplots its checkpoints)")
    tag = "game/points_per_round" if solo else "game/win_rate"
    if tag in sc:
        steps, vals = sc[tag]
        ax2.plot(_millions(steps), vals, lw=1)
    else:
        _no_data(ax2, f"no {tag} in this run's events")
    ax2.set_title(f"training episodes: {tag.split('/')[1].replace('_', ' ')}")
    ax2.set_xlabel("training steps (millions)")
    ax2.grid(alpha=0.3)
    if title:
        fig.suptitle(title)
    return fig


# ---------------------------------------------------------------------------
# curves from the checkpoints, evaluated afterwards

def run_checkpoints(run_dir: str | os.PathLike) -> list[Path]:
    """The run's periodic checkpoints in step order, then ``final.zip`` (if any).

    Raises:
        CurvesError: the run has no checkpoints.
    """
    run = Path(run_dir)
    found = sorted((run / "checkpoints").glob("step-*.zip"))
    if (run / "final.zip").is_file():
        found.append(run / "final.zip")
    if not found:
        raise CurvesError(f"no checkpoints in {run} (checkpoints/step-*.zip, final.zip)")
    return found


def checkpoint_curve(run_dir: str | os.PathLike, opponents: Sequence[str], games: int, seed: int = 0,
                     workers: int = 1, progress: Callable[[str], None] | None = None) -> dict[str, Any]:
    """Evaluate every checkpoint of ``run_dir`` against each of ``opponents`` (all seats but the learner's).

    Returns:
        A JSON-ready dict: ``run``, ``opponents``, ``games``, ``seed``, ``streams`` (``"compiled"``: the
        evaluations' streams, the only ones since 0.2.0) and ``points``, one per
        checkpoint: ``checkpoint``, ``timesteps``, ``train_seconds`` (None if its sidecar has
        none) and per opponent ``win_rate`` with ``win_rate_ci95`` (solo: ``points_per_round``
        with ``points_per_round_ci95``).

    Raises:
        CurvesError: no checkpoints; lama_env.errors.LamaDiceError: a checkpoint or spec does not load.
    """
    from lama_dice.agents.ppo import PPOPolicy
    from lama_dice.evaluation.evaluate import evaluate

    points = []
    for ckpt in run_checkpoints(run_dir):
        learner = PPOPolicy(ckpt)
        side = learner.sidecar or {}
        n = learner.num_players
        point: dict[str, Any] = {"checkpoint": ckpt.name, "timesteps": side.get("timesteps"),
                                 "train_seconds": side.get("train_seconds"), "results": {}}
        for opp in opponents:
            res = evaluate([learner, *([opp] * (n - 1))], num_players=n, games=games, seed=seed, workers=workers)
            a = res.agents[0]
            if n == 1:
                point["results"][opp] = {"points_per_round": a.mean_points_per_round,
                                         "points_per_round_ci95": list(a.points_per_round_ci95)}
            else:
                point["results"][opp] = {"win_rate": a.win_rate, "win_rate_ci95": list(a.win_rate_ci95)}
        points.append(point)
        if progress is not None:
            progress(_point_line(point))
    return {"run": str(run_dir), "opponents": list(opponents), "games": games, "seed": seed, "streams": "compiled",
            "points": points}


def _point_line(point: dict[str, Any]) -> str:
    secs = point["train_seconds"]
    where = f"{point['timesteps']:,} steps" + (f", {secs:,.0f} s" if secs is not None else "")
    parts = []
    for opp, r in point["results"].items():
        if "win_rate" in r:
            lo, hi = r["win_rate_ci95"]
            parts.append(f"vs {opp} {100 * r['win_rate']:.1f}% [{100 * lo:.1f}, {100 * hi:.1f}]")
        else:
            lo, hi = r["points_per_round_ci95"]
            parts.append(f"{opp}: {r['points_per_round']:.2f} points/round [{lo:.2f}, {hi:.2f}]")
    return f"{point['checkpoint']} ({where}): " + " | ".join(parts)


def plot_checkpoint_curve(data: dict[str, Any], out: str | os.PathLike, title: str | None = None,
                          goal: float | None = None) -> Path:
    """Plot :func:`checkpoint_curve`'s result: win rates (95% bands) against wall time and against steps.

    ``goal``: a win rate to draw as a dashed line (e.g. 0.5).
    """
    from matplotlib.figure import Figure

    pts = data["points"]
    fig = Figure(figsize=(10, 4), layout="constrained")
    ax_t, ax_s = fig.subplots(1, 2)
    solo = any("points_per_round" in r for p in pts for r in p["results"].values())
    key = "points_per_round" if solo else "win_rate"
    scale = 1.0 if solo else 100.0
    timed = [p for p in pts if p["train_seconds"] is not None]
    for ax, use, xs_of, label in ((ax_t, timed, lambda p: p["train_seconds"] / 60, "minutes of training (wall)"),
                                  (ax_s, pts, lambda p: p["timesteps"] / 1e6, "training steps (millions)")):
        for opp in data["opponents"]:
            xs = [xs_of(p) for p in use]
            ys = [scale * p["results"][opp][key] for p in use]
            lo = [scale * p["results"][opp][f"{key}_ci95"][0] for p in use]
            hi = [scale * p["results"][opp][f"{key}_ci95"][1] for p in use]
            line = ax.plot(xs, ys, marker="o", ms=3, label=f"vs {opp}" if not solo else opp)[0]
            ax.fill_between(xs, lo, hi, color=line.get_color(), alpha=0.2)
        if not use:
            _no_data(ax, "no checkpoint of this run records\nits training time (train_seconds)")
            ax.set_xlabel(label)
            continue
        if goal is not None:
            ax.axhline(scale * goal, color="grey", ls="--", lw=1)
        ax.set_xlabel(label)
        ax.set_ylabel("points per round (fewer is better)" if solo else "learner win rate, % (95% Wilson band)")
        ax.grid(alpha=0.3)
        if ax.lines:
            ax.legend()
    ax_t.set_title("against wall time")
    ax_s.set_title("against steps")
    fig.suptitle(title or f"{data['run']}: checkpoints evaluated over {data['games']:,} games each (seed "
                          f"{data['seed']})")
    out = Path(out)
    with atomic_path(out) as tmp:
        fig.savefig(tmp, dpi=110)
    return out
