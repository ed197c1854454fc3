"""``python -m lama_dice.train.rllib CONFIG.yaml [options]``: train with Ray RLlib."""

import sys

from lama_dice.train.rllib.trainer import main

if __name__ == "__main__":
    sys.exit(main())
