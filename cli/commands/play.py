"""Play Don't L.L.A.M.A. Dice in the terminal against agents.

Keys (then Enter): r = roll, q = quit; after a roll the discard or take
choices are numbered (1 = the largest discard, a = discard all you can);
Enter starts the next round.  Ctrl-C or Ctrl-D leaves the game; with --save
the record is written even then (replay it with `lama-dice replay`, watch it
with `lama-dice show`).

Examples:
  lama-dice play                                  # you against the default agent
  lama-dice play --players 4 --opponents threshold:0.2 random lookahead
  lama-dice play --players 3 --opponents ppo:3p  # the shipped network of each table size: ppo:2p ... ppo:6p
  lama-dice play --opponents ppo:runs/default/best.zip --seed 3 --save game.json
  lama-dice play --rule end_threshold=20 --rule triple_llama=also_match
"""

from __future__ import annotations

import argparse
import sys

from lama_dice.cli.options import add_rules, add_seed, rules_from_args

HELP = "play against agents in the terminal"


def add_arguments(p: argparse.ArgumentParser) -> None:
    """Add the ``play`` options to ``p``."""
    p.add_argument("--players", type=int, default=None, metavar="N",
                   help="number of players, you included (1..6; default: one more than the opponent specs, or 2)")
    p.add_argument("--opponents", nargs="+", default=None, metavar="SPEC",
                   help="agent spec(s): one for every opponent or one per opponent seat "
                        "(default: solo-optimal if available, else random; the shipped network of each "
                        "table size: ppo:2p, ppo:3p, ppo:4p, ppo:5p, ppo:6p)")
    p.add_argument("--seat", type=int, default=0, help="your seat, 0-based (default 0: you start round 1)")
    add_seed(p, default=None, help="seed for the deal, the dice and the agents, an integer >= 0 (default: a fresh one)")
    add_rules(p)
    p.add_argument("--save", default=None, metavar="RECORD.json",
                   help="write the game record here at the end (also when stopped early)")


def run(args: argparse.Namespace) -> int:
    """Play a game in the terminal against the opponents; return its exit status."""
    from rich.console import Console

    from lama_dice.cli.play import PlayError, TerminalGame, make_opponents, player_names, resolve_seats
    from lama_dice.cli.recordfile import check_output_path
    from lama_env.engine import LamaGame

    rules = rules_from_args(args)
    players, specs = resolve_seats(args.players, args.opponents, args.seat)
    opponents = make_opponents(specs, args.seed, num_players=players)
    # game 0 of the compiled engine's streams of the seed (as the envs, evaluate --backend fast); pauses between rounds
    game = LamaGame(players, rules, seed=args.seed, game_id=0)
    console = Console(highlight=False)
    terminal = TerminalGame(game, opponents, human=args.seat, stdin=sys.stdin, console=console,
                            save=args.save, names=player_names(players, args.seat, specs),
                            seed=args.seed, specs=specs)
    check_output_path("--save", args.save, PlayError)  # a folder that cannot be written: before the game
    return terminal.run().exit_code
