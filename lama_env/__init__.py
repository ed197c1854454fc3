"""lama-dice: *Don't L.L.A.M.A. Dice* as a reinforcement-learning benchmark.

* :mod:`lama_env.rules`, :mod:`lama_env.transitions`, :mod:`lama_env.engine`,
  :mod:`lama_env.actions`, :mod:`lama_env.record`: the rules (constants and
  scoring, what each action does as pure functions, the game's state machine)
  and game records.
* :mod:`lama_env.observation`: the observation encoder shared by the environments and agents.
* :mod:`lama_env.lama_dice_v0`: the PettingZoo AEC environment (``from lama_env import lama_dice_v0``;
  imported on demand, so ``import lama_env`` does not import PettingZoo).
* :mod:`lama_env.gym_env`: the Gymnasium environment ``LamaDice-v0``, registered on import.
"""

from .actions import NUM_ACTIONS, QUIT, ROLL
from .engine import IllegalActionError, LamaGame, Phase
from .errors import LamaDiceError
from .observation import encode, observation_layout, observation_size
from .record import RecordError, replay
from .rules import FACES, RulesConfig, RulesError

__version__ = "0.1.0"


def _register_envs() -> None:
    """Register ``LamaDice-v0`` with Gymnasium (once; the env module is imported on ``make``)."""
    import gymnasium

    if "LamaDice-v0" not in gymnasium.registry:
        gymnasium.register(id="LamaDice-v0", entry_point="lama_env.gym_env:LamaDiceEnv")


_register_envs()

__all__ = [
    "FACES",
    "NUM_ACTIONS",
    "QUIT",
    "ROLL",
    "IllegalActionError",
    "LamaDiceError",
    "LamaGame",
    "Phase",
    "RecordError",
    "RulesConfig",
    "RulesError",
    "__version__",
    "encode",
    "observation_layout",
    "observation_size",
    "replay",
]
