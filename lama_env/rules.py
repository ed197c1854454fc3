"""The rules configuration and every rule that is a pure function of numbers, each once (docs/RULES.md).

What an action does is :mod:`lama_env.transitions`'s; the game's numbers (:mod:`lama_env.constants`) import here.
"""

from __future__ import annotations

import difflib
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .constants import (  # noqa: F401  (the game's numbers, importable here as always: rules.FACES...)
    DECK,
    DECK_COUNTS,
    DEFAULT_DICE,
    DEFAULT_MAX_ROUND_TURNS,
    DIE_SIDES,
    FACE_INDEX,
    FACES,
    HAND_SIZE,
    LLAMA,
    MAX_END_THRESHOLD,
    MAX_PLAYERS,
    MAX_ROUND_TURNS_LIMIT,
    MIN_PLAYERS,
    NUM_DICE,
    NUM_FACES,
    TRIPLE_LLAMA_MODES,
)
from .errors import LamaDiceError, clip


class RulesError(LamaDiceError, ValueError):
    """An invalid rules configuration."""


def face_index(name: Any) -> int:
    """Return the index of face ``name`` (``"L"``, ``"1"`` to ``"6"``)."""
    try:
        return FACE_INDEX[name]
    except (KeyError, TypeError):
        raise ValueError(f"unknown face {name!r} (faces are 'L', '1'..'6')") from None


