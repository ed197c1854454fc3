"""Train a MaskablePPO agent from a YAML config, top to bottom.

``lama-dice train CONFIG.yaml`` (or ``python -m lama_dice train CONFIG.yaml``) calls
:func:`train`, which does, in order:

1. validate the config (:mod:`lama_dice.train.config`; a resumed run's is its run folder's
   own, :func:`resume_config`) and apply command-line overrides;
2. make the run folder ``runs/NAME-YYYYmmdd-HHMMSS/`` and save the resolved
   ``config.yaml`` in it (a resumed run continues in its own folder); say how many steps
   will run when whole rollouts round ``total_timesteps`` up;
3. build ``env.n_envs`` copies of the Gymnasium env ``LamaDice-v1``, each
   opponent seat a :class:`lama_dice.train.selfplay.MixtureOpponent` (the configured
   opponents plus the self-play pool), vectorized with ``SubprocVecEnv`` or
   ``DummyVecEnv``; or (``env.vec_env: native``) one
   :class:`lama_dice.train.native_vec_env.NativeVecEnv` holding all of them in the
   compiled vector env, native opponents playing inside it and pool snapshots in batch;
4. build the MaskablePPO model (every hyperparameter from the config), or load
   the checkpoint to resume from;
5. learn, with the callbacks of :mod:`lama_dice.train.callbacks` (the game's TensorBoard
   scalars, periodic evaluation and ``best.zip``, periodic checkpoints,
   self-play snapshots) and a progress bar; Ctrl-C (or SIGTERM) saves ``interrupted.zip``;
6. save ``final.zip``, evaluate it against the evaluation opponents with the
   evaluation harness, print the table and save it as ``eval.json``.

The run folder::

    runs/NAME-YYYYmmdd-HHMMSS/
      config.yaml          the resolved config (lama-dice train config.yaml trains it again;
                           lama-dice train --resume RUN continues with it)
      config.resumed-*.yaml  the config of a session resumed with another --total-timesteps or --seed
      tb/                  TensorBoard events (tensorboard --logdir runs/)
      checkpoints/         step-<N>.zip (+ .json sidecars), every checkpoint.every steps
      selfplay/            the self-play pool: snapshots and pool.json
      best.zip             the best periodic evaluation so far
      final.zip            the end of training (interrupted.zip after Ctrl-C)
      evaluations.jsonl    every periodic evaluation
      eval.json            the final evaluation table

Every ``.zip`` is a MaskablePPO checkpoint with a JSON sidecar; every tool
loads it as the agent ``ppo:PATH``.
"""

from __future__ import annotations

import json
import math
import os
import shlex
import signal
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any, SupportsFloat, TextIO

import numpy as np
import torch
from sb3_contrib import MaskablePPO
from stable_baselines3.common.callbacks import BaseCallback, CallbackList
from stable_baselines3.common.logger import configure
from stable_baselines3.common.utils import set_random_seed
from stable_baselines3.common.vec_env import DummyVecEnv, SubprocVecEnv, VecEnv, VecEnvWrapper, VecMonitor

from lama_dice.agents.ppo import CheckpointError, PPOPolicy, load_policy, read_sidecar, resolve_checkpoint
from lama_dice.atomic import write_text
from lama_env.errors import LamaDiceError

from .callbacks import (
    CheckpointCallback,
    EvalCallback,
    GameStatsCallback,
    SelfPlayCallback,
    TrainClock,
    evaluate_learner,
    save_checkpoint,
)
from .config import ConfigError, TrainConfig, load_config, parse_config
from .masked_distribution import LamaMaskablePolicy
from .runs import RunDirError, claim_run_dir, new_run_dir, stop_on_sigterm  # noqa: F401  (RunDirError: raised by train)
from .selfplay import MixtureOpponent, PoolReader, SnapshotPool, WeightedSpec
from .shell import command, near_path, shell_path
from .warm_start import check_init_from, init_weights

#: Default parent folder of run folders.
RUNS_ROOT = "runs"


@dataclass
class TrainResult:
    """What :func:`train` returns.

    Attributes:
        run_dir: the run folder.
        timesteps: learner steps trained in total (earlier sessions included).
        interrupted: whether training stopped on Ctrl-C (``interrupted.zip`` was saved).
        checkpoint: the last checkpoint saved (``final.zip`` or ``interrupted.zip``).
        evaluation: the final evaluation (the content of ``eval.json``), if one was run.
        seconds: wall-clock time of the whole session.
        steps_per_second: learner steps per second while learning (periodic evaluations included).
    """

    run_dir: Path
    timesteps: int
    interrupted: bool
    checkpoint: Path
    evaluation: dict[str, Any] | None
    seconds: float
    steps_per_second: float


