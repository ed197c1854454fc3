"""The compiled engine's game log read back: its entries, its ``lama-dice-record/1`` record and its result.

The kernels write the log (``lama_env._kernel.log_step`` / ``log_deal``; its layout: docs/environments.md,
The compiled engine's record); :func:`iter_log` is the one parser of that layout.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np

from . import constants as C
from .constants import LOG_END, LOG_QUIT, LOG_ROLL, LOG_ROUND, OUT_DISCARD, OUT_TAKE
from .rules import FACES, HAND_SIZE, NUM_FACES, RulesConfig
from .rules import winners as _winners


def iter_log(log: np.ndarray, n: int) -> Iterator[tuple[int, int, np.ndarray]]:
    """The entries of a kernel's log as ``(offset, tag, fields after the tag)``: the one parser of the logs."""
    lengths = {LOG_ROUND: 2 + n * HAND_SIZE, LOG_QUIT: 2, LOG_ROLL: 7, LOG_END: 3 + 2 * n}  # with the tag
    i, size = 0, len(log)
    while i < size:
        tag = int(log[i])
        if tag not in lengths:  # pragma: no cover - a kernel bug
            raise ValueError(f"corrupt trajectory log at {i}: tag {tag}")
        yield i, tag, log[i + 1:i + lengths[tag]]
        i += lengths[tag]


def log_to_record(log: np.ndarray, num_players: int, rules: RulesConfig) -> dict:
    """A trajectory log of the kernel as a ``lama-dice-record/1`` dict."""
    n = num_players
    rounds: list[dict] = []
    for _, tag, e in iter_log(log, n):
        if tag == LOG_ROUND:
            cards = [FACES[int(c)] for c in e[1:]]
            rounds.append({"start_player": int(e[0]),
                           "hands": [cards[p * HAND_SIZE:(p + 1) * HAND_SIZE] for p in range(n)],
                           "turns": []})
        elif tag == LOG_QUIT:
            rounds[-1]["turns"].append({"player": int(e[0]), "action": "quit"})
        elif tag == LOG_ROLL:
            turn: dict[str, Any] = {"player": int(e[0]), "action": "roll",
                                    "dice": [FACES[int(f)] for f in e[1:4]]}
            if e[4] == OUT_DISCARD:
                turn["discard"] = [FACES[f] for f in range(NUM_FACES) for _ in range((int(e[5]) >> (2 * f)) & 3)]
            elif e[4] == OUT_TAKE:
                turn["take"] = FACES[int(e[5])]
            rounds[-1]["turns"].append(turn)
    return {"format": C.RECORD_FORMAT, "players": n, "rules": rules.to_dict(),
            "start_points": [0] * n, "rounds": rounds}


def round_result(e: np.ndarray, n: int) -> dict[str, Any]:
    """A ``LOG_END`` entry's fields (after the tag) as a finished round of the replay-result format."""
    wo = int(e[1])
    return {"finished": True, "ended_by": C.ROUND_ENDINGS[int(e[0])], "went_out": wo if wo >= 0 else None,
            "points": [int(x) for x in e[2:2 + n]], "totals": [int(x) for x in e[2 + n:2 + 2 * n]]}


def log_to_result(log: np.ndarray, num_players: int) -> dict:
    """The per-round results a trajectory log carries, in the replay-result format."""
    n = num_players
    rounds = [round_result(e, n) for _, tag, e in iter_log(log, n) if tag == LOG_END]
    totals = rounds[-1]["totals"] if rounds else [0] * n
    return {"valid": True, "rounds": rounds, "totals": list(totals), "game_over": True,
            "winners": _winners(totals)}


__all__ = ["iter_log", "log_to_record", "log_to_result", "round_result"]
