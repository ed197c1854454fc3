"""Write a weights-only agent file (.safetensors) from a trained policy you trust.

  lama-dice export ppo:runs/2p-20250101-120000 my_2p.safetensors      # a run folder (its best.zip)
  lama-dice export ppo:runs/x/final.zip my_2p.safetensors
  lama-dice export ppo:old/best.zip old.safetensors --allow-pickle    # a checkpoint of an older lama-dice
  lama-dice export rllib:runs/rllib_2p-20250101-120000 rl.safetensors --allow-pickle

The agent file holds the policy network's weights (safetensors) and a JSON description
(players, rules, observation layout, layers, training); loading it builds the network
and fills in the weights, so nothing in it can run: it is the way to share an agent,
or to score one you were sent.  Play it as ppo:FILE.safetensors in every tool.

A trainer checkpoint whose sidecar describes its network (this version writes that) is
read weights-only.  An older checkpoint and every RLlib checkpoint can only be read by
unpickling (Stable-Baselines3's and Ray's loaders), which runs code from the file:
those need --allow-pickle, so export only files you trust.  The written file is loaded
back and must give the source's action logits on 2000 game states, else it is removed.
"""

from __future__ import annotations

import argparse

HELP = "write a weights-only agent file (.safetensors) from a trainer or RLlib checkpoint you trust"


def add_arguments(p: argparse.ArgumentParser) -> None:
    """Add the ``export`` arguments to ``p``."""
    p.add_argument("spec", metavar="SPEC", help="ppo:PATH (a trainer checkpoint .zip or run folder) or rllib:PATH "
                   "(an RLlib checkpoint or run folder)")
    p.add_argument("out", metavar="OUT", help="the agent file to write (NAME.safetensors)")
    p.add_argument("--force", action="store_true", help="overwrite OUT if it exists")


def run(args: argparse.Namespace) -> int:
    """Export ``args.spec`` to ``args.out`` and say what was written; return the exit status."""
    from pathlib import Path

    from lama_dice.agents.export import ExportError, export_agent
    from lama_dice.cli.recordfile import check_output_path
    from lama_env.errors import bounded

    out = Path(args.out)
    check_output_path("OUT", args.out, ExportError)
    if out.exists() and not args.force:
        raise ExportError(f"{bounded(args.out, 200)} exists; choose another name, or --force to overwrite it")
    d = export_agent(args.spec, out)
    net = d["network"]
    print(f"wrote {out}: {d['num_players']}-player policy, MLP {net['inputs']} -> {net['hidden']} "
          f"({net['activation']}) -> {net['outputs']}, {d['training'].get('algorithm', 'trained')}; "
          f"play it as ppo:{out}")
    return 0
