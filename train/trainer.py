"""Train a MaskablePPO agent from a YAML config, top to bottom.

``lama-dice train CONFIG.yaml`` (or ``python -m train CONFIG.yaml``) calls
:func:`train`, which does, in order:

1. validate the config (:mod:`train.config`) and apply command-line overrides;
2. make the run folder ``runs/NAME-YYYYmmdd-HHMMSS/`` and save the resolved
   ``config.yaml`` there (a resumed run continues in its own folder);
3. build ``env.n_envs`` copies of the Gymnasium env ``LamaDice-v0``, each
   opponent seat a :class:`train.selfplay.MixtureOpponent` (configured
   opponents, plus the self-play pool), vectorized with ``SubprocVecEnv`` or
   ``DummyVecEnv``;
4. build the MaskablePPO model (every hyperparameter from the config), or load
   the checkpoint to resume;
5. learn, with the callbacks of :mod:`train.callbacks` (TensorBoard game
   scalars, periodic evaluation and ``best.zip``, periodic checkpoints,
   self-play snapshots) and a progress bar; Ctrl-C saves ``interrupted.zip``;
6. save ``final.zip``, evaluate it against the evaluation opponents with the
   evaluation harness, print the table and save it as ``eval.json``.

Run folder::

    runs/NAME-YYYYmmdd-HHMMSS/
      config.yaml          the resolved config (train it again: lama-dice train config.yaml)
      tb/                  TensorBoard events (tensorboard --logdir runs/)
      checkpoints/         step-<N>.zip (+ .json sidecars), every checkpoint.every steps
      selfplay/            the self-play pool (snapshots and pool.json)
      best.zip, final.zip  best periodic evaluation, end of training (interrupted.zip on Ctrl-C)
      evaluations.jsonl    every periodic evaluation
      eval.json            the final evaluation table

Every ``.zip`` is a MaskablePPO checkpoint that any tool loads as ``ppo:PATH``.
"""

from __future__ import annotations

import json
import math
import os
import signal
import sys
import time
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, Callable, TextIO

from lama_env.errors import LamaDiceError

from .config import ConfigError, TrainConfig, load_config

#: Default parent folder of run folders.
RUNS_ROOT = "runs"


class RunDirError(LamaDiceError):
    """A run folder that cannot be used (it already holds a run, or cannot be created)."""


@dataclass
class TrainResult:
    """What :func:`train` returns.

    Attributes:
        run_dir: the run folder.
        timesteps: learner steps trained in total (earlier sessions included).
        interrupted: whether training stopped on Ctrl-C (``interrupted.zip`` was saved).
        checkpoint: the last checkpoint saved (``final.zip`` or ``interrupted.zip``).
        evaluation: the final evaluation (``eval.json``), if one was run.
        seconds: wall-clock time of the session.
    """

    run_dir: Path
    timesteps: int
    interrupted: bool
    checkpoint: Path
    evaluation: dict[str, Any] | None = None
    seconds: float = 0.0
    steps_per_second: float = field(default=math.nan)


