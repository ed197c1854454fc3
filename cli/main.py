"""The ``lama-dice`` command line.

Each subcommand lives in its own module under :mod:`lama_dice.cli.commands` and
exposes ``HELP`` (one line), ``add_arguments(parser)`` and ``run(args) -> int``.
Command modules keep their module-level imports light (no torch, no gym):
heavy imports go inside ``run`` so that ``lama-dice --help`` stays instant.

Errors derived from :class:`lama_env.errors.LamaDiceError` are printed as one
line of bounded length (``lama-dice CMD: error: ...``) with exit status 2; Ctrl-C exits 130.
A usage error (an unknown option, a bad option value) is one line too (:class:`Parser`).
"""

from __future__ import annotations

import argparse
import importlib
import re
import sys
from collections.abc import Sequence
from typing import NoReturn

from lama_env.errors import LamaDiceError, bounded

#: Subcommand name -> module path, in the order ``--help`` lists them.
COMMANDS: dict[str, str] = {
    "replay": "lama_dice.cli.commands.replay",
    "show": "lama_dice.cli.commands.show",
    "solve": "lama_dice.cli.commands.solve",
    "evaluate": "lama_dice.cli.commands.evaluate",
    "score": "lama_dice.cli.commands.score",
    "exploit": "lama_dice.cli.commands.exploit",
    "train": "lama_dice.cli.commands.train",
    "play": "lama_dice.cli.commands.play",
    "serve": "lama_dice.cli.commands.serve",
    "bench": "lama_dice.cli.commands.bench",
    "curves": "lama_dice.cli.commands.curves",
    "export": "lama_dice.cli.commands.export",
}

#: Commands that need an extra beyond the core install, checked before they run (one line that says how to
#: install it: :func:`lama_env.extras.require_extra`); ``ppo:`` of a trainer checkpoint checks where it loads one.
NEEDS_EXTRA: dict[str, str] = {"train": "train", "exploit": "train", "curves": "train", "serve": "web"}

#: Commands that load agents or checkpoints: they take ``--allow-pickle`` (:mod:`lama_dice.agents.trust`).
LOADING_COMMANDS = ("solve", "evaluate", "score", "exploit", "train", "play", "curves", "export")


class Parser(argparse.ArgumentParser):
    """argparse's parser whose usage errors are one line naming the option, then how to get help (exit 2)."""

    def error(self, message: str) -> NoReturn:
        """Print ``PROG: error: MESSAGE (see: PROG --help)`` on stderr and exit with status 2."""
        self.exit(2, f"{self.prog}: error: {bounded(message)} (see: {self.prog} --help)\n")


#: reST in a command's docstring: inline literals, roles, a ``::`` that opens a literal block.
_REST_LITERAL = re.compile(r"``(.+?)``", re.S)
_REST_ROLE = re.compile(r":[a-z]+:`~?([^`]+)`")
_REST_BLOCK = re.compile(r"(\S)::$|^\s*::$", re.M)


def plain_text(doc: str) -> str:
    """A command's docstring as its ``--help`` shows it: reST's markup (````x````, ``:func:`x```, ``::``) as text."""
    doc = _REST_ROLE.sub(r"\1", _REST_LITERAL.sub(r"\1", doc))
    return _REST_BLOCK.sub(lambda m: f"{m.group(1)}:" if m.group(1) else "", doc)


def build_parser() -> argparse.ArgumentParser:
    """The ``lama-dice`` parser, with one subparser per subcommand built into this version."""
    from lama_env import __version__

    parser = Parser(
        prog="lama-dice",
        description="Don't L.L.A.M.A. Dice: a reinforcement-learning benchmark.",
    )
    parser.add_argument("--version", action="version", version=f"lama-dice {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    for name, path in COMMANDS.items():
        try:
            mod = importlib.import_module(path)
        except ModuleNotFoundError as e:
            if e.name == path:  # command not built in this version
                continue
            raise
        p = sub.add_parser(name, help=mod.HELP, description=plain_text(getattr(mod, "__doc__", None) or mod.HELP),
                           formatter_class=argparse.RawDescriptionHelpFormatter)
        mod.add_arguments(p)
        if name in LOADING_COMMANDS:
            p.add_argument("--allow-pickle", action="store_true",
                           help="also load files that only load by unpickling them (rllib: checkpoints, ppo: "
                                "checkpoints of older versions): that runs code from the file, so only for files "
                                "you trust (same as LAMA_DICE_ALLOW_PICKLE=1)")
        p.set_defaults(_module=mod)
    return parser


def freeze_after_load() -> None:
    """Once the compiled engine is loaded, move every object alive then out of the garbage collector's scans.

    Numba's import and loading leave about 120,000 objects that live as long as the process; every
    full collection of the cyclic GC scans them again, which made allocation-heavy Python code beside
    a game (the solo solver filling its tables) up to 1.8x slower.  The command line (a process of its
    own) freezes them once (``gc.freeze``) when the first game loads the engine
    (:data:`lama_env.engine.LOAD_HOOKS`); the library never changes its host process.
    ``LAMA_DICE_GC_FREEZE=0``: not.
    """
    import gc
    import os

    from lama_env import engine

    if os.environ.get("LAMA_DICE_GC_FREEZE", "1") != "0" and gc.freeze not in engine.LOAD_HOOKS:
        engine.LOAD_HOOKS.append(gc.freeze)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``lama-dice`` command line on ``argv``; return the exit status (2: error, 130: interrupted)."""
    parser = build_parser()
    args = parser.parse_args(argv)
    from lama_dice.cli import jit_note

    jit_note.install()  # one line on stderr before a first compile of the engine
    freeze_after_load()
    try:
        if args.command in NEEDS_EXTRA:
            from lama_env.extras import require_extra

            require_extra(NEEDS_EXTRA[args.command], f"lama-dice {args.command}")
        if getattr(args, "allow_pickle", False):
            from lama_dice.agents.trust import allow_pickle

            allow_pickle()
        return int(args._module.run(args) or 0)
    except LamaDiceError as e:
        print(f"lama-dice {args.command}: error: {bounded(str(e))}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"lama-dice {args.command}: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