def train(
    config: TrainConfig | str | os.PathLike | None = None,
    *,
    run_dir: str | os.PathLike | None = None,
    total_timesteps: int | None = None,
    seed: int | None = None,
    resume: str | os.PathLike | None = None,
    progress_bar: bool = True,
    runs_root: str | os.PathLike = RUNS_ROOT,
    callbacks: Sequence[BaseCallback] = (),
    out: TextIO | None = None,
) -> TrainResult:
    """Train (or resume training) a MaskablePPO agent.

    Args:
        config: a :class:`~lama_dice.train.config.TrainConfig` or the path of a YAML config; with
            ``resume``, not needed: the run folder's own resolved config is used (:func:`resume_config`).
        run_dir: the run folder (default ``runs_root/NAME-YYYYmmdd-HHMMSS``); it must be new or empty.
        total_timesteps: override ``total_timesteps`` (a resumed run trains until this total).
        seed: override ``seed``.
        resume: a checkpoint (``.zip``) or a run folder (its latest checkpoint) to continue
            from; the run continues in the checkpoint's run folder unless ``run_dir`` is given,
            with the config it was started with (its overrides included).
        progress_bar: show a progress bar.
        runs_root: parent folder of new run folders.
        callbacks: more SB3 callbacks to run during learning.
        out: where to print (default stdout).

    Returns:
        A :class:`TrainResult`.

    Raises:
        ConfigError, RunDirError, lama_dice.agents.ppo.CheckpointError: bad input (one-line messages).
    """
    out = out or sys.stdout
    t_start = time.perf_counter()

    # -- 1. The config: validated before anything starts ---------------------------------
    cfg, resume_ckpt = run_config(config, resume=resume, total_timesteps=total_timesteps, seed=seed, out=out)
    n_players = cfg.env.num_players
    _check_device(cfg)
    if resume is None:
        check_init_from(cfg)
    rules = cfg.rules

    # -- 2. The run folder, with the resolved config -------------------------------------
    if resume_ckpt is not None:  # (its folder is written to once its model has loaded: step 4)
        run, done = _resumed_run_dir(resume_ckpt, cfg, run_dir, runs_root)
    else:
        run = _claim_run_dir(Path(run_dir)) if run_dir is not None else new_run_dir(runs_root, cfg.name)
        done = 0
        _save_config(cfg, run)
    (run / "checkpoints").mkdir(exist_ok=True)
    # what every checkpoint's JSON sidecar says about the game it was trained for
    sidecar = {"num_players": n_players, "rules": rules.to_dict(), "config": cfg.name,
               "episode": cfg.env.episode, "reward": cfg.env.reward, "run": run.name}
    sidecar.update(warm_start_fields(cfg, resume_ckpt))
    print(f"run folder: {run}", file=out)
    print(f"TensorBoard: {command('tensorboard', 'tensorboard.main')} --logdir {shell_path(run.parent)}", file=out)
    note = cfg.rounding_note(done)
    if note:  # SB3 trains whole rollouts: say what will run, not only what was asked
        print(note, file=out)

    # -- 3. The environments -------------------------------------------------------------
    set_random_seed(cfg.seed)
    if cfg.torch_threads > 0:
        torch.set_num_threads(cfg.torch_threads)
    # The masked action distribution is rebuilt at every step; validating its
    # arguments each time costs about as much as the forward pass.
    torch.distributions.Distribution.set_default_validate_args(False)
    pool_file = (run / "selfplay" / "pool.json").resolve() if cfg.selfplay.enabled else None
    vec_env = make_vec_env(cfg, pool_file)

    # -- 4. The model: new, or loaded to resume ------------------------------------------
    if resume_ckpt is not None:
        model = _load_for_resume(resume_ckpt, vec_env, cfg)
        _save_config(cfg, run)
        print(f"resuming from {resume_ckpt} at {model.num_timesteps:,} steps", file=out)
    else:
        model = new_model(cfg, vec_env, out)
    # Our own logger: TensorBoard events in RUN/tb (a resumed session adds an event file there).
    model.set_logger(configure(str(run / "tb"), ["tensorboard"]))
    teacher = cfg.pretrain.teacher
    if resume_ckpt is None and teacher:  # behaviour-cloning warm start
        from lama_dice.train import pretrain

        pc = cfg.pretrain
        if pc.states == "solo":
            data = pretrain.collect_solo_states(teacher, rules, cfg.env.reward_scale, cfg.seed)
        else:
            data = pretrain.collect(make_env_fn(cfg, 0, None, False), teacher, pc.episodes, cfg.ppo.gamma, cfg.seed)
        pretrain.fit(model, data, epochs=pc.epochs, batch_size=pc.batch_size, learning_rate=pc.learning_rate,
                     value_coef=pc.value_coef, seed=cfg.seed, out=out)
    start_steps = int(model.num_timesteps)
    # SB3 collects whole rollouts (n_steps in each of n_envs envs) until the total is reached:
    # round up to what will actually run, so that the progress bar and the messages are exact.
    remaining = cfg.steps_to_train(start_steps)

    # -- 5. Learn ------------------------------------------------------------------------
    clock = TrainClock(_trained_seconds(resume_ckpt) if resume_ckpt is not None else 0.0)
    cbs: list[BaseCallback] = [
        GameStatsCallback(n_players),
        EvalCallback(cfg.eval.every, cfg.eval.opponents, n_players, rules, cfg.eval.games, cfg.eval.seed,
                     cfg.eval.workers, run, sidecar, best_score=_previous_best(run),
                     out=None if out is sys.stdout else out),
        CheckpointCallback(cfg.checkpoint.every, run / "checkpoints", sidecar, cfg.checkpoint.keep_last, clock),
    ]
    if cfg.selfplay.enabled:
        pool = SnapshotPool(run, cfg.selfplay.pool_size, cfg.selfplay.initial, sidecar)
        if not pool.snapshots():  # the pool starts with the untrained learner
            pool.add(model, model.num_timesteps)
        pool.write_pool_file()
        cbs.append(SelfPlayCallback(cfg.selfplay.snapshot_every, pool))
    cbs.extend(callbacks)

    print(f"training {cfg.name}: {n_players} player{'s' if n_players > 1 else ''}, episode={cfg.env.episode}, "
          f"reward={cfg.env.reward}, {cfg.env.n_envs} envs ({cfg.env.vec_env}), {remaining:,} steps to go",
          file=out)
    interrupted = False
    t_learn = time.perf_counter()
    clock.start()
    with stop_on_sigterm() as stopped:  # SIGTERM: as Ctrl-C
        try:
            model.learn(total_timesteps=remaining, callback=CallbackList(cbs),
                        reset_num_timesteps=resume_ckpt is None, progress_bar=progress_bar)
        except KeyboardInterrupt:
            interrupted = True
        except (EOFError, ConnectionError):  # workers ended by the SIGTERM sent to the whole process group
            if not stopped:
                raise
            interrupted = True
        finally:
            learn_s = time.perf_counter() - t_learn
            _close_vec_env(vec_env, force=interrupted)
    steps_done = int(model.num_timesteps) - start_steps
    sps = steps_done / learn_s if learn_s > 0 else math.nan

    if interrupted:  # Ctrl-C or SIGTERM: save where we are and say how to go on
        ckpt = save_checkpoint(model, run / "interrupted.zip", sidecar, clock)
        model.logger.close()
        print(f"\ninterrupted at {model.num_timesteps:,} steps; saved {ckpt}", file=out)
        # the run folder alone: its config (overrides included) and its latest checkpoint are the run
        print(f"resume with: {command('lama-dice', 'lama_dice')} train --resume {shell_path(run)}", file=out)
        return TrainResult(run, int(model.num_timesteps), True, ckpt, None, time.perf_counter() - t_start, sps)

    # -- 6. The final checkpoint and the evaluation table --------------------------------
    ckpt = save_checkpoint(model, run / "final.zip", sidecar, clock)
    in_all = f" ({int(model.num_timesteps):,} in all)" if start_steps else ""
    print(f"trained {steps_done:,} steps{in_all} in {learn_s:.0f} s ({sps:,.0f} steps/s); saved {ckpt}", file=out)
    evaluation = None
    if cfg.eval.final_games > 0:
        evaluation = final_evaluation(model, cfg, run, out=out, progress=progress_bar)
    model.logger.close()
    print_run_files(run, out)
    return TrainResult(run, int(model.num_timesteps), False, ckpt, evaluation, time.perf_counter() - t_start, sps)


