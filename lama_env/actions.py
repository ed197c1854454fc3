"""The flat action space shared by the engine, the environments and the agents (docs/RULES.md, Action space).

``Discrete(NUM_ACTIONS)`` (129): 0 roll, 1 quit, ``TAKE_BASE + face``, ``DISCARD_BASE + i`` for ``DISCARDS[i]``;
the numbers are :mod:`lama_env.constants`'s, importable here.
"""
from __future__ import annotations

from collections.abc import Iterable
from functools import cache
from itertools import product
from typing import Any

import numpy as np

# the action space's numbers, kept importable here
from .constants import DISCARD_ACTION, DISCARD_BASE, DISCARDS, FACES, NUM_ACTIONS, NUM_FACES, QUIT, ROLL, TAKE_BASE


def take_action(face: int) -> int:
    """Action index for taking the row card of face index ``face``."""
    return TAKE_BASE + face


def discard_action(counts: tuple[int, ...]) -> int:
    """Action index for discarding ``counts`` (cards per face index)."""
    try:
        return DISCARD_ACTION[tuple(counts)]
    except KeyError:
        raise ValueError(f"no discard action for counts {counts!r}") from None


def is_take(action: int) -> bool:
    """Whether ``action`` takes a row card."""
    return TAKE_BASE <= action < DISCARD_BASE


def is_discard(action: int) -> bool:
    """Whether ``action`` is a discard."""
    return DISCARD_BASE <= action < NUM_ACTIONS


def discard_counts(action: int) -> tuple[int, ...]:
    """The counts per face of a discard action."""
    return DISCARDS[action - DISCARD_BASE]


@cache
def legal_discards(limits: tuple[int, ...], must_discard: bool) -> tuple[int, ...]:
    """All discard actions within ``limits`` (max cards per face), smallest first."""
    return tuple(sorted(DISCARD_ACTION[c] for c in product(*(range(m + 1) for m in limits))
                        if sum(c) > 0 or not must_discard))


@cache
def sample_order(legal: tuple[int, ...]) -> tuple[int, ...]:
    """The legal actions in the order of the compiled ``random`` agent's uniform draw (``LamaGame.sample_action``).

    Roll then quit, takes by face upwards, discards by their counts read as a number (face 0 the lowest digit).
    """
    if legal and is_discard(legal[0]):
        return tuple(sorted(legal, key=lambda a: discard_counts(a)[::-1]))
    return legal


def legal_mask(legal: Iterable[int], dtype: Any = np.int8) -> np.ndarray:
    """A new ``(NUM_ACTIONS,)`` mask, 1 where legal: the Python side's one (the compiled side's: ``write_mask``)."""
    m = np.zeros(NUM_ACTIONS, dtype=dtype)
    m[list(legal)] = 1
    return m


def describe(action: int) -> str:
    """A short human-readable name of an action, e.g. ``"roll"``, ``"take 5"``, ``"discard 3 5"``."""
    if action == ROLL:
        return "roll"
    if action == QUIT:
        return "quit"
    if is_take(action):
        return f"take {FACES[action - TAKE_BASE]}"
    if is_discard(action):
        c = discard_counts(action)
        faces = [FACES[f] for f in range(NUM_FACES) for _ in range(c[f])]
        return "discard " + (" ".join(faces) if faces else "nothing")
    raise ValueError(f"action {action!r} is outside 0..{NUM_ACTIONS - 1}")