def train(
    config: TrainConfig | str | os.PathLike,
    *,
    run_dir: str | os.PathLike | None = None,
    total_timesteps: int | None = None,
    seed: int | None = None,
    resume: str | os.PathLike | None = None,
    progress_bar: bool = True,
    runs_root: str | os.PathLike = RUNS_ROOT,
    out: TextIO | None = None,
    config_path: str | os.PathLike | None = None,
) -> TrainResult:
    """Train (or resume training) a MaskablePPO agent.

    Args:
        config: a :class:`~train.config.TrainConfig` or the path of a YAML config.
        run_dir: the run folder (default ``runs_root/NAME-YYYYmmdd-HHMMSS``); it must not hold a run.
        total_timesteps: override ``total_timesteps`` (a resumed run trains until this total).
        seed: override ``seed``.
        resume: a checkpoint (``.zip``) or a run folder to continue from; the run
            continues in the checkpoint's run folder unless ``run_dir`` is given.
        progress_bar: show a progress bar.
        runs_root: parent folder of new run folders.
        out: where to print (default stdout).
        config_path: the config's file, for the resume hint (when ``config`` is a TrainConfig).

    Returns:
        A :class:`TrainResult`.

    Raises:
        ConfigError, RunDirError, agents.ppo.CheckpointError: bad input (one-line messages).
    """
    out = out or sys.stdout
    t_start = time.perf_counter()

    # -- 1. the config -----------------------------------------------------------------
    if not isinstance(config, TrainConfig):
        config_path = config_path or config
    cfg = config if isinstance(config, TrainConfig) else load_config(config)
    overrides: dict[str, Any] = {}
    if total_timesteps is not None:
        overrides["total_timesteps"] = total_timesteps
    if seed is not None:
        overrides["seed"] = seed
    if overrides:
        cfg = _override(cfg, overrides)
    n_players = cfg.env.num_players
    rules = cfg.rules

    # -- 2. the run folder --------------------------------------------------------------
    resume_ckpt = _resume_checkpoint(resume) if resume is not None else None
    if resume_ckpt is not None:
        _check_resume_fits(resume_ckpt, cfg)
        run = Path(run_dir) if run_dir is not None else (_run_dir_of(resume_ckpt) or _new_run_dir(runs_root, cfg.name))
        run.mkdir(parents=True, exist_ok=True)
        _save_config(cfg, run, resumed=True)
    else:
        run = _claim_run_dir(Path(run_dir)) if run_dir is not None else _new_run_dir(runs_root, cfg.name)
        _save_config(cfg, run, resumed=False)
    ckpt_dir = run / "checkpoints"
    ckpt_dir.mkdir(exist_ok=True)
    sidecar = {"num_players": n_players, "rules": rules.to_dict(), "config": cfg.name,
               "episode": cfg.env.episode, "reward": cfg.env.reward, "run": run.name}
    print(f"run folder: {run}", file=out)
    print(f"TensorBoard: tensorboard --logdir {run.parent}", file=out)

    # -- 3. the environments ---------------------------------------------------------------
    pool_file = run / "selfplay" / "pool.json" if cfg.selfplay.enabled else None
    vec_env = make_vec_env(cfg, pool_file=pool_file)

    # -- 4. the model ---------------------------------------------------------------------
    import torch
    from sb3_contrib import MaskablePPO
    from stable_baselines3.common.logger import configure
    from stable_baselines3.common.utils import set_random_seed

    set_random_seed(cfg.seed)
    if cfg.torch_threads > 0:
        torch.set_num_threads(cfg.torch_threads)
    # The masked action distribution is rebuilt at every step; checking its
    # arguments each time costs more than the forward pass itself.
    torch.distributions.Distribution.set_default_validate_args(False)
    if resume_ckpt is not None:
        model = _load_for_resume(resume_ckpt, vec_env, cfg)
        print(f"resuming from {resume_ckpt} at {model.num_timesteps:,} steps", file=out)
    else:
        model = MaskablePPO("MlpPolicy", vec_env, **ppo_kwargs(cfg), seed=cfg.seed, device=cfg.device, verbose=0)
    # Our own logger: TensorBoard events in RUN/tb (a resumed session appends new event files there).
    model.set_logger(configure(str(run / "tb"), ["tensorboard"]))
    start_steps = int(model.num_timesteps)
    remaining = cfg.total_timesteps - start_steps
    if remaining <= 0:
        vec_env.close()
        raise ConfigError(f"total_timesteps is {cfg.total_timesteps:,} but the checkpoint has already trained "
                          f"{start_steps:,} steps; pass a larger --total-timesteps to continue")

    # -- 5. learn -------------------------------------------------------------------------
    from stable_baselines3.common.callbacks import CallbackList

    from .callbacks import CheckpointCallback, EvalCallback, GameStatsCallback, SelfPlayCallback
    from .selfplay import SnapshotPool

    eval_cb = EvalCallback(cfg.eval.every, cfg.eval.opponents, n_players, rules, cfg.eval.games,
                           cfg.eval.seed, cfg.eval.workers, run, sidecar, best_score=_previous_best(run))
    callbacks: list[Any] = [GameStatsCallback(n_players), eval_cb,
                            CheckpointCallback(cfg.checkpoint.every, ckpt_dir, sidecar, cfg.checkpoint.keep_last)]
    if cfg.selfplay.enabled:
        pool = SnapshotPool(run, cfg.selfplay.pool_size, cfg.selfplay.initial, sidecar)
        if not pool.snapshots():  # the pool starts with the untrained learner
            pool.add(model, model.num_timesteps)
        pool.write_pool_file()
        callbacks.append(SelfPlayCallback(cfg.selfplay.snapshot_every, pool))

    print(f"training {cfg.name}: {n_players} player{'s' if n_players > 1 else ''}, episode={cfg.env.episode}, "
          f"reward={cfg.env.reward}, {cfg.env.n_envs} envs ({cfg.env.vec_env}), "
          f"{remaining:,} steps to go (torch threads: {torch.get_num_threads()})", file=out)
    interrupted = False
    t_learn = time.perf_counter()
    try:
        model.learn(total_timesteps=remaining, callback=CallbackList(callbacks),
                    reset_num_timesteps=resume_ckpt is None, progress_bar=progress_bar)
    except KeyboardInterrupt:
        interrupted = True
    finally:
        learn_s = time.perf_counter() - t_learn
        _close_vec_env(vec_env, force=interrupted)
    steps_done = int(model.num_timesteps) - start_steps
    sps = steps_done / learn_s if learn_s > 0 else math.nan

    from .callbacks import save_checkpoint

    if interrupted:
        ckpt = save_checkpoint(model, run / "interrupted.zip", sidecar)
        model.logger.close()
        print(f"\ninterrupted at {model.num_timesteps:,} steps; saved {ckpt}", file=out)
        print(f"resume with: lama-dice train {config_path or run / 'config.yaml'} --resume {ckpt}", file=out)
        return TrainResult(run, int(model.num_timesteps), True, ckpt, None,
                           time.perf_counter() - t_start, sps)

    # -- 6. final checkpoint and evaluation table ---------------------------------------
    ckpt = save_checkpoint(model, run / "final.zip", sidecar)
    print(f"trained {steps_done:,} steps in {learn_s:.0f} s ({sps:,.0f} steps/s); saved {ckpt}", file=out)
    evaluation = None
    if cfg.eval.final_games > 0:
        evaluation = final_evaluation(model, cfg, run, out=out, progress=progress_bar)
    model.logger.close()
    return TrainResult(run, int(model.num_timesteps), False, ckpt, evaluation,
                       time.perf_counter() - t_start, sps)