def _check_device(cfg: TrainConfig) -> None:
    """Refuse ``device: cuda`` without a CUDA device now, not by torch after the run folder was made."""
    if cfg.device == "cuda" and not torch.cuda.is_available():
        raise ConfigError("device: cuda, but this torch finds no CUDA device; use device: cpu (or auto)")


def run_config(config: TrainConfig | str | os.PathLike | None, *, resume: str | os.PathLike | None = None,
               total_timesteps: int | None = None, seed: int | None = None,
               out: TextIO | None = None) -> tuple[TrainConfig, Path | None]:
    """Step 1 of :func:`train`: the config the run trains with, and the checkpoint it resumes from (or None).

    A resumed run's config is its run folder's own (:func:`resume_config`); then the overrides apply.
    Nothing is written.

    Raises:
        ConfigError, lama_dice.agents.ppo.CheckpointError: one line naming the problem.
    """
    resume_ckpt = _resume_checkpoint(resume) if resume is not None else None
    if resume_ckpt is not None:  # the run's own config (every refusal comes before the run folder is touched)
        given = {k for k, v in (("total_timesteps", total_timesteps), ("seed", seed)) if v is not None}
        config = resume_config(resume_ckpt, config, out or sys.stdout, overridden=given)
    elif config is None:
        raise ConfigError("nothing to train: give a config (a YAML file or a shipped config's name), or a run to "
                          "resume")
    elif not isinstance(config, TrainConfig):
        config = load_config(config)
    return _override(config, total_timesteps=total_timesteps, seed=seed), resume_ckpt


