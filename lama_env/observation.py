"""The observation encoder shared by every learning interface (docs/environments.md, Observation).

:func:`encode`: a game as ``15 N + 22`` floats in ``[0, 1]`` seen from one seat (the compiled engine's one encoder).
"""

from __future__ import annotations

from functools import cache
from typing import NamedTuple

import numpy as np

from .engine import LamaGame
from .rules import MAX_ROUND_POINTS, NUM_FACES, check_num_players


class LayoutEntry(NamedTuple):
    """One block of the observation vector."""

    name: str
    start: int
    length: int
    meaning: str


# (name, entries per player (0: a fixed-size block), fixed length, meaning)
_BLOCKS: tuple[tuple[str, int, int, str], ...] = (
    ("display", NUM_FACES, 0,
     "cards of each face (`L`, `1`..`6`) in each player's display (player-major, 7 faces each); `L` / 7, numbers / 6"),
    ("quit", 1, 0, "1 if the player has quit this round"),
    ("to_act", 1, 0, "1 for the player whose decision it is (all 0 once the game or the episode is over)"),
    ("start_player", 1, 0, "1 for the player who started this round"),
    ("total", 1, 0, "chip total / end_threshold, clipped to 1"),
    ("to_threshold", 1, 0,
     f"(end_threshold - total) / {MAX_ROUND_POINTS} clipped to [0, 1]: distance to the game end in "
     f"maximal rounds ({MAX_ROUND_POINTS} points)"),
    ("round_points", 1, 0, f"what the player's display scores now (`rules.score_display`) / {MAX_ROUND_POINTS}"),
    ("would_end_game", 1, 0, "1 if total + round points reaches end_threshold (the game ends if the round ends now)"),
    ("p_no_match", 1, 0,
     "probability that the player's next roll matches nothing in their display (`odds.p_no_match`)"),
    ("llama_row", 0, NUM_FACES, "1 where the row card of that face (`L`, `1`..`6`) is still there"),
    ("decision", 0, 4, "one-hot decision asked: roll-or-quit, discard, take, none (the game or the episode is over)"),
    ("dice", 0, NUM_FACES, "after a roll (discard / take decision): dice showing each face / 3, else 0"),
    ("last_player", 0, 1, "1 if only one player is left in the round (last-player rule: a non-matching roll busts)"),
    ("active_players", 0, 1, "players who have not quit / N"),
    ("must_discard", 0, 1, "rules: 1 if a matching roll must discard (`must_discard`)"),
    ("triple_llama_match", 0, 1,
     'rules: 1 if a triple llama also counts as ordinary dice (`triple_llama="also_match"`)'),
)


@cache
def _layout(num_players: int) -> tuple[LayoutEntry, ...]:
    out = []
    pos = 0
    for name, per_player, fixed, meaning in _BLOCKS:
        length = per_player * num_players + fixed
        out.append(LayoutEntry(name, pos, length, meaning))
        pos += length
    return tuple(out)


def observation_layout(num_players: int) -> list[LayoutEntry]:
    """The blocks of the observation vector for ``num_players`` players, in vector order (:class:`LayoutEntry`)."""
    return list(_layout(check_num_players(num_players, ValueError)))


def observation_size(num_players: int) -> int:
    """Length of the observation vector for ``num_players`` players (``15 N + 22``)."""
    last = _layout(check_num_players(num_players, ValueError))[-1]
    return last.start + last.length


def _symbolic(a: int, b: int) -> str:
    """Format ``a * N + b``."""
    head = "N" if a == 1 else f"{a}N"
    return str(b) if a == 0 else head if b == 0 else f"{head} + {b}"


def layout_table(num_players: int | None = None) -> str:
    """The observation layout as a Markdown table (``num_players`` None: offsets in terms of ``N``, the docs')."""
    lines = ["| slice | start | length | meaning |", "| --- | --- | --- | --- |"]
    if num_players is not None:
        lines += [f"| `{e.name}` | {e.start} | {e.length} | {e.meaning} |" for e in observation_layout(num_players)]
        return "\n".join(lines)
    a = b = 0
    for name, per_player, fixed, meaning in _BLOCKS:
        lines.append(f"| `{name}` | {_symbolic(a, b)} | {_symbolic(per_player, fixed)} | {meaning} |")
        a += per_player
        b += fixed
    return "\n".join(lines)


def encode(game: LamaGame, seat: int, out: np.ndarray | None = None) -> np.ndarray:
    """``game`` (not modified) as seen from ``seat``: a new ``float32`` array, or written into ``out``.

    Raises ``TypeError`` if ``game`` is not a :class:`~lama_env.engine.LamaGame`, ``ValueError`` for a bad seat.
    """
    if not isinstance(game, LamaGame):
        raise TypeError(f"encode needs a LamaGame, got {type(game).__name__} (a state of many games: "
                        f"lama_env.vector.VectorGame.observe)")
    return game.observe(seat, out)


def describe(x: np.ndarray, num_players: int) -> dict[str, list[float]]:
    """Split an observation vector into its named blocks (for debugging and docs)."""
    x = np.asarray(x)
    return {e.name: x[e.start:e.start + e.length].tolist() for e in observation_layout(num_players)}


__all__ = ["MAX_ROUND_POINTS", "LayoutEntry", "describe", "encode", "layout_table", "observation_layout",
           "observation_size"]
