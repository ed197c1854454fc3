"""Plot a training run's learning curves (from its TensorBoard events) to an image file."""

from __future__ import annotations

import argparse

HELP = "plot a training run's learning curves (evaluation win rates with CIs) to a PNG"


def add_arguments(p: argparse.ArgumentParser) -> None:
    """Add the ``curves`` arguments to ``p``."""
    p.add_argument("run", help="a run folder (its tb/ events) or a folder of TensorBoard events")
    p.add_argument("--out", default="curves.png", help="image file to write (default curves.png)")
    p.add_argument("--title", default=None, help="figure title")


def run(args: argparse.Namespace) -> int:
    """Plot the learning curves of ``args.run`` to ``args.out``; return the exit status."""
    from lama_dice.cli.curves import plot_curves

    path = plot_curves(args.run, args.out, title=args.title)
    print(f"wrote {path}")
    return 0