# ---------------------------------------------------------------------------
# the environments

def make_env_fn(cfg: TrainConfig, rank: int, pool_file: Path | None, in_subprocess: bool) -> Callable[[], Any]:
    """A function that builds environment ``rank`` (run in the worker process under SubprocVecEnv)."""

    def _init() -> Any:
        import gymnasium as gym

        import lama_env.gym_env  # noqa: F401  (registers LamaDice-v1)

        if in_subprocess:
            # Ctrl-C is the trainer's business: workers keep running until it stops them.
            signal.signal(signal.SIGINT, signal.SIG_IGN)
            torch.set_num_threads(1)
        opponents = make_opponents(cfg, pool_file, seed=cfg.seed * 7919 + rank * 101)
        env = gym.make("LamaDice-v1", num_players=cfg.env.num_players, opponents=opponents,
                       episode=cfg.env.episode, reward=cfg.env.reward, rules=cfg.env.rules,
                       disable_env_checker=True)
        if cfg.env.reward_scale != 1.0:
            env = gym.wrappers.TransformReward(env, _Scale(cfg.env.reward_scale))
        return env

    return _init


class _Scale:
    """``r -> scale * r`` (picklable)."""

    def __init__(self, scale: float) -> None:
        self.scale = scale

    def __call__(self, r: SupportsFloat) -> float:
        """The scaled reward."""
        return self.scale * float(r)


def make_opponents(cfg: TrainConfig, pool_file: Path | None, seed: int) -> list[Any]:
    """The opponent of each opponent seat: a :class:`MixtureOpponent` (a plain spec when there is nothing to mix)."""
    specs = [WeightedSpec(o.agent, o.weight) for o in cfg.opponents]
    n_opp = cfg.env.num_players - 1
    if pool_file is None and len(specs) == 1:
        return [specs[0].agent] * n_opp
    return [MixtureOpponent(specs, PoolReader(pool_file, cfg.selfplay.deterministic) if pool_file else None,
                            cfg.selfplay.weight, per_round=cfg.env.episode == "round", seed=seed + seat)
            for seat in range(n_opp)]


def make_vec_env(cfg: TrainConfig, pool_file: Path | None = None) -> VecEnv:
    """The vectorized training environments (VecMonitor gives SB3 its episode statistics)."""
    if cfg.env.vec_env == "native":
        from .native_vec_env import NativeVecEnv

        native = NativeVecEnv(cfg.env.n_envs, num_players=cfg.env.num_players,
                              opponents=make_opponents(cfg, pool_file, seed=cfg.seed * 7919),
                              episode=cfg.env.episode, reward=cfg.env.reward, reward_scale=cfg.env.reward_scale,
                              rules=cfg.env.rules)
        native.seed(cfg.seed)
        return VecMonitor(native)  # its masks come from the vector env: no ActionMaskCache
    subproc = cfg.env.vec_env == "subproc"
    fns = [make_env_fn(cfg, i, pool_file, subproc) for i in range(cfg.env.n_envs)]
    vec = SubprocVecEnv(fns) if subproc else DummyVecEnv(fns)
    vec.seed(cfg.seed)
    return VecMonitor(ActionMaskCache(vec))


