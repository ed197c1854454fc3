"""Stable-Baselines3 callbacks of the trainer.

* :class:`GameStatsCallback`: the game's own scalars from the training
  episodes (``game/*``: win rate, points per round, bust / quit / went-out
  rates per round, rounds and steps per episode), logged once per rollout.
* :class:`EvalCallback`: every ``eval.every`` steps, plays the learner
  (deterministic) against each evaluation opponent through
  :func:`lama_dice.evaluation.evaluate.evaluate` and logs ``eval/<opponent>/*`` (win rate and
  its 95% interval, points per round, bust / quit / went-out rates); keeps
  ``best.zip`` (the best evaluation so far) and appends every evaluation to
  ``evaluations.jsonl``.
* :class:`CheckpointCallback`: ``checkpoints/step-<N>.zip`` every
  ``checkpoint.every`` steps.
* :class:`SelfPlayCallback`: adds a snapshot to the self-play pool every
  ``selfplay.snapshot_every`` steps.

Every checkpoint written here has its JSON sidecar (:func:`lama_dice.agents.ppo.write_sidecar`).
All periods are in learner steps (``model.num_timesteps``) and continue
across a resumed run.
"""

from __future__ import annotations

import json
import math
import os
import re
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TextIO

import numpy as np
from stable_baselines3.common.callbacks import BaseCallback

from lama_dice.agents.ppo import PPOPolicy, write_sidecar
from lama_env.rules import RulesConfig

from .selfplay import SnapshotPool


class TrainClock:
    """Seconds of learning so far: this session's ``learn()`` plus the run's earlier sessions.

    Every checkpoint's sidecar carries the reading as ``train_seconds`` (wall time of
    ``learn()``, rollouts and updates, periodic evaluations included), so that a
    run's checkpoints can be put on a curve against wall time
    (``lama-dice curves RUN --evaluate OPPONENT``).
    """

    def __init__(self, offset: float = 0.0) -> None:
        """Start at ``offset`` seconds (a resumed run: its checkpoint's ``train_seconds``)."""
        self.offset = float(offset)
        self._t0: float | None = None

    def start(self) -> None:
        """Start counting (when ``learn()`` begins)."""
        self._t0 = time.perf_counter()

    def __call__(self) -> float:
        """The seconds so far (``offset`` before :meth:`start`)."""
        return self.offset + (time.perf_counter() - self._t0 if self._t0 is not None else 0.0)


def save_checkpoint(model: Any, path: str | os.PathLike, sidecar: dict[str, Any],
                    clock: TrainClock | None = None) -> Path:
    """Save ``model`` to ``path`` with its sidecar; the zip appears atomically (written, then renamed).

    With a ``clock`` the sidecar also records ``train_seconds``.
    """
    from lama_dice.atomic import atomic_path

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with atomic_path(path) as tmp:  # a full disk or a kill leaves the old checkpoint, no partial zip
        model.save(tmp)
        extra = dict(sidecar, train_seconds=round(clock(), 1)) if clock is not None else sidecar
        write_sidecar(path, timesteps=int(model.num_timesteps), policy=model.policy, **extra)
    return path


