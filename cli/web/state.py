"""What the page draws, as JSON: a game's table now, and every step of a record.

The table carries the same facts as the ``rgb_array`` picture
(:mod:`lama_env.picture`) and the terminal table (:mod:`lama_dice.cli.tui`): the
round and whose decision it is, the llama row, the dice, and per seat its
display, round points, chips and tag.  Words come from the shared helpers
(:func:`lama_env.picture.status_text`, :func:`~lama_env.picture.seat_tag`,
:func:`lama_dice.cli.tui.turn_text`), odds from :mod:`lama_env.odds`: nothing here
decides a rule.
"""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction
from typing import Any

from lama_env import actions as A
from lama_env.engine import LamaGame, Phase
from lama_env.odds import p_no_match
from lama_env.picture import seat_tag, status_text
from lama_env.roundend import RoundEnd, ended, turns
from lama_env.rules import face_index, score_display, winners
from lama_env.safetext import safe_text

from ..tui import about_line, seat_names, snapshot, turn_text

#: A record with more turns than this is not turned into frames (about 1 KB each).
MAX_FRAMES = 20_000


def face_indices(dice: Sequence[Any] | None) -> list[int] | None:
    """Dice as face indices (from names or indices), or None."""
    if dice is None:
        return None
    return [face_index(f) if isinstance(f, str) else int(f) for f in dice]


def table_state(game: LamaGame | RoundEnd, names: Sequence[str], *,
                dice: Sequence[Any] | None = None) -> dict[str, Any]:
    """The table of ``game`` as a JSON-ready dict.

    Args:
        game: the game (read only), or the table of a round's end (:class:`~lama_env.roundend.RoundEnd`).
        names: a display name per seat.
        dice: the dice just rolled, shown when no roll is pending (a pending roll is always shown).

    Returns:
        ``round`` (1-based), ``phase`` (``turn``/``discard``/``take``/``round_end``/``game_over``),
        ``status`` (the picture's header line), ``current``, ``start_player``, ``row`` (cards per face),
        ``dice`` (face indices or None) and ``dice_pending``, ``turns_in_round`` (turns begun this round),
        ``turn`` (the turn being played, 1-based, or at a round's end the turns played), ``takeable`` (row faces
        a pending roll lets the player take), ``caption`` (the last-player note before a roll, or None),
        ``winners`` (at the game's end) and ``seats``: per seat ``name``, ``display``, ``points``, ``total``,
        ``quit``, ``tag`` and ``glow`` (display faces a pending roll lets the player discard).
    """
    names = [safe_text(x) for x in names]
    phase = game.phase
    pending = game.dice
    shown = pending if pending is not None else dice
    end = ended(game)
    points = end["points"] if end is not None else None
    over = end is not None
    cur = game.current_player
    legal = game.legal_actions()
    seats = []
    for p in range(game.num_players):
        disp = game.displays[p]
        glow = sorted({f for f in pending if disp[f]}) if (p == cur and pending is not None
                                                             and phase == Phase.DISCARD) else []
        seats.append({"name": names[p], "display": list(disp),
                      "points": points[p] if points is not None else score_display(game.displays[p]),
                      "total": game.totals[p], "quit": game.quit[p], "tag": seat_tag(game, p), "glow": glow})
    caption = None
    if phase == Phase.TURN and game.num_players > 1 and game.quit.count(False) == 1:  # before a roll, not after
        who = "you are" if names[cur] == "You" else f"{names[cur]} is"
        caption = f"Only {who} left: a roll that matches nothing is a bust."
    return {
        "players": game.num_players,
        "round": game.round_index + 1,
        "phase": "round_end" if phase is None else phase.name.lower(),
        "status": status_text(game, names),
        "current": None if over else cur,
        "start_player": game.start_player,
        "row": list(game.row),
        "dice": face_indices(shown),
        "dice_pending": pending is not None,
        "turns_in_round": turns(game),
        "turn": turns(game) + (1 if phase == Phase.TURN else 0),
        "takeable": sorted(a - A.TAKE_BASE for a in legal if A.is_take(a)),
        "caption": caption,
        "winners": winners(game.totals) if phase == Phase.GAME_OVER else [],
        "seats": seats,
    }


def roll_odds(game: LamaGame, player: int) -> dict[str, Any]:
    """The exact chance that a roll from ``player``'s display matches nothing (:func:`lama_env.odds.p_no_match`).

    Returns:
        ``p`` (a float), ``fraction`` (``"27/216"``-style over the 216 rolls of three dice), ``busts``
        (True when such a roll is a bust: the player is the last one in the round), and ``text``, one line.
    """
    p = p_no_match(game.displays[player], game.rules)
    frac = Fraction(p).limit_denominator(6 ** 3)
    over_216 = frac * 216
    fraction = f"{over_216.numerator}/216" if over_216.denominator == 1 else f"{frac.numerator}/{frac.denominator}"
    busts = game.quit.count(False) == 1
    what = "is a bust" if busts else "matches nothing (you then take a llama-row card)"
    return {"p": p, "fraction": fraction, "busts": busts,
            "text": f"A roll {what} with probability {fraction} = {100 * p:.1f}%."}


def record_frames(record: Any, names: Sequence[str] | None = None) -> dict[str, Any]:
    """Every step of a legal record: the deal of each round, then the table after each turn.

    Check the record with :func:`lama_env.record.replay` first.

    Args:
        record: the record.
        names: a name per seat (default: the record's own, ``about.names`` of a ``lama-dice-record/2``, else
            ``P0``, ``P1``, ...).

    Returns:
        ``players``, ``names``, ``about`` (who played, the seed and the version in one line, or None for a
        ``/1`` record), ``rounds``, ``result`` (the replay result) and ``frames``: per step
        ``round`` and ``turn`` (1-based; ``turn`` 0 is the deal), ``line`` (what the turn did, as
        ``lama-dice show`` says it) and ``table`` (:func:`table_state`).
    """
    from lama_env.record import iter_replay, record_names, replay

    n = record["players"]
    seat = seat_names(n, dict(enumerate(names if names is not None else record_names(record) or ())))
    frames: list[dict[str, Any]] = []
    before = None
    game = None
    for game, r, t in iter_replay(record):
        if len(frames) >= MAX_FRAMES:
            raise ValueError(f"the record has more than {MAX_FRAMES} turns: too long to show")
        if t is None:
            frames.append({"round": r + 1, "turn": 0, "line": f"Round {r + 1} dealt; first to play: "
                           f"{seat[game.start_player]}", "table": table_state(game, seat)})
        else:
            turn = record["rounds"][r]["turns"][t]
            assert before is not None  # set at the deal
            line = turn_text(turn, before, game, seat).plain
            frames.append({"round": r + 1, "turn": t + 1, "line": line,
                           "table": table_state(game, seat, dice=turn.get("dice"))})
        before = snapshot(game)
    return {"players": n, "names": seat, "about": about_line(record), "rounds": len(record["rounds"]),
            "result": replay(record),
            "frames": frames}


__all__ = ["face_indices", "record_frames", "roll_odds", "table_state"]