class ActionMaskCache(VecEnvWrapper):
    """Serve MaskablePPO's ``action_masks()`` from the masks the envs already return.

    ``LamaDice-v1`` puts the learner's mask in ``info["action_mask"]`` (and in
    the reset info of an auto-reset episode); keeping them saves a second round
    trip to every ``SubprocVecEnv`` worker per step.
    """

    def __init__(self, venv: VecEnv) -> None:
        """Wrap ``venv``; no masks are known before the first reset."""
        super().__init__(venv)
        self._masks: np.ndarray | None = None

    @staticmethod
    def _from_infos(infos: Sequence[dict[str, Any]]) -> np.ndarray | None:
        if any("action_mask" not in i for i in infos):
            return None  # not LamaDice-v1: ask the envs
        return np.stack([np.asarray(i["action_mask"], dtype=bool) for i in infos])

    def reset(self) -> Any:
        """Reset the envs and keep the masks of their reset infos."""
        obs = self.venv.reset()
        self._masks = self._from_infos(self.venv.reset_infos)
        return obs

    def step_wait(self) -> Any:
        """Wait for the step and keep the masks of its infos (of the reset infos for finished episodes)."""
        obs, rewards, dones, infos = self.venv.step_wait()
        # a finished episode was reset at once: its next mask is in the reset info
        current = [self.venv.reset_infos[i] if done else info
                   for i, (done, info) in enumerate(zip(dones, infos, strict=True))]
        self._masks = self._from_infos(current)
        return obs, rewards, dones, infos

    def env_method(self, method_name: str, *args: Any, indices: Any = None, **kwargs: Any) -> list[Any]:
        """Call ``method_name`` of the envs; ``action_masks`` of all envs comes from the cached masks."""
        if method_name == "action_masks" and self._masks is not None and indices is None and not args and not kwargs:
            return list(self._masks)
        return self.venv.env_method(method_name, *args, indices=indices, **kwargs)


def _close_vec_env(vec_env: VecEnv, force: bool) -> None:
    """Close the environments; after Ctrl-C, stop subprocess workers without talking to them."""
    inner = vec_env.unwrapped
    if force and isinstance(inner, SubprocVecEnv):
        # A step may have been cut off half-way: the pipes are out of step, so don't wait on replies.
        for p in inner.processes:
            p.terminate()
        for p in inner.processes:
            p.join(timeout=5)
        inner.closed = True
        return
    vec_env.close()


# ---------------------------------------------------------------------------
# the model

_ACTIVATIONS = {"tanh": torch.nn.Tanh, "relu": torch.nn.ReLU, "elu": torch.nn.ELU, "leaky_relu": torch.nn.LeakyReLU}


def ppo_kwargs(cfg: TrainConfig) -> dict[str, Any]:
    """MaskablePPO keyword arguments of the config (hyperparameters and network)."""
    p = cfg.ppo
    arch = cfg.policy.net_arch
    net_arch = list(arch) if isinstance(arch, list) else {"pi": list(arch.pi), "vf": list(arch.vf)}
    return dict(
        learning_rate=LinearSchedule(p.learning_rate) if p.lr_schedule == "linear" else p.learning_rate,
        n_steps=p.n_steps, batch_size=p.batch_size, n_epochs=p.n_epochs, gamma=p.gamma,
        gae_lambda=p.gae_lambda, clip_range=p.clip_range, ent_coef=p.ent_coef, vf_coef=p.vf_coef,
        max_grad_norm=p.max_grad_norm, target_kl=p.target_kl, normalize_advantage=p.normalize_advantage,
        policy_kwargs=dict(net_arch=net_arch, activation_fn=_ACTIVATIONS[cfg.policy.activation],
                           ortho_init=cfg.policy.ortho_init),
    )


class LinearSchedule:
    """A learning rate decaying linearly from ``start`` to 0 over the run (picklable, so checkpoints keep it)."""

    def __init__(self, start: float) -> None:
        """A schedule starting at the learning rate ``start``."""
        self.start = start

    def __call__(self, progress_remaining: float) -> float:
        """The learning rate at ``progress_remaining`` (1 at the start, 0 at the end)."""
        return self.start * progress_remaining


def new_model(cfg: TrainConfig, vec_env: VecEnv, out: TextIO) -> MaskablePPO:
    """A new MaskablePPO model of the config, warm-started from ``policy.init_from`` if it names a checkpoint."""
    model = MaskablePPO(LamaMaskablePolicy, vec_env, **ppo_kwargs(cfg), seed=cfg.seed, device=cfg.device, verbose=0)
    if cfg.policy.init_from:
        value = init_weights(model, cfg)
        print(f"network weights from {cfg.policy.init_from} (policy{' and value' if value else ''}; "
              f"{'' if value else 'value network fresh; '}optimizer fresh)", file=out)
    return model


def warm_start_fields(cfg: TrainConfig, resume_ckpt: Path | None) -> dict[str, Any]:
    """What a new run's checkpoint sidecars say about its warm start (``init_from``); nothing for a resumed run."""
    return {"init_from": cfg.policy.init_from} if cfg.policy.init_from and resume_ckpt is None else {}


def _load_for_resume(ckpt: Path, vec_env: VecEnv, cfg: TrainConfig) -> MaskablePPO:
    try:
        return MaskablePPO.load(ckpt, env=vec_env, device=cfg.device)
    except Exception as e:  # any failure to rebuild the model means a bad checkpoint
        vec_env.close()
        msg = str(e).strip().splitlines()
        raise CheckpointError(f"cannot resume from {ckpt}: {type(e).__name__}: {msg[0] if msg else ''}") from None