# ---------------------------------------------------------------------------
# environments

def make_env_fn(cfg: TrainConfig, rank: int, pool_file: Path | None, in_subprocess: bool) -> Callable[[], Any]:
    """A function that builds environment ``rank`` (called in the worker process for SubprocVecEnv)."""

    def _init() -> Any:
        import gymnasium as gym

        import lama_env.gym_env  # noqa: F401  (registers LamaDice-v0)

        if in_subprocess:
            # Ctrl-C is the trainer's business: workers keep running until it closes them.
            signal.signal(signal.SIGINT, signal.SIG_IGN)
            import torch

            torch.set_num_threads(1)  # self-play snapshots act one state at a time
        opponents = make_opponents(cfg, pool_file, seed=cfg.seed * 7919 + rank * 101)
        env = gym.make("LamaDice-v0", num_players=cfg.env.num_players, opponents=opponents,
                       episode=cfg.env.episode, reward=cfg.env.reward, rules=cfg.env.rules)
        return env

    return _init


def make_opponents(cfg: TrainConfig, pool_file: Path | None, seed: int) -> list[Any]:
    """One :class:`~train.selfplay.MixtureOpponent` per opponent seat (a plain spec when there is nothing to mix)."""
    from .selfplay import MixtureOpponent, PoolReader, WeightedSpec

    n_opp = cfg.env.num_players - 1
    specs = [WeightedSpec(o.agent, o.weight) for o in cfg.opponents]
    if pool_file is None and len(specs) == 1:
        return [specs[0].agent] * n_opp
    out = []
    for seat in range(n_opp):
        pool = PoolReader(pool_file, cfg.selfplay.deterministic) if pool_file is not None else None
        out.append(MixtureOpponent(specs, pool, cfg.selfplay.weight, per_round=cfg.env.episode == "round",
                                   seed=seed + seat))
    return out


