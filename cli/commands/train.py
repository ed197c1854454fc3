"""Train a MaskablePPO agent from a YAML config.

  lama-dice train default                          # a shipped config, by name
  lama-dice train configs/default.yaml             # or any YAML file
  lama-dice train configs/2p_selfplay.yaml --total-timesteps 5000000 --seed 3
  lama-dice train --resume runs/2p_selfplay-20250101-120000  # continue a run as it was started

The config is validated before anything starts. Each run gets a folder
(runs/NAME-YYYYmmdd-HHMMSS/, or --run-dir) with the resolved config.yaml,
TensorBoard events (tensorboard --logdir runs/), checkpoints/ and best.zip,
final.zip, eval.json. Every .zip loads as the agent ppo:PATH in every tool.
Ctrl-C saves interrupted.zip and prints how to resume.  SB3 trains whole
rollouts (ppo.n_steps x env.n_envs steps): when that rounds total_timesteps up,
the run says so at the start, and reports the steps trained at the end.

An `algorithm: expert_iteration` config (configs/expert_iteration_2p.yaml) runs expert
iteration instead (lama_dice.train.expert_iteration: the rollout search labels self-play
positions, the networks learn its improved policy, a gate keeps the better pair); it resumes
with --resume RUN after Ctrl-C or a stop, and --iterations N runs it up to N iterations.

--resume RUN continues a run with the run folder's own config (the command
line's --total-timesteps and --seed of its first session included); CONFIG is
then not needed, and if given must be that same config.  --check prints the
config the run would use (with --total-timesteps and --seed) and starts
nothing.  --resume loads the checkpoint with Stable-Baselines3, which
unpickles it (code in the file runs): resume only your own runs, or runs you
trust; to use someone else's checkpoint as an agent, ppo:PATH reads it safely.
"""

from __future__ import annotations

import argparse

from lama_dice.cli.options import add_progress, add_seed, at_least

HELP = "train a MaskablePPO agent from a YAML config (TensorBoard, checkpoints, self-play)"


def add_arguments(p: argparse.ArgumentParser) -> None:
    """Add the ``train`` arguments and options to ``p``."""
    from lama_dice.configs import shipped

    # every shipped config, default first (lama_dice.configs, not the slow config module)
    names = sorted(shipped(), key=lambda n: (n != "default", n))
    p.add_argument("config", metavar="CONFIG", nargs="?", default=None,
                   help="a training config file (YAML), or the name of a shipped config: "
                        f"{', '.join(names)} (not needed with --resume: the run's own config is used)")
    p.add_argument("--run-dir", metavar="DIR", default=None,
                   help="the run folder (default runs/NAME-YYYYmmdd-HHMMSS); must not hold a run")
    p.add_argument("--total-timesteps", type=at_least(1), metavar="N", default=None,
                   help="override total_timesteps (with --resume: the total to reach)")
    add_seed(p, default=None, help="override the config's seed, an integer >= 0")
    p.add_argument("--resume", metavar="RUN", default=None,
                   help="continue a run folder (from its latest checkpoint) or a checkpoint .zip, in its run "
                        "folder, with the run's own config.yaml. Resuming loads the whole SB3 model, which "
                        "unpickles it and can run code from the file: resume only runs you made or trust")
    p.add_argument("--iterations", type=at_least(1), metavar="N", default=None,
                   help="algorithm: expert_iteration only: run up to N iterations (with --resume: the total to reach)")
    p.add_argument("--runs-root", metavar="DIR", default="runs", help="parent of new run folders (default runs/)")
    add_progress(p)
    p.add_argument("--check", action="store_true", help="only validate the config and print it resolved")


def run(args: argparse.Namespace) -> int:
    """Train from the config (SB3 or RLlib pipeline), or with ``--check`` print it resolved; return the exit status."""
    import sys

    from lama_dice.train.config import ConfigError, load_config, resolve_config
    from lama_dice.train.expert_config import is_expert_iteration_config
    from lama_dice.train.rllib.config import is_rllib_config

    if args.config is None and args.resume is None:
        raise ConfigError("give a CONFIG to train (a YAML file or a shipped config's name), or --resume RUN to "
                          "continue a run")
    if args.config is not None:
        args.config = str(resolve_config(args.config))
        if is_rllib_config(args.config):  # `algorithm: rllib-ppo`: the Ray RLlib pipeline
            from lama_dice.train.rllib.trainer import run_command

            return run_command(args)
    expert = (is_expert_iteration_config(args.config) if args.config is not None else
              is_expert_iteration_config(f"{args.resume}/config.yaml"))
    if expert:  # `algorithm: expert_iteration`: lama_dice.train.expert_iteration
        from lama_dice.train.expert_iteration import run_command as run_expert_iteration

        return run_expert_iteration(args)
    if args.iterations is not None:
        raise ConfigError("--iterations is an option of algorithm: expert_iteration configs only")
    if args.resume is not None:  # the run's own config; CONFIG, if given, must be that one (checked by the trainer)
        from lama_dice.train.trainer import run_config, train

        if args.check:
            cfg, _ = run_config(args.config, resume=args.resume, total_timesteps=args.total_timesteps,
                                seed=args.seed, out=sys.stderr)
            print(cfg.to_yaml(), end="")
            return 0
        result = train(args.config, run_dir=args.run_dir, total_timesteps=args.total_timesteps, seed=args.seed,
                       resume=args.resume, progress_bar=not args.no_progress, runs_root=args.runs_root)
        return 130 if result.interrupted else 0
    cfg = load_config(str(args.config))
    if args.check:  # the config the run would use: the file with the command line's overrides
        from lama_dice.train.config import parse_config

        overrides = {k: v for k, v in (("total_timesteps", args.total_timesteps), ("seed", args.seed))
                     if v is not None}
        if overrides:
            cfg = parse_config({**cfg.to_dict(), **overrides}, source="command line")
        print(cfg.to_yaml(), end="")
        note = cfg.rounding_note()
        if note:
            print(f"note: {note}", file=sys.stderr)
        return 0
    from lama_dice.train.trainer import train

    result = train(cfg, run_dir=args.run_dir, total_timesteps=args.total_timesteps, seed=args.seed,
                   progress_bar=not args.no_progress, runs_root=args.runs_root)
    return 130 if result.interrupted else 0
