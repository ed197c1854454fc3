"""What moved in 0.4.0 (to ``lama_dice``, or within ``lama_env``); the old import raises :class:`MovedError`."""

from .errors import RetiredError, retired

#: Each module or name that moved, and how to import it now.
MOVED = {"lama_env.animation": "import lama_dice.animation", "lama_env.atomic": "import lama_dice.atomic",
         "lama_env.reader.read_yaml": "from lama_dice.yaml_reader import read_yaml",
         "lama_env.reader.yaml_loader": "from lama_dice.yaml_reader import yaml_loader",
         "lama_env.reader.MAX_NODES": "from lama_dice.yaml_reader import MAX_NODES",
         "lama_env.render": "from lama_env.picture import render_text"}


class MovedError(RetiredError, ImportError):
    """A module or name of :data:`MOVED` was imported from ``lama_env``; the message says how to import it now."""


def check_moved(fullname: str) -> None:
    """Raise :class:`MovedError` if ``fullname`` (``lama_env.animation``) is in :data:`MOVED`; else return."""
    if fullname in MOVED:
        raise MovedError(retired(fullname, MOVED[fullname], retired_in="0.4.0", last="0.3.0"))