class _Periodic(BaseCallback):
    """Runs :meth:`_fire` whenever ``num_timesteps`` passes a multiple of ``every``."""

    def __init__(self, every: int) -> None:
        super().__init__()
        self.every = int(every)
        self._next = math.inf

    def _on_training_start(self) -> None:
        if self.every > 0:
            self._next = (self.num_timesteps // self.every + 1) * self.every

    def _on_step(self) -> bool:
        if self.num_timesteps >= self._next:
            self._next = (self.num_timesteps // self.every + 1) * self.every
            self._fire()
        return True

    def _fire(self) -> None:
        raise NotImplementedError


# ---------------------------------------------------------------------------
# game scalars from the training episodes

class GameStatsCallback(BaseCallback):
    """Log the game's scalars of the episodes finished during each rollout (``game/*``).

    Reads ``info["episode_stats"]`` of finished episodes (the Gymnasium env's
    ``win``, ``rounds``, ``points_per_round``, ``final_points``, ``busts``,
    ``quits``, ``went_out``) and ``info["episode"]["l"]`` (VecMonitor).
    """

    def __init__(self, num_players: int) -> None:
        """A callback for a game of ``num_players`` players."""
        super().__init__()
        self.num_players = num_players
        self._episodes: list[dict[str, Any]] = []
        self._lengths: list[int] = []

    def _on_step(self) -> bool:
        for done, info in zip(self.locals["dones"], self.locals["infos"], strict=True):
            if not done:
                continue
            stats = info.get("episode_stats")
            if stats is not None:
                self._episodes.append(stats)
            ep = info.get("episode")
            if ep is not None:
                self._lengths.append(int(ep["l"]))
        return True

    def _on_rollout_end(self) -> None:
        for key, value in summarize_episodes(self._episodes, self._lengths, self.num_players).items():
            self.logger.record(f"game/{key}", value)
        self._episodes.clear()
        self._lengths.clear()


def summarize_episodes(episodes: Sequence[dict[str, Any]], lengths: Sequence[int],
                       num_players: int) -> dict[str, float]:
    """Means over finished episodes: win rate, points per round, per-round rates, lengths."""
    out: dict[str, float] = {}
    if lengths:
        out["episode_length"] = float(np.mean(lengths))
    if not episodes:
        return out
    rounds = sum(int(e.get("rounds", 0)) for e in episodes)
    out["episodes"] = float(len(episodes))
    out["rounds_per_episode"] = rounds / len(episodes)
    if num_players > 1:
        out["win_rate"] = float(np.mean([float(e["win"]) for e in episodes if e.get("win") is not None]))
    ppr = [float(e["points_per_round"]) for e in episodes if e.get("points_per_round") is not None]
    if ppr:
        # weight by rounds: total points over total rounds
        w = [int(e.get("rounds", 1)) for e in episodes if e.get("points_per_round") is not None]
        out["points_per_round"] = float(np.average(ppr, weights=w)) if sum(w) else float(np.mean(ppr))
    finals = [float(e["final_points"]) for e in episodes if e.get("final_points") is not None]
    if finals:
        out["final_points"] = float(np.mean(finals))
    if rounds:
        for key, name in (("busts", "bust_rate"), ("quits", "quit_rate"), ("went_out", "went_out_rate")):
            vals = [e.get(key) for e in episodes]
            if all(v is not None for v in vals):
                out[name] = float(sum(int(v) for v in vals if v is not None)) / rounds  # `if v is not None`: for mypy
    return out


# ---------------------------------------------------------------------------
# periodic evaluation through the evaluation harness

def tag_of(spec: str) -> str:
    """A TensorBoard-safe name for an agent spec (``threshold:20`` -> ``threshold_20``)."""
    return re.sub(r"[^A-Za-z0-9_.\-]+", "_", spec).strip("_") or "agent"


def evaluate_learner(learner: Any, opponents: Sequence[str], num_players: int, rules: RulesConfig,
                     games: int, seed: int, workers: int = 1,
                     progress: bool | Callable[[int, int], None] = False) -> dict[str, dict[str, Any]]:
    """Evaluate ``learner`` (a Policy) against each opponent spec with :func:`lama_dice.evaluation.evaluate.evaluate`.

    With two or more players the learner takes one seat and the opponent every
    other seat (seats rotate).  Solo (one player): the learner plays alone
    (key ``"solo"``), and each spec of ``opponents`` is a baseline played alone
    for comparison (key = its spec).

    Returns:
        ``{key: AgentStats.to_json() of the learner (or baseline), plus "backend"}``.
    """
    from lama_dice.evaluation import evaluate

    out: dict[str, dict[str, Any]] = {}
    if num_players == 1:
        tables: list[tuple[str, list[Any]]] = [("solo", [learner])] + [(s, [s]) for s in opponents]
    else:
        tables = [(s, [learner] + [s] * (num_players - 1)) for s in opponents]
    for key, agents in tables:
        res = evaluate(agents, num_players=num_players, games=games, seed=seed, workers=workers,
                       rules=rules, progress=progress)
        out[key] = dict(res.agents[0].to_json(), backend=res.backend, elapsed_s=round(res.elapsed_s, 3))
    return out


def progress_line(steps: int, results: dict[str, dict[str, Any]], num_players: int, best_score: float,
                  improved: bool) -> str:
    """One line that sums up a periodic evaluation, for logs that are not a terminal.

    ``eval @ 65,536 steps | vs optimal 52.3% [49.2, 55.4] | ... | points/round 11.32 | best 0.562 (new)``:
    the learner's win rate against each opponent with its 95% interval, its points per
    round (over all the evaluation's games) and the best score so far.  Solo: the
    learner's points per round with its interval, each baseline's, and the best
    (lowest) points per round so far.
    """
    parts = [f"eval @ {steps:,} steps"]
    if num_players == 1:
        r = results["solo"]
        parts.append(f"points/round {_num(r.get('mean_points_per_round'))} {_interval(r.get('points_per_round_ci95'))}")
        parts += [f"{key} {_num(b.get('mean_points_per_round'))}" for key, b in results.items() if key != "solo"]
        best = f"{-best_score:.2f}" if math.isfinite(best_score) else "-"
    else:
        for key, r in results.items():
            lo, hi = r["win_rate_ci95"]
            parts.append(f"vs {key} {100 * r['win_rate']:.1f}% [{100 * lo:.1f}, {100 * hi:.1f}]")
        rounds = sum(int(r.get("rounds") or 0) for r in results.values())
        ppr = (sum(float(r["mean_points_per_round"]) * int(r.get("rounds") or 0) for r in results.values()
                   if r.get("mean_points_per_round") is not None) / rounds) if rounds else None
        parts.append(f"points/round {_num(ppr)}")
        best = f"{best_score:.3f}" if math.isfinite(best_score) else "-"
    parts.append(f"best {best}" + (" (new)" if improved else ""))
    return " | ".join(parts)


def _num(v: float | None) -> str:
    return "-" if v is None else f"{v:.2f}"


def _interval(ci: Sequence[float | None] | None) -> str:
    if not ci or ci[0] is None or ci[1] is None:
        return ""
    return f"[{ci[0]:.2f}, {ci[1]:.2f}]"


def score_of(results: dict[str, dict[str, Any]], num_players: int) -> float:
    """The "best checkpoint" score of an evaluation (higher is better).

    Two or more players: the mean win rate over the evaluation opponents.
    Solo: minus the learner's mean points per round.
    """
    if num_players == 1:
        v = results["solo"]["mean_points_per_round"]
        return -float(v) if v is not None else -math.inf
    rates = [r["win_rate"] for r in results.values() if r.get("win_rate") is not None]
    return float(np.mean(rates)) if rates else -math.inf


class EvalCallback(_Periodic):
    """Evaluate the learner every ``every`` steps; log ``eval/*``; keep ``best.zip``.

    Args:
        every: steps between evaluations.
        opponents: evaluation opponent specs (solo: baselines).
        num_players, rules: the game.
        games, seed, workers: passed to :func:`lama_dice.evaluation.evaluate.evaluate`.
        run_dir: where ``best.zip`` and ``evaluations.jsonl`` go.
        sidecar: sidecar fields of ``best.zip``.
        best_score: the best score of earlier sessions of this run (resume).
        out: where each evaluation's one-line summary (:func:`progress_line`) is printed
            (None: ``sys.stdout`` at the time of printing, so that a live progress bar
            that redirects stdout keeps the line above the bar).
    """

    def __init__(self, every: int, opponents: Sequence[str], num_players: int, rules: RulesConfig,
                 games: int, seed: int, workers: int, run_dir: Path, sidecar: dict[str, Any],
                 best_score: float = -math.inf, verbose: int = 0, out: TextIO | None = None) -> None:
        """Set up the evaluations (see the class docstring for the arguments)."""
        super().__init__(every)
        self.opponents = list(opponents)
        self.num_players = num_players
        self.rules = rules
        self.games = games
        self.seed = seed
        self.workers = workers
        self.run_dir = Path(run_dir)
        self.sidecar = sidecar
        self.best_score = best_score
        self.verbose = verbose
        self.out = out
        self.baselines: dict[str, dict[str, Any]] | None = None  # solo baselines, evaluated once
        self.last: dict[str, dict[str, Any]] | None = None

    def _fire(self) -> None:
        self.run_evaluation()

    def run_evaluation(self) -> dict[str, dict[str, Any]]:
        """Evaluate now, log, update ``best.zip``; return the results."""
        t0 = time.perf_counter()
        learner = PPOPolicy.from_sb3(self.model.policy, self.num_players, spec="ppo:learner")
        if self.num_players == 1:
            results = evaluate_learner(learner, [], 1, self.rules, self.games, self.seed, self.workers)
            if self.baselines is None:
                self.baselines = {k: v for k, v in evaluate_learner(
                    learner, self.opponents, 1, self.rules, self.games, self.seed, self.workers).items()
                    if k != "solo"}
            results.update(self.baselines)
        else:
            results = evaluate_learner(learner, self.opponents, self.num_players, self.rules,
                                       self.games, self.seed, self.workers)
        self.last = results
        self._log(results)
        score = score_of(results, self.num_players)
        self.logger.record("eval/score", score)
        self.logger.record("eval/seconds", time.perf_counter() - t0)
        improved = score > self.best_score
        if improved:
            self.best_score = score
            save_checkpoint(self.model, self.run_dir / "best.zip",
                            dict(self.sidecar, eval_score=score, eval_games=self.games))
        self.logger.record("eval/best_score", self.best_score)
        with open(self.run_dir / "evaluations.jsonl", "a", encoding="utf-8") as fh:
            fh.write(json.dumps({"timesteps": int(self.num_timesteps), "score": score,
                                 "best": improved, "results": results}) + "\n")
        # make the eval scalars appear at this step even between rollouts
        self.logger.dump(self.num_timesteps)
        print(progress_line(int(self.num_timesteps), results, self.num_players, self.best_score, improved),
              file=self.out or sys.stdout, flush=True)
        return results

    def _log(self, results: dict[str, dict[str, Any]]) -> None:
        for key, r in results.items():
            if self.num_players == 1 and key != "solo":
                prefix = f"eval/baseline_{tag_of(key)}"
            else:
                prefix = f"eval/{tag_of(key)}"
            if self.num_players > 1:
                lo, hi = r["win_rate_ci95"]
                self.logger.record(f"{prefix}/win_rate", r["win_rate"])
                self.logger.record(f"{prefix}/win_rate_ci_low", lo)
                self.logger.record(f"{prefix}/win_rate_ci_high", hi)
            for name in ("mean_points_per_round", "mean_final_points", "bust_rate", "quit_rate", "went_out_rate"):
                if r.get(name) is not None:
                    self.logger.record(f"{prefix}/{name.removeprefix('mean_')}", r[name])
            if r.get("mean_rank") is not None:
                self.logger.record(f"{prefix}/mean_rank", r["mean_rank"])


# ---------------------------------------------------------------------------
# checkpoints and the self-play pool

class CheckpointCallback(_Periodic):
    """Save ``checkpoints/step-<N>.zip`` (+ sidecar) every ``every`` steps, keeping the newest ``keep_last``."""

    def __init__(self, every: int, directory: Path, sidecar: dict[str, Any], keep_last: int | None = None,
                 clock: TrainClock | None = None) -> None:
        """Save into ``directory`` with the sidecar fields ``sidecar``; ``keep_last``: None keeps all.

        ``clock``: the run's :class:`TrainClock` (the sidecars record ``train_seconds``).
        """
        super().__init__(every)
        self.dir = Path(directory)
        self.sidecar = sidecar
        self.keep_last = keep_last
        self.clock = clock

    def _fire(self) -> None:
        save_checkpoint(self.model, self.dir / f"step-{self.num_timesteps:012d}.zip", self.sidecar, self.clock)
        if self.keep_last:
            for old in sorted(self.dir.glob("step-*.zip"))[:-self.keep_last]:
                old.unlink(missing_ok=True)
                old.with_suffix(".json").unlink(missing_ok=True)


class SelfPlayCallback(_Periodic):
    """Add a snapshot of the learner to the self-play pool every ``every`` steps (and at the start if it is empty)."""

    def __init__(self, every: int, pool: SnapshotPool) -> None:
        """Add snapshots to ``pool`` every ``every`` steps."""
        super().__init__(every)
        self.pool = pool

    def _on_training_start(self) -> None:
        super()._on_training_start()
        if not self.pool.snapshots():
            self.pool.add(self.model, self.num_timesteps)
        else:
            self.pool.write_pool_file()

    def _fire(self) -> None:
        self.pool.add(self.model, self.num_timesteps)
        self.logger.record("selfplay/pool_size", len(self.pool.members()))
