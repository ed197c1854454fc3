"""Draw the pictures of ``docs/environments.md``: one frame (PNG) and two rounds as a GIF.

The shipped two-player PPO agent (``ppo:2p``) plays ``threshold:0.2`` for two rounds
(seeded), and :mod:`lama_dice.animation` draws it as ``lama-dice show --gif`` would::

    python -m tools.doc_pictures            # writes docs/images/table.png and docs/images/round.gif
    python -m tools.doc_pictures --seed 5 --out /tmp

Both files are kept small (under 300 KB).
"""

from __future__ import annotations

import argparse
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
AGENTS = ("ppo:2p", "threshold:0.2")
#: Seed of the deal, the dice and the agents (rounds with discards, a take and quits).
SEED = 6
#: Rounds in the GIF.
ROUNDS = 2


def play(seed: int, rounds: int) -> dict:
    """The record of the first ``rounds`` rounds of ``AGENTS`` (seat 0 starts), from ``seed``."""
    from lama_dice.agents.registry import make_agent
    from lama_env.engine import LamaGame

    agents = [make_agent(spec, seed=seed + i) for i, spec in enumerate(AGENTS)]
    game = LamaGame(len(AGENTS), seed=seed)
    while not game.game_over and game.rounds_finished < rounds:
        p = game.current_player
        game.step(int(agents[p].act(game, game.legal_actions())))
    rec = game.to_record()
    del rec["rounds"][rounds:]  # rounds flow: the next round, dealt as the last one ended, is not shown
    return rec


def main() -> None:
    """Command line: write the PNG and the GIF and print their sizes."""
    from PIL import Image

    from lama_dice.animation import record_frames, write_gif

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seed", type=int, default=SEED)
    ap.add_argument("--out", type=Path, default=ROOT / "docs" / "images")
    ap.add_argument("--rounds", type=int, default=ROUNDS)
    ap.add_argument("--fps", type=float, default=1.5)
    args = ap.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    rec = play(args.seed, args.rounds)
    names = [f"P{p} {spec}" for p, spec in enumerate(AGENTS)]
    frames = list(record_frames(rec, names))
    # the PNG: the first roll that asks for a discard (dice shown, the matching cards outlined)
    still = next((f for f in frames if f.caption.endswith("discard")), frames[-1])
    png = args.out / "table.png"
    Image.fromarray(still.image).save(png, optimize=True)
    gif = args.out / "round.gif"
    write_gif(frames, gif, fps=args.fps)
    for path in (png, gif):
        print(f"{path}: {path.stat().st_size / 1024:.0f} KiB")
    print(f"{len(frames)} frames, {sum(len(r['turns']) for r in rec['rounds'])} turns")


if __name__ == "__main__":
    main()