def make_vec_env(cfg: TrainConfig, pool_file: Path | None = None) -> Any:
    """The vectorized training environments (with VecMonitor for SB3's episode statistics)."""
    from stable_baselines3.common.vec_env import DummyVecEnv, SubprocVecEnv, VecMonitor

    subproc = cfg.env.vec_env == "subproc"
    fns = [make_env_fn(cfg, i, pool_file, subproc) for i in range(cfg.env.n_envs)]
    vec = SubprocVecEnv(fns) if subproc else DummyVecEnv(fns)
    vec.seed(cfg.seed)
    return VecMonitor(vec)


def _close_vec_env(vec_env: Any, force: bool) -> None:
    """Close the environments; after Ctrl-C, stop subprocess workers without waiting on them."""
    from stable_baselines3.common.vec_env import SubprocVecEnv

    inner = vec_env.venv if hasattr(vec_env, "venv") else vec_env
    if force and isinstance(inner, SubprocVecEnv):
        # A step may have been cut off mid-way: the pipes are out of sync, so don't talk to the workers.
        for p in inner.processes:
            p.terminate()
        for p in inner.processes:
            p.join(timeout=5)
        inner.closed = True
        return
    vec_env.close()


# ---------------------------------------------------------------------------
# the model

_ACTIVATIONS = {"tanh": "Tanh", "relu": "ReLU", "elu": "ELU", "leaky_relu": "LeakyReLU"}


def ppo_kwargs(cfg: TrainConfig) -> dict[str, Any]:
    """MaskablePPO keyword arguments of the config (hyperparameters and network)."""
    import torch.nn as nn

    p = cfg.ppo
    lr: Any = p.learning_rate
    if p.lr_schedule == "linear":
        lr = _LinearSchedule(p.learning_rate)
    arch = cfg.policy.net_arch
    net_arch = list(arch) if isinstance(arch, list) else {"pi": list(arch.pi), "vf": list(arch.vf)}
    return dict(
        learning_rate=lr, n_steps=p.n_steps, batch_size=p.batch_size, n_epochs=p.n_epochs, gamma=p.gamma,
        gae_lambda=p.gae_lambda, clip_range=p.clip_range, ent_coef=p.ent_coef, vf_coef=p.vf_coef,
        max_grad_norm=p.max_grad_norm, target_kl=p.target_kl, normalize_advantage=p.normalize_advantage,
        policy_kwargs=dict(net_arch=net_arch, activation_fn=getattr(nn, _ACTIVATIONS[cfg.policy.activation]),
                           ortho_init=cfg.policy.ortho_init),
    )


class _LinearSchedule:
    """Learning rate decaying linearly from ``start`` to 0 over the run (picklable)."""

    def __init__(self, start: float) -> None:
        self.start = start

    def __call__(self, progress_remaining: float) -> float:
        return self.start * progress_remaining


