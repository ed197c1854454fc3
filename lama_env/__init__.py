"""The rules engine and the environments (PettingZoo, Gymnasium, the vector game) of lama-dice.

``import lama_env`` registers the Gymnasium env ``LamaDice-v1`` and PettingZoo's ``lama_dice_v1`` (1.27+);
the envs load on ``make``. Details: docs/environments.md.
"""

import sys
from typing import Any

from .actions import NUM_ACTIONS, QUIT, ROLL
from .engine import IllegalActionError, LamaGame, Phase
from .errors import LamaDiceError, retired
from .extras import AfterImport
from .moved import check_moved
from .observation import encode, observation_layout, observation_size
from .record import RecordError, replay
from .rules import FACES, RulesConfig, RulesError

__version__ = "0.4.0"


#: The id of the AEC env in PettingZoo's registry (``pettingzoo.make("aec", PETTINGZOO_ID)``).
PETTINGZOO_ID = "lama_dice_v1"
#: Retired env modules, and the one that replaced each (docs/environments.md, Versions).
RETIRED_ENVS = {"lama_dice_v0": "lama_dice_v1"}


class _RetiredFinder:
    """An import hook (``sys.meta_path``, last): ``import lama_env.lama_dice_v0`` raises as ``from lama_env import``."""

    lama_env_retired = True

    @staticmethod
    def find_spec(fullname: str, path: Any = None, target: Any = None) -> None:
        """Raise the one-line error of a retired env module or a moved module or name (:mod:`.moved`); else None."""
        package, _, name = fullname.rpartition(".")
        if package == __name__ and name in RETIRED_ENVS:
            from .options import DeprecatedEnvError

            raise DeprecatedEnvError(retired(fullname, f"use lama_env.{RETIRED_ENVS[name]} (the same env, its "
                                             "seeds on the compiled engine's streams: docs/environments.md, Versions)"))
        check_moved(fullname)


def __getattr__(name: str) -> Any:
    """``from lama_env import lama_dice_v0`` (retired) or ``animation`` (moved): a one-line error naming the new."""
    _RetiredFinder.find_spec(f"{__name__}.{name}")
    raise AttributeError(f"module 'lama_env' has no attribute {name!r}")


if not any(getattr(f, "lama_env_retired", False) for f in sys.meta_path):
    sys.meta_path.append(_RetiredFinder())


def _register_envs() -> None:
    """Register ``LamaDice-v1`` with Gymnasium and ``lama_dice_v1`` with PettingZoo (after its import; once each)."""
    import gymnasium

    if "LamaDice-v1" not in gymnasium.registry:
        gymnasium.register(id="LamaDice-v1", entry_point="lama_env.gym_env:LamaDiceEnv",
                           vector_entry_point="lama_env.vector_env:LamaDiceVectorEnv")
    if "pettingzoo" in sys.modules:
        _register_pettingzoo()
    elif not any(getattr(f, "lama_env_hook", False) for f in sys.meta_path):
        sys.meta_path.insert(0, AfterImport("pettingzoo", _register_pettingzoo))


def _register_pettingzoo() -> None:
    """Add ``lama_dice_v1`` to PettingZoo's AEC registry, where the installed PettingZoo has one (1.27+)."""
    pettingzoo = sys.modules.get("pettingzoo")
    register = getattr(pettingzoo, "register", None)
    registry = getattr(pettingzoo, "aec_registry", None)
    if (register is None or not isinstance(registry, dict)  # an older PettingZoo, without a registry
            or PETTINGZOO_ID in registry or PETTINGZOO_ID.replace("_v", "-v") in registry):  # (as PettingZoo keeps it)
        return
    try:
        register("aec", PETTINGZOO_ID, entry_point="lama_env.lama_dice_v1:env")
    except Exception as e:  # a registry API this code does not know: never break an import over it
        import warnings

        warnings.warn(f"lama_env could not register {PETTINGZOO_ID} with PettingZoo: {e!r}", stacklevel=2)


_register_envs()

__all__ = ["FACES", "NUM_ACTIONS", "QUIT", "ROLL", "IllegalActionError", "LamaDiceError", "LamaGame", "Phase",
           "RecordError", "RulesConfig", "RulesError", "__version__", "encode", "observation_layout",
           "observation_size", "replay"]
