"""``python -m lama_dice.train CONFIG.yaml [...]``: the same as ``lama-dice train CONFIG.yaml [...]``."""

from __future__ import annotations

import sys

from lama_dice.cli.main import main

if __name__ == "__main__":
    sys.exit(main(["train", *sys.argv[1:]]))