# ---------------------------------------------------------------------------
# run folders

def _override(cfg: TrainConfig, **overrides: Any) -> TrainConfig:
    """``cfg`` with the command line's overrides (validated like the file)."""
    overrides = {k: v for k, v in overrides.items() if v is not None}
    if not overrides:
        return cfg
    return parse_config({**cfg.to_dict(), **overrides}, source="command line", check_agents=False)


def _claim_run_dir(path: Path) -> Path:
    """Use ``path`` as a new run folder (:func:`lama_dice.train.runs.claim_run_dir`); if taken, advise --resume."""
    return claim_run_dir(path, hint=f"choose another --run-dir, or continue that run with --resume {path}")


def _save_config(cfg: TrainConfig, run: Path) -> None:
    """Save the resolved config; a resumed session with other overrides never overwrites config.yaml.

    A session resumed with another ``--total-timesteps`` or ``--seed`` saves its config as
    ``config.resumed-YYYYmmdd-HHMMSS.yaml`` beside ``config.yaml``: the newest of them is the run's
    config from then on (:func:`run_config_path`).
    """
    text = cfg.to_yaml()
    path = run_config_path(run)
    if path is not None:
        if path.read_text(encoding="utf-8") == text:
            return
        path = run / f"config.resumed-{datetime.now().strftime('%Y%m%d-%H%M%S')}.yaml"
    else:
        path = run / "config.yaml"
    write_text(path, text, error=ConfigError)


def run_config_path(run: Path) -> Path | None:
    """The resolved config a run folder trains with: its newest ``config.resumed-*.yaml``, else ``config.yaml``."""
    resumed = sorted(run.glob("config.resumed-*.yaml"))
    if resumed:
        return resumed[-1]
    path = run / "config.yaml"
    return path if path.is_file() else None


#: The keys a resumed run may take from the command line rather than from its own config.
RESUME_OVERRIDES = ("total_timesteps", "seed")


def resume_config(ckpt: Path, config: TrainConfig | str | os.PathLike | None, out: TextIO,
                  overridden: set[str] | frozenset[str] = frozenset()) -> TrainConfig:
    """The config a run resumed from ``ckpt`` trains with: its run folder's own resolved config.

    The run folder's config (:func:`run_config_path`; the command line's ``--total-timesteps``
    and ``--seed`` of earlier sessions included) is the source of truth.  A ``config`` given as
    well must be the same config apart from its name, description and
    :data:`RESUME_OVERRIDES` (the run's values are kept for those; the command line may
    override them again: ``overridden`` names those the command line sets, about which
    nothing is said); a checkpoint outside a run folder needs ``config``.

    Raises:
        ConfigError: no config to resume with, or a ``config`` that is another one than the run's.
    """
    home = _run_dir_of(ckpt)
    own = run_config_path(home) if home is not None else None
    if own is None:
        if config is None:
            raise ConfigError(f"cannot resume {ckpt}: it is not in a run folder with a config.yaml; give the config "
                              "it was trained with")
        return config if isinstance(config, TrainConfig) else load_config(config)
    run_cfg = load_config(own)
    if config is None:
        return run_cfg
    given = config if isinstance(config, TrainConfig) else load_config(config)
    where = str(config) if not isinstance(config, TrainConfig) else "the config"
    ignored = ("name", "description", *RESUME_OVERRIDES)
    differ = [k for k in _differences(given.to_dict(), run_cfg.to_dict()) if k.split(".")[0] not in ignored]
    if differ:
        raise ConfigError(f"cannot resume {home} with {where}: it differs from the run's {own.name} in "
                          f"{', '.join(differ[:5])}{' ...' if len(differ) > 5 else ''}; resume the run as it was "
                          f"started (train --resume {home}, with --total-timesteps N to train longer), or start a "
                          f"new run from its weights (policy.init_from: {ckpt})")
    for key in RESUME_OVERRIDES:
        mine, theirs = getattr(run_cfg, key), getattr(given, key)
        if mine != theirs and key not in overridden:
            print(f"resuming with the run's {key} {mine:,} ({own.name}), not {theirs:,} ({where}); "
                  f"--{key.replace('_', '-')} changes it", file=out)
    return run_cfg


def _differences(a: Any, b: Any, prefix: str = "") -> list[str]:
    """The dotted keys where two resolved configs differ."""
    if isinstance(a, dict) and isinstance(b, dict):
        return [d for k in dict.fromkeys([*a, *b])
                for d in _differences(a.get(k), b.get(k), f"{prefix}.{k}" if prefix else str(k))]
    return [] if a == b else [prefix]