@dataclass(frozen=True)
class RulesConfig:
    """Every **[choice]** of docs/RULES.md with its default: the fields of its table (RULES.md, Rules configuration)."""

    triple_llama: str = "chip_only"
    must_discard: bool = True
    end_threshold: int = 40
    dice: tuple[tuple[str, ...], ...] = DEFAULT_DICE
    max_round_turns: int = DEFAULT_MAX_ROUND_TURNS
    #: The dice as face indices (derived).
    dice_index: tuple[tuple[int, ...], ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        """Check every field and derive :attr:`dice_index` (RulesError: a bad field, or rules that cannot end)."""
        if self.triple_llama not in TRIPLE_LLAMA_MODES:
            raise RulesError(f"triple_llama must be one of {', '.join(TRIPLE_LLAMA_MODES)}, got {self.triple_llama!r}")
        if not isinstance(self.must_discard, bool):
            raise RulesError(f"must_discard must be true or false, got {self.must_discard!r}")
        if isinstance(self.end_threshold, bool) or not isinstance(self.end_threshold, int):
            raise RulesError(f"end_threshold must be an integer, got {self.end_threshold!r}")
        if self.end_threshold < 1:
            raise RulesError(f"end_threshold must be at least 1, got {self.end_threshold}")
        if self.end_threshold > MAX_END_THRESHOLD:
            raise RulesError(f"end_threshold must be at most {MAX_END_THRESHOLD:,}, got {self.end_threshold}")
        dice = self.dice
        if not isinstance(dice, (list, tuple)) or len(dice) != NUM_DICE:
            raise RulesError(f"dice must be {NUM_DICE} lists of {DIE_SIDES} faces, got {dice!r}")
        for d, die in enumerate(dice):
            if not isinstance(die, (list, tuple)) or len(die) != DIE_SIDES:
                raise RulesError(f"die {d} must have {DIE_SIDES} faces, got {die!r}")
            for f in die:
                if not isinstance(f, str) or f not in FACE_INDEX:
                    raise RulesError(f"die {d} has an unknown face {f!r} (faces are 'L', '1'..'6')")
        object.__setattr__(self, "dice", norm := tuple(map(tuple, dice)))
        object.__setattr__(self, "dice_index", tuple(tuple(FACE_INDEX[f] for f in die) for die in norm))
        cap = self.max_round_turns
        if isinstance(cap, bool) or not isinstance(cap, (int, np.integer)):
            raise RulesError(f"max_round_turns must be an integer, got {cap!r}")
        if not 1 <= cap <= MAX_ROUND_TURNS_LIMIT:
            raise RulesError(f"max_round_turns must be 1..{MAX_ROUND_TURNS_LIMIT:,}, got {cap}")
        object.__setattr__(self, "max_round_turns", int(cap))
        # docs/RULES.md, "Rules that cannot end": all-llama dice under chip_only, where every roll changes nothing
        if self.triple_llama == "chip_only" and all(f == "L" for die in norm for f in die):
            raise RulesError("a round could never end: every face of the dice is a llama, so under "
                             "triple_llama=chip_only every roll is a triple llama that changes nothing "
                             "(give a die a number face, or use triple_llama=also_match)")

    @classmethod
    def from_dict(cls, data: Mapping[str, Any] | RulesConfig | None) -> RulesConfig:
        """Build a config from a mapping (unknown keys refused); None gives the defaults, a RulesConfig itself."""
        if data is None:
            return cls()
        if isinstance(data, RulesConfig):
            return data
        if not isinstance(data, Mapping):
            raise RulesError(f"rules must be an object, got {type(data).__name__}")
        unknown = sorted(set(data) - set(RULES_FIELDS))
        if unknown:
            raise RulesError(f"unknown rules field {unknown[0]!r} (valid: {', '.join(sorted(RULES_FIELDS))})")
        return cls(**dict(data))

    @classmethod
    def from_keywords(cls, keywords: Mapping[str, Any], owner: str = "__init__()") -> RulesConfig:
        """The rules of a constructor's ``**rules`` (:data:`RULES_KEYWORDS`; a field overrides ``rules=``).

        An unknown keyword is a TypeError worded as Python words it, with the nearest valid name; a bad value a
        RulesError (docs/environments.md, Common keywords).
        """
        for key in keywords:
            if key not in RULES_KEYWORDS:
                raise TypeError(_unexpected_keyword(key, owner))
        fields = dict(keywords)
        base = fields.pop("rules", None)
        if isinstance(base, RulesConfig):
            if not fields:
                return base
            base = base.to_dict(include_dice=True)
        elif base is not None and not isinstance(base, Mapping):
            raise RulesError(f"rules must be a RulesConfig or a mapping of rules fields, got {type(base).__name__}")
        return cls.from_dict({**dict(base or {}), **fields})

    def to_dict(self, include_dice: bool | None = None) -> dict[str, Any]:
        """The config as a JSON-ready dict; ``dice`` is included when non-default (or when asked)."""
        out: dict[str, Any] = {"triple_llama": self.triple_llama, "must_discard": self.must_discard,
                               "end_threshold": self.end_threshold}
        if include_dice or (include_dice is None and self.dice != DEFAULT_DICE):
            out["dice"] = [list(d) for d in self.dice]
        if self.max_round_turns != DEFAULT_MAX_ROUND_TURNS:
            out["max_round_turns"] = self.max_round_turns
        return out


def _unexpected_keyword(key: str, owner: str) -> str:
    """The TypeError's message of an unknown keyword ``key``, with the nearest of the caller's own or the rules'."""
    code = sys._getframe(2).f_code  # the __init__ that called RulesConfig.from_keywords, whose keywords are valid
    own: list[str] = []
    if code.co_name == "__init__" and code.co_argcount and code.co_varnames[0] == "self":
        own = list(code.co_varnames[1:code.co_argcount + code.co_kwonlyargcount])
    near = difflib.get_close_matches(key, [*own, *RULES_KEYWORDS], n=1)
    hint = f"did you mean {near[0]!r}? " if near else ""
    known = f"the rules keywords are {', '.join(RULES_KEYWORDS)}"
    if own:
        known = f"its keywords are {', '.join(own)}; {known}"
    return f"{owner} got an unexpected keyword argument {key!r} ({hint}{known})"


#: The rules fields (those of :class:`RulesConfig` a config, a record or a ``--rule`` sets).
RULES_FIELDS: tuple[str, ...] = ("triple_llama", "must_discard", "end_threshold", "dice", "max_round_turns")
#: The rules keywords every env and :class:`~lama_env.vector.VectorGame` accepts: the fields, and ``rules``
#: (a :class:`RulesConfig` or a mapping); :meth:`RulesConfig.from_keywords` parses them.
RULES_KEYWORDS: tuple[str, ...] = (*RULES_FIELDS, "rules")


def is_num_players(value: Any) -> bool:
    """Whether ``value`` is a supported player count: an integer (not a bool) in ``1..6``."""
    if type(value) is int:
        return MIN_PLAYERS <= value <= MAX_PLAYERS
    return (not isinstance(value, bool) and isinstance(value, (int, np.integer))
            and bool(MIN_PLAYERS <= value <= MAX_PLAYERS))


def check_num_players(value: Any, error: type[Exception] = RulesError, name: str = "num_players") -> int:
    """``value`` as an ``int`` if it is a supported player count, else raise ``error`` naming the setting ``name``."""
    if not is_num_players(value):
        raise error(f"{name} must be an integer {MIN_PLAYERS}..{MAX_PLAYERS}, got {clip(value)}")
    return int(value)


def score_display(counts: Sequence[int]) -> int:
    """Points of a display (card counts per face index): 10 for any llama, plus each number present, once."""
    pts = 10 if counts[0] else 0
    for v in range(1, NUM_FACES):
        if counts[v]:
            pts += v
    return pts


def return_chip(total: int) -> int:
    """The total after returning one chip: the largest chip held (10 if total >= 10, else 1)."""
    if total >= 10:
        return total - 10
    if total > 0:
        return total - 1
    return 0


def is_triple_llama(dice: Sequence[int]) -> bool:
    """Whether a roll shows three llamas (the roller returns a chip, in both ``triple_llama`` modes)."""
    return dice[0] == LLAMA and dice[1] == LLAMA and dice[2] == LLAMA


#: The most points a display can score (a llama and every number: 31).
MAX_ROUND_POINTS: int = score_display((1,) * NUM_FACES)


def game_over(totals: Sequence[int], rules: RulesConfig) -> bool:
    """Whether the game ends after a round with these totals (some total reaches ``end_threshold``)."""
    return max(totals) >= rules.end_threshold


def win_result(totals: Any, n: int, p: int) -> tuple[float, float]:
    """Seat ``p``'s (win share, win reward) of final ``totals[:n]`` (docs/environments.md, Rewards).

    The one text of the rule: the compiled engine compiles it too (``lama_env._kernel.win_result``), hence plain loops.
    """
    low = totals[0]
    for q in range(1, n):
        if totals[q] < low:
            low = totals[q]
    k = 0
    for q in range(n):
        if totals[q] == low:
            k += 1
    if totals[p] == low:
        return 1.0 / k, (1.0 / k if k < n else 0.0)
    return 0.0, -1.0 / (n - k)


def winners(totals: Sequence[int]) -> list[int]:
    """Seats tied for the fewest points (:func:`win_result`)."""
    return [p for p in range(len(totals)) if win_result(totals, len(totals), p)[0] > 0.0]


def win_shares(totals: Sequence[int]) -> list[float]:
    """Each seat's share of the win of final ``totals``: ``1/k`` for the ``k`` winners, else 0 (:func:`win_result`)."""
    return [win_result(totals, len(totals), p)[0] for p in range(len(totals))]


def win_shares_of_games(totals: Any) -> np.ndarray:
    """Each seat's share of the win of each game: ``(G, N)`` floats of final ``totals``, rows summing to 1.

    :func:`win_shares` of each game's ranks (how many seats have fewer points: the same order and ties), once
    per pattern of ranks present (at most 4,683 for six seats), so that a million games take milliseconds.
    """
    totals = np.asarray(totals)
    n = totals.shape[1]
    keys = np.zeros(len(totals), dtype=np.int64)  # the ranks as the digits of a number in base n
    for p in range(n):
        for q in range(n):
            keys += (totals[:, q] < totals[:, p]) * n**p
    table = np.zeros((int(keys.max(initial=0)) + 1, n))
    for k in np.flatnonzero(np.bincount(keys)).tolist():
        table[k] = win_shares([k // n**p % n for p in range(n)])
    return table[keys]


def win_rewards(totals: Sequence[int]) -> list[float]:
    """Zero-sum results of final ``totals`` (``reward="win"``): winners share +1, the others -1; all 0 if all tie."""
    return [win_result(totals, len(totals), p)[1] for p in range(len(totals))]
