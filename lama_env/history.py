"""A game's history as plain data: the turn log a :class:`~lama_env.engine.LamaGame` keeps, its record and result.

Pure functions over lists and dicts: the engine calls :func:`log_action` after each compiled step, and
:func:`make_record` / :func:`make_result` build ``to_record()`` and ``result()`` (docs/RULES.md).
A round of the log is ``{"start_player", "hands", "turns"}`` with the record's turns.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from . import actions as A
from .constants import DISCARD, RECORD_FORMAT, TURN
from .rules import FACES, NUM_FACES, RulesConfig, winners


def log_action(turns: list[dict], pending: dict | None, p: int, ph: int, action: int, res: int) -> dict | None:
    """Log ``p``'s ``action`` at phase ``ph`` into ``turns``; return the roll now awaiting its decision, if any.

    ``res``: the compiled step's result (dice in bits 7-15, round end 0-1, next phase 2-3); ``pending``: the
    roll awaiting its discard or take (None: none).
    """
    if ph == TURN:
        if action == A.QUIT:
            turns.append({"player": p, "action": "quit"})
            return None
        t = {"player": p, "action": "roll", "dice": [FACES[res >> 7 & 7], FACES[res >> 10 & 7], FACES[res >> 13 & 7]]}
        turns.append(t)
        # a triple llama or a bust (the round ended, or the turn passed): no decision follows
        return None if res & 3 or (res >> 2 & 3) in (TURN, 3) else t
    if pending is not None:
        if ph == DISCARD:
            counts = A.DISCARDS[action - A.DISCARD_BASE]
            pending["discard"] = [FACES[f] for f in range(NUM_FACES) for _ in range(counts[f])]
        else:
            pending["take"] = FACES[action - A.TAKE_BASE]
    return None


def new_round(start_player: int, hands: Sequence[Sequence[int]]) -> dict[str, Any]:
    """A round of the log: its start player, its deal (face indices per seat) as the record writes it, no turn yet."""
    return {"start_player": start_player, "hands": [[FACES[f] for f in h] for h in hands], "turns": []}


def make_record(n: int, rules: RulesConfig, start_points: list[int], rounds: list[dict],
                pending: dict | None) -> dict[str, Any]:
    """The ``lama-dice-record/1`` dict of a game's log (a roll still awaiting its decision left out)."""
    rec: dict[str, Any] = {
        "format": RECORD_FORMAT, "players": n, "rules": rules.to_dict(), "start_points": list(start_points),
        "rounds": [{"start_player": r["start_player"], "hands": [list(h) for h in r["hands"]],
                    "turns": [dict(t, **({"dice": list(t["dice"])} if "dice" in t else {})) for t in r["turns"]]}
                   for r in rounds],
    }
    if pending is not None:
        rec["rounds"][-1]["turns"].pop()
    return rec


def make_result(results: list[dict], totals: list[int], game_over: bool, in_round: bool) -> dict[str, Any]:
    """The replay result (``docs/RULES.md``) of the finished rounds' ``results`` and the round under way, if any."""
    rounds = [{"finished": r["finished"], "ended_by": r["ended_by"], "went_out": r["went_out"],
               "points": list(r["points"]), "totals": list(r["totals"])} for r in results]
    if in_round:
        rounds.append({"finished": False, "ended_by": None, "went_out": None, "points": None, "totals": totals})
    return {"valid": True, "rounds": rounds, "totals": totals, "game_over": game_over,
            "winners": winners(totals) if game_over else []}


__all__ = ["RECORD_FORMAT", "log_action", "make_record", "make_result", "new_round"]