def _resumed_run_dir(ckpt: Path, cfg: TrainConfig, run_dir: str | os.PathLike | None,
                     runs_root: str | os.PathLike) -> tuple[Path, int]:
    """``(run folder, steps trained)`` of a run resumed from ``ckpt``: its own folder unless ``run_dir`` is another.

    Raises:
        CheckpointError, ConfigError: the checkpoint does not fit the config, or has trained
            ``total_timesteps`` already (before any folder is touched).
    """
    _check_resume_fits(ckpt, cfg)
    done = _trained_steps(ckpt)
    if cfg.total_timesteps <= done:
        raise ConfigError(f"total_timesteps is {cfg.total_timesteps:,} but {ckpt} has already trained "
                          f"{done:,} steps; pass a larger --total-timesteps to continue")
    home = _run_dir_of(ckpt)
    if run_dir is not None and (home is None or Path(run_dir).resolve() != home.resolve()):
        return _claim_run_dir(Path(run_dir)), done
    return home or new_run_dir(runs_root, cfg.name), done


def _resume_checkpoint(resume: str | os.PathLike) -> Path:
    """The checkpoint to resume from: a ``.zip``, or a run folder's latest one."""
    p = Path(resume)
    if not p.exists():  # (not a shipped agent's name: a run is resumed from its own folder or checkpoint)
        raise CheckpointError(f"cannot resume {p}: there is no such run folder or checkpoint file")
    if p.is_dir():
        cands = [p / "interrupted.zip", p / "final.zip", *sorted((p / "checkpoints").glob("step-*.zip"))]
        cands = [c for c in cands if c.is_file()]
        if not cands:
            raise CheckpointError(f"nothing to resume in {p} (no interrupted.zip, final.zip or checkpoints/step-*.zip)")
        return max(cands, key=lambda c: c.stat().st_mtime)
    return resolve_checkpoint(p)


def _trained_steps(ckpt: Path) -> int:
    """How many steps the checkpoint has trained (its sidecar, else the model's saved data)."""
    side = read_sidecar(ckpt)
    if side is not None and side.get("timesteps") is not None:
        return int(side["timesteps"])
    from stable_baselines3.common.save_util import load_from_zip_file

    try:
        data, _, _ = load_from_zip_file(ckpt, load_data=True, device="cpu")
        return int((data or {}).get("num_timesteps", 0))
    except Exception as e:  # any failure to read the zip means a bad checkpoint
        raise CheckpointError(f"cannot resume from {ckpt}: {type(e).__name__}: {e}") from None


def _run_dir_of(ckpt: Path) -> Path | None:
    """The run folder a checkpoint belongs to (the nearest folder above it with a config.yaml)."""
    for d in (ckpt.parent, ckpt.parent.parent):
        if (d / "config.yaml").is_file():
            return d
    return None


def _check_resume_fits(ckpt: Path, cfg: TrainConfig) -> None:
    """Refuse to resume a checkpoint trained for another game than the config's.

    Resuming unpickles the checkpoint anyway (``MaskablePPO.load``), so a checkpoint whose
    sidecar does not describe its network is read here by SB3's loader too, without the opt-in
    that ``ppo:PATH`` asks for (``--resume`` is the user's own trust; its help says so).
    """
    sidecar = read_sidecar(ckpt)
    if sidecar is not None and sidecar.get("network") is not None:
        _, sidecar, n = load_policy(ckpt)
    else:
        from lama_dice.agents.learned import players_for_obs_size
        from lama_dice.agents.ppo import load_sb3_policy

        found = players_for_obs_size(int(load_sb3_policy(ckpt).observation_space.shape[0]))
        if found is None:
            raise CheckpointError(f"cannot resume {ckpt}: its observations fit no player count of this game")
        n = found
    if n != cfg.env.num_players:
        raise CheckpointError(f"cannot resume {ckpt}: it was trained for {n} players, "
                              f"the config has env.num_players: {cfg.env.num_players}")
    if sidecar is not None and sidecar.get("rules") not in (None, cfg.rules.to_dict()):
        raise CheckpointError(f"cannot resume {ckpt}: it was trained with rules {sidecar['rules']}, "
                              f"the config has env.rules: {cfg.rules.to_dict()}")


def _trained_seconds(ckpt: Path) -> float:
    """The learning seconds the checkpoint's sidecar records (0 if it has none)."""
    try:
        side = read_sidecar(ckpt)
    except LamaDiceError:
        return 0.0
    return float((side or {}).get("train_seconds", 0.0))


def _previous_best(run: Path) -> float:
    """The evaluation score of the run's ``best.zip`` so far (so that a resumed run keeps its best)."""
    try:
        side = read_sidecar(run / "best.zip") if (run / "best.zip").is_file() else None
    except LamaDiceError:
        return -math.inf
    return float(side.get("eval_score", -math.inf)) if side else -math.inf


