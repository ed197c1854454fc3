"""lama-dice: *Don't L.L.A.M.A. Dice* as a reinforcement-learning benchmark.

* :mod:`lama_env.rules`, :mod:`lama_env.engine`, :mod:`lama_env.actions`,
  :mod:`lama_env.record`: the pure rules engine and game records.
"""

from .actions import NUM_ACTIONS, QUIT, ROLL
from .engine import IllegalActionError, LamaGame, Phase
from .errors import LamaDiceError
from .record import RecordError, replay
from .rules import FACES, RulesConfig, RulesError

__version__ = "0.1.0"

__all__ = [
    "FACES", "NUM_ACTIONS", "QUIT", "ROLL", "IllegalActionError", "LamaDiceError", "LamaGame",
    "Phase", "RecordError", "RulesConfig", "RulesError", "replay", "__version__",
]