def _load_for_resume(ckpt: Path, vec_env: Any, cfg: TrainConfig) -> Any:
    from sb3_contrib import MaskablePPO

    from agents.ppo import CheckpointError

    try:
        return MaskablePPO.load(ckpt, env=vec_env, device=cfg.device)
    except Exception as e:  # noqa: BLE001 - any failure to rebuild the model is a bad checkpoint
        vec_env.close()
        msg = str(e).strip().splitlines()
        raise CheckpointError(f"cannot resume from {ckpt}: {type(e).__name__}: {msg[0] if msg else ''}") from None


# ---------------------------------------------------------------------------
# run folders

def _override(cfg: TrainConfig, overrides: dict[str, Any]) -> TrainConfig:
    from .config import parse_config

    data = cfg.to_dict()
    data.update(overrides)
    return parse_config(data, source="command line", check_agents=False)


def _new_run_dir(root: str | os.PathLike, name: str) -> Path:
    """A fresh ``root/NAME-YYYYmmdd-HHMMSS`` folder (a suffix ``-2``, ``-3``... if taken)."""
    stamp = datetime.now().strftime("%Y%m%d-%H%M%S")
    base = Path(root) / f"{name}-{stamp}"
    for k in range(1, 1000):
        cand = base if k == 1 else base.with_name(f"{base.name}-{k}")
        try:
            cand.mkdir(parents=True, exist_ok=False)
            return cand
        except FileExistsError:
            continue
        except OSError as e:
            raise RunDirError(f"cannot create run folder {cand}: {e.strerror or e}") from None
    raise RunDirError(f"cannot find a free run folder name for {base}")


def _claim_run_dir(path: Path) -> Path:
    """Use ``path`` as a new run folder: it must not exist or be empty."""
    if path.exists():
        if not path.is_dir():
            raise RunDirError(f"run folder {path} is a file")
        if any(path.iterdir()):
            raise RunDirError(f"run folder {path} is not empty (it may hold a run); "
                              f"choose another --run-dir, or --resume {path}")
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise RunDirError(f"cannot create run folder {path}: {e.strerror or e}") from None
    return path


def _save_config(cfg: TrainConfig, run: Path, resumed: bool) -> None:
    """Save the resolved config; a resumed session never overwrites the run's config.yaml."""
    text = cfg.to_yaml()
    path = run / "config.yaml"
    if path.exists():
        if path.read_text(encoding="utf-8") == text:
            return
        stamp = datetime.now().strftime("%Y%m%d-%H%M%S")
        path = run / f"config.resumed-{stamp}.yaml"
    path.write_text(text, encoding="utf-8")


def _resume_checkpoint(resume: str | os.PathLike) -> Path:
    """The checkpoint to resume from: a ``.zip``, or a run folder's latest state."""
    from agents.ppo import CheckpointError, resolve_checkpoint

    p = Path(resume)
    if p.is_dir():
        # latest state first: an interruption, the newest periodic checkpoint, the end of training
        cands = [p / "interrupted.zip", p / "final.zip", *sorted((p / "checkpoints").glob("step-*.zip"))]
        cands = [c for c in cands if c.is_file()]
        if not cands:
            raise CheckpointError(f"nothing to resume in {p} (no interrupted.zip, final.zip or checkpoints/step-*.zip)")
        return max(cands, key=lambda c: c.stat().st_mtime)
    return resolve_checkpoint(p)


def _run_dir_of(ckpt: Path) -> Path | None:
    """The run folder a checkpoint belongs to (the nearest folder above it with a config.yaml)."""
    for d in (ckpt.parent, ckpt.parent.parent):
        if (d / "config.yaml").is_file():
            return d
    return None


def _check_resume_fits(ckpt: Path, cfg: TrainConfig) -> None:
    """Refuse to resume a checkpoint trained for another game than the config's."""
    from agents.ppo import CheckpointError, load_policy

    _, sidecar, n = load_policy(ckpt)
    if n != cfg.env.num_players:
        raise CheckpointError(f"cannot resume {ckpt}: it was trained for {n} players, "
                              f"the config has env.num_players: {cfg.env.num_players}")
    if sidecar is not None and sidecar.get("rules") not in (None, cfg.rules.to_dict()):
        raise CheckpointError(f"cannot resume {ckpt}: it was trained with rules {sidecar['rules']}, "
                              f"the config has {cfg.rules.to_dict()}")


