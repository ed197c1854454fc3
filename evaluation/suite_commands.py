"""The command lines a suite report lists: ``lama-dice score`` (the run) and ``lama-dice evaluate`` (one match)."""

from __future__ import annotations

import shlex
from collections.abc import Sequence
from typing import Any

from lama_env.rules import RulesConfig

from .suite_tasks import LATEST, Task, resolve_tasks

__all__ = ["evaluate_command", "score_command"]


def score_command(agent: str, tasks: Sequence[str], games: int | None = None, *, all_playable: bool = False,
                  suite: int = LATEST) -> str:
    """The ``lama-dice score`` command that plays the same evaluations again.

    ``all_playable``: ``tasks`` are all the tasks the agent can play (no ``--tasks`` needed).
    """
    args = ["lama-dice", "score", agent]
    if suite != LATEST:
        args += ["--suite", str(suite)]
    if list(tasks) != [t.name for t in resolve_tasks(None, suite)] and not all_playable:
        args += ["--tasks", *tasks]
    if games is not None:
        args += ["--games", str(games)]
    return shlex.join(args)


def evaluate_command(agents: Sequence[str], task: Task, games: int, seed: int) -> str:
    """The ``lama-dice evaluate`` command that plays one match alone (same seed, same result)."""
    args = ["lama-dice", "evaluate", "--players", str(task.players), "--agents", *agents,
            "--games", str(games), "--seed", str(seed)]
    default = RulesConfig().to_dict(include_dice=True)
    for key, value in task.rules.to_dict(include_dice=True).items():
        if default.get(key) != value:
            text = value if isinstance(value, str) else _json_compact(value)
            args += ["--rule", f"{key}={text}"]
    return shlex.join(args)


def _json_compact(value: Any) -> str:
    import json

    return json.dumps(value, separators=(",", ":"))

