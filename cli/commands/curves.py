"""Plot a training run's learning curves to an image file.

From its TensorBoard events, or (--evaluate) from its checkpoints evaluated
afterwards, against wall time of training and steps:

    lama-dice curves runs/ppo_2p-20261130-101500 --out curves.png
    lama-dice curves runs/ppo_2p_fast --evaluate lookahead --games 2000 --workers 2 --json curve.json

A panel with nothing to show says so (a run of the default config evaluates
nothing while it trains: --evaluate plots its checkpoints).  An existing output
file is never overwritten unless --force is given.
"""

from __future__ import annotations

import argparse
import json
import sys

from lama_dice.cli.options import add_json, add_seed, add_streams, add_workers

HELP = "plot a training run's learning curves (evaluation win rates with CIs) to a PNG"


def add_arguments(p: argparse.ArgumentParser) -> None:
    """Add the ``curves`` arguments to ``p``."""
    p.add_argument("run", help="a run folder (its tb/ events) or a folder of TensorBoard events")
    p.add_argument("--out", default="curves.png", help="image file to write (default curves.png; an existing file "
                                                        "is refused unless --force)")
    p.add_argument("--force", action="store_true", help="overwrite an existing --out or --json file")
    p.add_argument("--title", default=None, help="figure title")
    p.add_argument("--evaluate", nargs="+", metavar="SPEC", default=None,
                   help="evaluate every checkpoint of the run against these opponents (each fills all the other "
                        "seats) and plot win rate against wall time and steps")
    p.add_argument("--games", type=int, default=2000, help="with --evaluate: games per checkpoint and opponent")
    add_seed(p, help="with --evaluate: the seed, an integer >= 0 (default 0; the same games for each checkpoint)")
    add_workers(p, "with --evaluate: processes to play in")
    add_streams(p)
    p.add_argument("--goal", type=float, default=None, help="with --evaluate: a win rate to mark, e.g. 0.5")
    add_json(p, "the points (with --evaluate)")


def run(args: argparse.Namespace) -> int:
    """Plot the learning curves of ``args.run`` to ``args.out``; return the exit status."""
    from lama_dice.cli.curves import CurvesError, checkpoint_curve, plot_checkpoint_curve, plot_curves
    from lama_dice.cli.recordfile import check_output_path, write_json_file

    check_output_path("--out", args.out, CurvesError, force=args.force)
    if not args.evaluate:
        path = plot_curves(args.run, args.out, title=args.title)
        print(f"wrote {path}")
        return 0
    from lama_dice.cli.curves import run_checkpoints

    run_checkpoints(args.run)  # refuse before the evaluations: a run without checkpoints, an unwritable output
    check_output_path("--json", args.json, CurvesError, force=args.force)
    if args.games < 1:
        raise CurvesError(f"--games must be at least 1, got {args.games}")
    to_stdout = args.json == "-"  # the JSON alone on stdout; the lines below on stderr
    out = sys.stderr if to_stdout else sys.stdout
    data = checkpoint_curve(args.run, args.evaluate, args.games, args.seed, args.workers,
                            progress=lambda line: print(line, file=out, flush=True))
    if args.json and not to_stdout:
        write_json_file(args.json, data, CurvesError)
        print(f"wrote {args.json}")
    path = plot_checkpoint_curve(data, args.out, title=args.title, goal=args.goal)
    print(f"wrote {path}", file=out)
    if to_stdout:
        json.dump(data, sys.stdout, indent=2)
        sys.stdout.write("\n")
    return 0