def _previous_best(run: Path) -> float:
    """The eval score of the run's ``best.zip`` so far (resume keeps the best across sessions)."""
    from agents.ppo import read_sidecar

    try:
        side = read_sidecar(run / "best.zip") if (run / "best.zip").is_file() else None
    except LamaDiceError:
        return -math.inf
    return float(side.get("eval_score", -math.inf)) if side else -math.inf


# ---------------------------------------------------------------------------
# the final evaluation table

def final_evaluation(model: Any, cfg: TrainConfig, run: Path, out: TextIO | None = None,
                     progress: bool = True) -> dict[str, Any]:
    """Evaluate the trained model against ``eval.opponents`` (``eval.final_games`` each), print a table, save ``eval.json``."""
    from agents.ppo import PPOPolicy

    from .callbacks import evaluate_learner

    n = cfg.env.num_players
    learner = PPOPolicy.from_sb3(model.policy, n, spec="ppo:final")
    t0 = time.perf_counter()
    results = evaluate_learner(learner, cfg.eval.opponents, n, cfg.rules, cfg.eval.final_games,
                               cfg.eval.seed + 1, cfg.eval.workers, progress=progress)
    report = {"run": run.name, "checkpoint": "final.zip", "timesteps": int(model.num_timesteps),
              "players": n, "games_per_opponent": cfg.eval.final_games, "seed": cfg.eval.seed + 1,
              "rules": cfg.rules.to_dict(), "results": results,
              "seconds": round(time.perf_counter() - t0, 2)}
    (run / "eval.json").write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    print_eval_table(report, out)
    return report


def print_eval_table(report: dict[str, Any], out: TextIO | None = None) -> None:
    """Print an evaluation report (``eval.json``) as a table."""
    from rich.console import Console
    from rich.table import Table

    n = report["players"]
    games = report["games_per_opponent"]
    if n == 1:
        table = Table(title=f"final evaluation: solo, {games} games each (lower points are better)")
        table.add_column("agent")
        table.add_column("points/round", justify="right")
        table.add_column("final points", justify="right")
        table.add_column("bust", justify="right")
        table.add_column("quit", justify="right")
        table.add_column("went out", justify="right")
        for key, r in report["results"].items():
            table.add_row("learner" if key == "solo" else key, _f(r.get("mean_points_per_round")),
                          _f(r.get("mean_final_points"), 1), _pct(r.get("bust_rate")),
                          _pct(r.get("quit_rate")), _pct(r.get("went_out_rate")))
    else:
        table = Table(title=f"final evaluation: learner vs {n - 1}x each opponent, {games} games each")
        table.add_column("opponent")
        table.add_column("win rate", justify="right")
        table.add_column("95% CI", justify="right")
        table.add_column("points/round", justify="right")
        table.add_column("bust", justify="right")
        table.add_column("quit", justify="right")
        table.add_column("went out", justify="right")
        for key, r in report["results"].items():
            lo, hi = r["win_rate_ci95"]
            table.add_row(key, f"{r['win_rate']:.3f}", f"[{lo:.3f}, {hi:.3f}]", _f(r.get("mean_points_per_round")),
                          _pct(r.get("bust_rate")), _pct(r.get("quit_rate")), _pct(r.get("went_out_rate")))
    console = Console(file=out or sys.stdout, width=110)
    console.print(table)


def _f(v: Any, digits: int = 2) -> str:
    return "-" if v is None else f"{v:.{digits}f}"


def _pct(v: Any) -> str:
    return "-" if v is None else f"{100 * v:.1f}%"
