"""Your own Python policy as an agent spec: ``python:MODULE:NAME``.

The spec ``python:MODULE:NAME`` builds ``NAME`` from ``MODULE`` wherever an
agent spec goes (``lama-dice score``, ``evaluate``, ``play --opponents``, YAML
configs, the environments' ``opponents=``), because it is resolved by
:func:`lama_dice.agents.registry.make_agent` like every other spec.  It is code
by definition: the spec imports and runs ``MODULE``, so use it for your own
agents, and read someone else's module before naming it (or ask for an agent
file, :mod:`lama_dice.agents.agentfile`, which is data):

* ``MODULE`` is an importable module (``my_pkg.agents``; the current
  directory is searched too, after ``sys.path``) or a Python file
  (``path/to/my_agent.py``, relative to the current directory);
* ``NAME`` (dots allowed: ``Outer.Inner``) is a subclass of
  :class:`lama_dice.agents.base.Policy` (called with no argument), a function
  returning a policy, or a policy object (each spec builds a fresh copy).
  Anything with an ``act(game, legal) -> action`` method also works: it is
  wrapped in a :class:`~lama_dice.agents.base.Policy`.

Example, a file ``my_agent.py``::

    from lama_dice.agents.base import Policy
    from lama_env import actions as A

    class QuitAtTen(Policy):
        def act(self, game, legal):
            d = game.displays[game.current_player]
            ...
            return legal[0]

and ``lama-dice score python:my_agent.py:QuitAtTen`` (or ``python:my_agent:QuitAtTen``).
Worker processes (``--workers``) rebuild the agent from its spec, so the
module must import there too (it does, unless it depends on state built at run
time).  Take your random draws from ``self.decision_rng(game)`` (a generator keyed
by the game and the decision in a seeded evaluation), so that the same seed gives
the same result whatever ``--chunk-size`` and ``--workers``; ``self.rng`` (reseeded by
the evaluator per chunk of games) gives the same result for the same seed and chunk size.
"""

from __future__ import annotations

import copy
import hashlib
import importlib
import importlib.util
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from lama_env.engine import LamaGame
from lama_env.errors import clip

from .base import Policy
from .registry import AgentSpecError, register

__all__ = ["ActAdapter", "load_python_policy"]

USAGE = "python:MODULE:NAME"


class ActAdapter(Policy):
    """A :class:`Policy` around any object with ``act(game, legal)`` (and optionally ``seed(seed)``)."""

    def __init__(self, inner: Any) -> None:
        """Wrap ``inner``."""
        super().__init__()
        self.inner = inner

    def seed(self, seed: int | None) -> None:
        """Reseed this adapter's generator and, if it has ``seed``, the wrapped object."""
        super().seed(seed)
        inner = getattr(self, "inner", None)
        if inner is not None and callable(getattr(inner, "seed", None)):
            inner.seed(seed)

    def seed_decisions(self, salt: int | None) -> None:
        """Set this adapter's decision salt and, if it has ``seed_decisions``, the wrapped object's."""
        super().seed_decisions(salt)
        inner = getattr(self, "inner", None)
        if inner is not None and callable(getattr(inner, "seed_decisions", None)):
            inner.seed_decisions(salt)

    def act(self, game: LamaGame, legal: Sequence[int]) -> int:
        """The wrapped object's action."""
        return self.inner.act(game, legal)


def _import_module(module: str) -> Any:
    """The module ``module``: a dotted name (also looked up in the current directory) or a ``.py`` file."""
    if module.endswith(".py") or "/" in module or os.sep in module:
        path = Path(module).expanduser().resolve()
        if not path.is_file():
            raise AgentSpecError(f"no Python file {clip(module)} (spec {USAGE}; MODULE may be a .py file)")
        name = f"lama_dice_user_{path.stem}_{hashlib.sha1(str(path).encode()).hexdigest()[:8]}"
        mod = sys.modules.get(name)
        if mod is not None:
            return mod
        spec = importlib.util.spec_from_file_location(name, path)
        if spec is None or spec.loader is None:  # pragma: no cover - a .py file always has a loader
            raise AgentSpecError(f"cannot load {clip(module)} as a Python module")
        mod = importlib.util.module_from_spec(spec)
        sys.modules[name] = mod  # before running it: dataclasses and pickling look it up there
        try:
            spec.loader.exec_module(mod)
        except BaseException:
            del sys.modules[name]
            raise
        return mod
    cwd = os.getcwd()
    if cwd not in sys.path and "" not in sys.path:
        sys.path.append(cwd)  # after everything else: a user's module never shadows an installed one
    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as e:
        if e.name and (module == e.name or module.startswith(e.name + ".")):
            raise AgentSpecError(f"no module named {clip(module)} (spec {USAGE}; run from its folder, "
                                 "put it on PYTHONPATH, or give a path/to/file.py)") from None
        raise


def load_python_policy(target: str | None) -> Policy:
    """Build the policy of ``python:TARGET`` (``TARGET`` = ``MODULE:NAME``).

    Raises:
        AgentSpecError: a malformed target, a missing module, file or name, or
            a ``NAME`` that does not make a policy.
    """
    module, sep, attr = (target or "").strip().rpartition(":")
    if not sep or not module or not attr:
        raise AgentSpecError(f"the spec is {USAGE} (e.g. python:my_agent:MyPolicy), got python:{target or ''}")
    obj: Any = _import_module(module)
    for part in attr.split("."):
        try:
            obj = getattr(obj, part)
        except AttributeError:
            raise AgentSpecError(f"{clip(module)} has no {clip(attr)} (spec {USAGE})") from None
    if isinstance(obj, Policy):
        policy: Any = copy.deepcopy(obj)
    elif callable(obj):
        policy = obj()
    else:
        raise AgentSpecError(f"{module}:{attr} is a {type(obj).__name__}, not a Policy class, factory or object")
    if isinstance(policy, Policy):
        return policy
    if callable(getattr(policy, "act", None)):
        return ActAdapter(policy)
    raise AgentSpecError(f"{module}:{attr} made a {type(policy).__name__}, which has no act(game, legal) method")


register("python", load_python_policy, USAGE,
         "your own Policy subclass (or factory) NAME from module or file MODULE (e.g. python:my_agent.py:MyPolicy); "
         "this imports and runs MODULE: it is code, read it first")
