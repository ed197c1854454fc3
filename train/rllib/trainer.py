"""Train on Ray RLlib (PPO, self-play, any number of env runners): ``algorithm: rllib-ppo``.

For runs that outgrow one machine, lama-dice trains with Ray RLlib's PPO
rather than a distributed trainer of its own. Install the extra and run a
config whose ``algorithm`` is ``rllib-ppo``::

    pip install "lama-dice[rllib]"
    python -m lama_dice.train.rllib configs/rllib_2p.yaml              # ray.init() on this machine
    python -m lama_dice.train.rllib configs/rllib_2p.yaml --address auto   # an existing Ray cluster
    lama-dice evaluate rllib:runs/rllib_2p-20250101-120000 optimal --games 2000 --allow-pickle

What a run does, in order (:func:`train`):

1. validate the config (:class:`~lama_dice.train.rllib.config.RLlibTrainConfig`,
   :mod:`lama_dice.train.rllib.config`);
2. make the run folder ``runs/NAME-YYYYmmdd-HHMMSS/`` (or ``--run-dir``: new or
   empty, :mod:`lama_dice.train.runs`) with the resolved ``config.yaml``;
3. ``ray.init()`` locally (``ray.num_cpus`` CPUs, no dashboard) or
   ``ray.init(address=ray.address)`` on a cluster, unless Ray is already up;
4. build RLlib's PPO (new API stack) on :class:`lama_dice.train.rllib.env.LamaDiceRLlibEnv`,
   the PettingZoo env ``lama_dice_v1`` through RLlib's ``PettingZooEnv``
   wrapper, with the action-masking :class:`~lama_dice.train.rllib.module.MaskedPPOTorchRLModule`;
   every learner seat maps to the one shared module ``"main"`` (self-play
   through the policy mapping), and configured opponents (heuristics or frozen
   ``ppo:``/``rllib:`` checkpoints) take seats inside the env;
5. ``algo.train()`` for ``iterations`` iterations, writing TensorBoard scalars
   to ``tb/`` after each (:mod:`lama_dice.train.rllib.metrics`): the SB3 pipeline's ``game/*`` scalars (win rate,
   points per round, bust / quit / went-out rates, ...), ``rllib/*`` (returns,
   losses, entropy, throughput) and ``eval/<opponent>/*`` every
   ``eval.every`` iterations;
6. save RLlib checkpoints (``checkpoints/iter-N/`` every ``checkpoint.every``
   iterations, and ``final/``), each with a ``lama_dice.json`` sidecar, so
   ``rllib:RUN`` plays it in every tool; Ctrl-C saves ``interrupted/``;
7. evaluate ``final/`` against ``eval.opponents`` with :func:`lama_dice.evaluation.evaluate.evaluate`
   and save ``eval.json``.

The YAML schema is in :mod:`lama_dice.train.rllib.config`. The config is validated
without Ray; only :func:`train` (and :func:`measure_sampling`, the
``--measure-sampling`` benchmark) need the extra (else
:class:`lama_dice.agents.rllib_agent.RLlibMissingError` with the install command).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lama_dice.atomic import write_text
from lama_env.errors import LamaDiceError

from ..runs import make_run_dir, stop_on_sigterm
from .config import ALGORITHM, MODULE_ID, RLlibConfigError, RLlibTrainConfig, load_rllib_config, parse_rllib_config
from .metrics import eval_scalars, game_scalars, rllib_scalars

__all__ = [
    "RLlibTrainResult", "add_arguments", "build_algorithm_config", "main", "measure_sampling", "run_command",
    "save_checkpoint", "shared_policy_mapping", "train",
]


# ---------------------------------------------------------------------------
# RLlib

def shared_policy_mapping(agent_id: Any, episode: Any, **kwargs: Any) -> str:
    """The policy mapping of self-play: every learner seat is the shared module ``"main"``."""
    return MODULE_ID


def build_algorithm_config(cfg: RLlibTrainConfig) -> Any:
    """RLlib's :class:`~ray.rllib.algorithms.ppo.PPOConfig` for ``cfg`` (new API stack).

    Raises:
        lama_dice.agents.rllib_agent.RLlibMissingError: the ``rllib`` extra is not installed.
    """
    from lama_dice.agents.rllib_agent import require_ray

    require_ray("algorithm: rllib-ppo")
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.rllib.core.rl_module.multi_rl_module import MultiRLModuleSpec

    from .env import LamaDiceRLlibEnv
    from .metrics import GameStatsCallback
    from .module import module_spec

    r, p, m = cfg.ray, cfg.ppo, cfg.model
    return (
        PPOConfig()
        # RLlib's env pre-check steps random actions, illegal in a masked game: skip it
        .environment(env=LamaDiceRLlibEnv, env_config=cfg.env_config(), disable_env_checking=True)
        .multi_agent(policies={MODULE_ID}, policy_mapping_fn=shared_policy_mapping, policies_to_train=[MODULE_ID])
        .rl_module(rl_module_spec=MultiRLModuleSpec(rl_module_specs={
            MODULE_ID: module_spec(m.hidden, m.activation, m.vf_share_layers)}))
        .env_runners(num_env_runners=r.num_env_runners, num_envs_per_env_runner=r.num_envs_per_env_runner,
                     num_cpus_per_env_runner=r.num_cpus_per_env_runner,
                     rollout_fragment_length=r.rollout_fragment_length)
        .learners(num_learners=r.num_learners, num_gpus_per_learner=r.num_gpus_per_learner)
        .training(lr=p.lr, train_batch_size_per_learner=p.train_batch_size, minibatch_size=p.minibatch_size,
                  num_epochs=p.num_epochs, gamma=p.gamma, lambda_=p.lambda_, clip_param=p.clip_param,
                  vf_clip_param=p.vf_clip_param, entropy_coeff=p.entropy_coeff, vf_loss_coeff=p.vf_loss_coeff,
                  grad_clip=p.grad_clip, use_kl_loss=p.use_kl_loss, kl_coeff=p.kl_coeff)
        .callbacks(GameStatsCallback)
        .debugging(seed=cfg.seed, log_level="ERROR")
    )


# ---------------------------------------------------------------------------
# the training loop

@dataclass
class RLlibTrainResult:
    """What :func:`train` returns."""

    run_dir: Path
    checkpoint: Path | None  #: final/ (or interrupted/)
    iterations: int  #: iterations done
    timesteps: int  #: env steps sampled
    interrupted: bool = False
    history: list[dict[str, float]] = field(default_factory=list)  #: per-iteration scalars
    evaluation: dict[str, Any] | None = None  #: the final evaluation (eval.json)


def save_checkpoint(algo: Any, path: Path, cfg: RLlibTrainConfig, iteration: int, timesteps: int) -> Path:
    """``algo.save_to_path(path)`` plus the ``lama_dice.json`` sidecar that ``rllib:PATH`` reads."""
    from lama_dice.agents.rllib_agent import DEFAULT_MODULE_ID, SIDECAR_FORMAT, SIDECAR_NAME

    path = Path(path).absolute()
    path.parent.mkdir(parents=True, exist_ok=True)
    algo.save_to_path(str(path))
    sidecar = {"format": SIDECAR_FORMAT, "algorithm": ALGORITHM, "module_id": DEFAULT_MODULE_ID,
               "num_players": cfg.env.num_players, "rules": cfg.rules.to_dict(), "iteration": iteration,
               "timesteps": timesteps, "config": cfg.name}
    write_text(path / SIDECAR_NAME, json.dumps(sidecar, indent=2) + "\n")
    return path


def _init_ray(cfg: RLlibTrainConfig) -> bool:
    """Start or join Ray as configured; True when this call started it (and should shut it down)."""
    import ray

    if ray.is_initialized():
        return False
    kw: dict[str, Any] = {"log_to_driver": False, "include_dashboard": False}
    if cfg.ray.runtime_env is not None:
        kw["runtime_env"] = cfg.ray.runtime_env
    if cfg.ray.address is not None:
        ray.init(address=cfg.ray.address, **kw)
    else:
        ray.init(address="local", num_cpus=cfg.ray.num_cpus, **kw)  # a new local instance, never a stray one
    return True


def _current_policy(algo: Any, num_players: int) -> Any:
    from lama_dice.agents.rllib_agent import RLlibPolicy

    return RLlibPolicy.from_module(algo.get_module(MODULE_ID), num_players, spec="rllib:current")


def _evaluate(policy: Any, cfg: RLlibTrainConfig, games: int) -> dict[str, dict[str, Any]]:
    from lama_dice.train.callbacks import evaluate_learner

    return evaluate_learner(policy, cfg.eval.opponents, cfg.env.num_players, cfg.rules, games=games,
                            seed=cfg.eval.seed, workers=cfg.eval.workers)


def _iteration(algo: Any, cfg: RLlibTrainConfig, it: int) -> dict[str, float]:
    """Train iteration ``it``; its scalars (game, RLlib, timing and, when due, evaluation ones)."""
    n = cfg.env.num_players
    t0 = time.perf_counter()
    res = algo.train()
    wall = time.perf_counter() - t0
    scalars = {f"game/{k}": v for k, v in game_scalars(res, n).items()}
    scalars.update({f"rllib/{k}": v for k, v in rllib_scalars(res).items()})
    scalars["rllib/iteration_s"] = wall
    if scalars.get("rllib/env_steps_sampled"):
        scalars["rllib/steps_per_s"] = scalars["rllib/env_steps_sampled"] / wall
    if cfg.eval.every and it % cfg.eval.every == 0:
        for opp, st in _evaluate(_current_policy(algo, n), cfg, cfg.eval.games).items():
            scalars.update(eval_scalars(opp, st))
    return scalars


def train(cfg: RLlibTrainConfig, *, run_dir: str | os.PathLike | None = None, iterations: int | None = None,
          seed: int | None = None, runs_root: str | os.PathLike = "runs", quiet: bool = False,
          log: Any = None) -> RLlibTrainResult:
    """Train ``cfg`` with RLlib's PPO (see the module docstring for what a run does).

    Args:
        cfg: the validated config.
        run_dir: the run folder (default ``runs_root/NAME-YYYYmmdd-HHMMSS``); it must be new or empty.
        iterations: overrides the config's ``iterations`` (None: keep it).
        seed: overrides the config's ``seed`` (None: keep it).
        runs_root: parent of new run folders.
        quiet: print nothing.
        log: where progress lines go (default stderr).

    Raises:
        lama_dice.agents.rllib_agent.RLlibMissingError: the ``rllib`` extra is not installed.
        lama_dice.train.runs.RunDirError: the run folder is not empty or cannot be created.
    """
    from lama_dice.agents.rllib_agent import require_ray

    require_ray("algorithm: rllib-ppo")
    updates: dict[str, Any] = {}
    if iterations is not None:
        updates["iterations"] = iterations
    if seed is not None:
        updates["seed"] = seed
    if updates:
        cfg = parse_rllib_config({**cfg.to_dict(), **updates}, source="config", check_agents=False)
    out = log if log is not None else sys.stderr

    def say(msg: str) -> None:
        if not quiet:
            print(msg, file=out, flush=True)

    d = make_run_dir(run_dir, runs_root, cfg.name)
    write_text(d / "config.yaml", cfg.to_yaml())
    from torch.utils.tensorboard import SummaryWriter

    started = _init_ray(cfg)
    algo = None
    writer = SummaryWriter(str(d / "tb"))
    result = RLlibTrainResult(run_dir=d, checkpoint=None, iterations=0, timesteps=0)
    n = cfg.env.num_players
    try:
        algo = build_algorithm_config(cfg).build_algo()
        say(f"rllib-ppo: {cfg.iterations} iterations of {cfg.ppo.train_batch_size} steps, "
            f"{cfg.ray.num_env_runners} env runner(s); run folder {d}")
        with stop_on_sigterm():  # SIGTERM: as Ctrl-C
            try:
                for it in range(1, cfg.iterations + 1):
                    scalars = _iteration(algo, cfg, it)
                    steps = int(scalars.get("rllib/env_steps_sampled_lifetime", result.timesteps))
                    for k, v in scalars.items():
                        writer.add_scalar(k, v, steps)
                    writer.flush()
                    result.iterations, result.timesteps = it, steps
                    result.history.append(dict(scalars, iteration=it, timesteps=steps))
                    say(_progress_line(it, cfg.iterations, steps, scalars))
                    if cfg.checkpoint.every and it % cfg.checkpoint.every == 0:
                        save_checkpoint(algo, d / "checkpoints" / f"iter-{it:06d}", cfg, it, steps)
            except KeyboardInterrupt:
                result.interrupted = True
                result.checkpoint = save_checkpoint(algo, d / "interrupted", cfg, result.iterations, result.timesteps)
                say(f"interrupted: saved {result.checkpoint} (evaluate it: lama-dice evaluate rllib:{d} ...)")
                return result
        result.checkpoint = save_checkpoint(algo, d / "final", cfg, result.iterations, result.timesteps)
        say(f"saved {result.checkpoint}")
        if cfg.eval.final_games and (n == 1 or cfg.eval.opponents):
            ev = _evaluate(_current_policy(algo, n), cfg, cfg.eval.final_games)
            result.evaluation = ev
            write_text(d / "eval.json", json.dumps(ev, indent=2) + "\n")
            for opp, st in ev.items():
                say(f"  final vs {opp}: " + _stats_line(st))
        return result
    finally:
        writer.close()
        if algo is not None:
            algo.stop()
        if started:
            import ray

            ray.shutdown()


def measure_sampling(cfg: RLlibTrainConfig, rounds: int = 3) -> dict[str, float]:
    """Env-runner throughput: env steps sampled per second by all env runners together (no learning).

    Builds the algorithm of ``cfg``, samples once to warm up, then ``rounds``
    times ``ppo.train_batch_size`` steps split over the env runners (in
    parallel, as ``algo.train()`` does), and times those.

    Returns:
        ``{"env_runners", "envs_per_env_runner", "steps", "seconds", "steps_per_s"}``.
    """
    from lama_dice.agents.rllib_agent import require_ray

    require_ray("algorithm: rllib-ppo")
    started = _init_ray(cfg)
    algo = None
    try:
        algo = build_algorithm_config(cfg).build_algo()
        n = cfg.ray.num_env_runners
        per = max(1, cfg.ppo.train_batch_size // max(1, n))

        def sample(runner: Any) -> int:
            return sum(len(e) for e in runner.sample(num_timesteps=per))

        group = algo.env_runner_group
        group.foreach_env_runner(sample, local_env_runner=n == 0)  # warm-up
        steps = 0
        t0 = time.perf_counter()
        for _ in range(rounds):
            steps += sum(group.foreach_env_runner(sample, local_env_runner=n == 0))
        wall = time.perf_counter() - t0
    finally:
        if algo is not None:
            algo.stop()
        if started:
            import ray

            ray.shutdown()
    return {"env_runners": n, "envs_per_env_runner": cfg.ray.num_envs_per_env_runner, "steps": steps,
            "seconds": round(wall, 3), "steps_per_s": round(steps / wall, 1)}


def _stats_line(st: Mapping[str, Any]) -> str:
    parts = []
    for key in ("win_rate", "mean_points_per_round"):
        v = st.get(key)
        if isinstance(v, (int, float)):
            parts.append(f"{key} {v:.3f}")
    return ", ".join(parts) or json.dumps(st)


def _progress_line(it: int, total: int, steps: int, s: Mapping[str, float]) -> str:
    parts = [f"iter {it}/{total}", f"steps {steps}"]
    for key, fmt in (("game/win_rate", "win {:.3f}"), ("game/points_per_round", "pts/round {:.2f}"),
                     ("rllib/episode_return_mean", "return {:.3f}"), ("rllib/steps_per_s", "{:.0f} steps/s")):
        if key in s:
            parts.append(fmt.format(s[key]))
    return "  ".join(parts)


# ---------------------------------------------------------------------------
# command line

def add_arguments(p: argparse.ArgumentParser) -> None:
    """The options of ``python -m lama_dice.train.rllib`` (and of ``lama-dice train`` for rllib-ppo configs)."""
    p.add_argument("config", metavar="CONFIG.yaml", help="an 'algorithm: rllib-ppo' config (see configs/rllib_2p.yaml)")
    p.add_argument("--run-dir", metavar="DIR", default=None, help="the run folder (default runs/NAME-YYYYmmdd-HHMMSS)")
    p.add_argument("--iterations", type=int, metavar="N", default=None, help="override iterations")
    p.add_argument("--seed", type=int, metavar="S", default=None, help="override seed")
    p.add_argument("--address", metavar="ADDR", default=None,
                   help="join a running Ray cluster (overrides ray.address; e.g. auto or ray://HEAD:10001)")
    p.add_argument("--env-runners", type=int, metavar="N", default=None, help="override ray.num_env_runners")
    p.add_argument("--runs-root", metavar="DIR", default="runs", help="parent of new run folders (default runs/)")
    p.add_argument("--envs-per-runner", type=int, metavar="N", default=None,
                   help="override ray.num_envs_per_env_runner")
    p.add_argument("--check", action="store_true", help="only validate the config and print it resolved")
    p.add_argument("--measure-sampling", action="store_true",
                   help="only measure the env runners' steps per second (no learning) and print it as JSON")


def run_command(args: argparse.Namespace) -> int:
    """Run from parsed arguments (``lama-dice train`` dispatches here for ``algorithm: rllib-ppo``).

    Returns:
        0, or 130 when interrupted. Bad input raises a :class:`LamaDiceError` (one line).
    """
    cfg = load_rllib_config(args.config)
    if getattr(args, "resume", None):
        raise RLlibConfigError(f"{args.config}: --resume is not supported for algorithm: {ALGORITHM} "
                               f"(start a new run; frozen checkpoints can be opponents: rllib:PATH)")
    iterations = getattr(args, "iterations", None)
    total = getattr(args, "total_timesteps", None)  # lama-dice train's option: whole iterations of it
    if iterations is None and total is not None:
        iterations = max(1, math.ceil(total / cfg.ppo.train_batch_size))
    ray_over: dict[str, Any] = {}
    if getattr(args, "address", None) is not None:
        ray_over["address"] = args.address
        ray_over["num_cpus"] = None
    if getattr(args, "env_runners", None) is not None:
        ray_over["num_env_runners"] = args.env_runners
    if getattr(args, "envs_per_runner", None) is not None:
        ray_over["num_envs_per_env_runner"] = args.envs_per_runner
    if ray_over:
        data = cfg.to_dict()
        data["ray"] = {**data["ray"], **ray_over}
        cfg = parse_rllib_config(data, source=str(args.config), check_agents=False)
    if getattr(args, "check", False):  # the config the run would use, with the command line's overrides
        over = {k: v for k, v in (("iterations", iterations), ("seed", getattr(args, "seed", None))) if v is not None}
        if over:
            cfg = parse_rllib_config({**cfg.to_dict(), **over}, source="command line", check_agents=False)
        print(cfg.to_yaml(), end="")
        return 0
    if getattr(args, "measure_sampling", False):
        print(json.dumps(measure_sampling(cfg)))
        return 0
    res = train(cfg, run_dir=getattr(args, "run_dir", None), iterations=iterations,
                seed=getattr(args, "seed", None), runs_root=getattr(args, "runs_root", "runs"))
    return 130 if res.interrupted else 0


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m lama_dice.train.rllib CONFIG.yaml [options]``."""
    p = argparse.ArgumentParser(prog="python -m lama_dice.train.rllib", description=__doc__.split("\n\n")[0])
    add_arguments(p)
    args = p.parse_args(argv)
    try:
        from lama_env.extras import require_extra

        require_extra("train", "python -m lama_dice.train.rllib")  # the RLModule is torch
        return run_command(args)
    except LamaDiceError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
