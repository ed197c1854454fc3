"""``python -m lama_dice COMMAND ...``: the ``lama-dice`` command without anything on ``PATH``."""

import sys

from lama_dice.cli.main import main

if __name__ == "__main__":
    sys.exit(main())