# ---------------------------------------------------------------------------
# the final evaluation table

def final_evaluation(model: MaskablePPO, cfg: TrainConfig, run: Path, out: TextIO | None = None,
                     progress: bool = True) -> dict[str, Any]:
    """Evaluate the model against ``eval.opponents`` (``eval.final_games`` games each); print, save ``eval.json``."""
    n = cfg.env.num_players
    # worker processes load the saved final.zip (the same weights); an in-memory policy stays here
    learner: str | PPOPolicy = (f"ppo:{run / 'final.zip'}" if cfg.eval.workers > 1 and (run / "final.zip").is_file()
                                else PPOPolicy.from_sb3(model.policy, n, spec="ppo:final"))
    t0 = time.perf_counter()
    seed = cfg.eval.seed + 1  # not the games of the periodic evaluations, which chose best.zip
    results = evaluate_learner(learner, cfg.eval.opponents, n, cfg.rules, cfg.eval.final_games, seed,
                               cfg.eval.workers, progress=progress)
    report = {"run": run.name, "checkpoint": "final.zip", "timesteps": int(model.num_timesteps),
              "players": n, "games_per_opponent": cfg.eval.final_games, "seed": seed,
              "rules": cfg.rules.to_dict(), "results": results, "seconds": round(time.perf_counter() - t0, 2)}
    write_text(run / "eval.json", json.dumps(report, indent=2) + "\n")
    print_eval_table(report, out)
    return report


def print_eval_table(report: dict[str, Any], out: TextIO | None = None) -> None:
    """Print an evaluation report (the content of ``eval.json``) as a table."""
    from rich.console import Console
    from rich.table import Table

    n, games = report["players"], report["games_per_opponent"]
    solo = n == 1
    title = f"final evaluation of {report['run']} at {report['timesteps']:,} steps"
    if solo:
        caption = f"solo: {games} games each, fewer points is better"
        cols = ["agent", "points/round", "final points"]
    else:
        caption = (f"the learner against {n - 1} of each opponent, {games} games each, seats rotating; "
                   f"ties share the win; 95% Wilson intervals")
        cols = ["opponent", "learner win rate", "95% CI", "points/round"]
    table = Table(title=title, caption=caption)
    for i, c in enumerate([*cols, "bust", "quit", "went out"]):
        table.add_column(c, justify="left" if i == 0 else "right")
    for key, r in report["results"].items():
        rates = [_pct(r.get("bust_rate")), _pct(r.get("quit_rate")), _pct(r.get("went_out_rate"))]
        if solo:
            table.add_row("learner" if key == "solo" else key, _f(r.get("mean_points_per_round")),
                          _f(r.get("mean_final_points"), 1), *rates)
        else:
            lo, hi = r["win_rate_ci95"]
            table.add_row(key, f"{r['win_rate']:.3f}", f"[{lo:.3f}, {hi:.3f}]",
                          _f(r.get("mean_points_per_round")), *rates)
    Console(file=out or sys.stdout, width=120).print(table)


def print_run_files(run: Path, out: TextIO | None = None) -> None:
    """Say where the run's files are: its folder, TensorBoard events, best and final checkpoints."""
    best = run / "best.zip"
    about = "none (no periodic evaluation ran)"
    side: dict[str, Any] = {}
    if best.is_file():
        side = read_sidecar(best) or {}
        score, steps = side.get("eval_score"), side.get("timesteps")
        about = str(best) + (f"  (evaluation score {score:.3f} at {steps:,} steps)"
                             if score is not None and steps is not None else "")
    tensorboard = f"{command('tensorboard', 'tensorboard.main')} --logdir {shell_path(run / 'tb')}"
    lines = [("run folder", str(run)),
             ("TensorBoard events", f"{run / 'tb'}  ({tensorboard})"),
             ("best checkpoint", about),
             ("final checkpoint", str(run / "final.zip"))]
    which, ckpt = ("best", best) if best.is_file() else ("final", run / "final.zip")
    players = side.get("num_players") or (read_sidecar(ckpt) or {}).get("num_players", 2) if ckpt.is_file() else 1
    if players > 1:  # (a solo agent has no one to play against)
        lines.append((f"play the {which}", f"{command('lama-dice', 'lama_dice')} play --players {players} "
                                           f"--opponents {shlex.quote(f'ppo:{near_path(ckpt)}')}"))
    for name, where in lines:
        print(f"{name + ':':<20}{where}", file=out or sys.stdout)


def _f(v: Any, digits: int = 2) -> str:
    return "-" if v is None else f"{v:.{digits}f}"


def _pct(v: Any) -> str:
    return "-" if v is None else f"{100 * v:.1f}%"
