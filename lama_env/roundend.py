"""The table as a round ended, for viewers that pause between rounds (docs/environments.md, The rules engine in Python).

:func:`step_with_round_end` returns a :class:`RoundEnd`, a read-only view with a game's attributes: presentation.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from .actions import QUIT, ROLL
from .constants import DISCARD, TAKE, TURN
from .rules import RulesConfig
from .transitions import ended_table

if TYPE_CHECKING:
    from .engine import LamaGame

#: What the player to act decides, by phase (the engine's ``Phase`` values): the text table's and the pictures' words.
DECISIONS = {TURN: "to roll or quit", DISCARD: "to discard", TAKE: "to take a row card"}


class RoundEnd:
    """The table of a round a step ended, as it stood (``totals`` after it; ``current_player`` moved last)."""

    __slots__ = ("current_player", "displays", "last_round", "num_players", "quit", "round_index", "row", "rules",
                 "start_player", "totals", "turns_in_round")

    phase = None
    dice = None
    game_over = False

    def __init__(self, game: LamaGame, seen: tuple[Any, ...], player: int, action: int) -> None:
        """The view of the round that ``player``'s ``action`` just ended in ``game`` (``seen``: the reads before it)."""
        displays, row, self.round_index, self.start_player, turns = seen
        last = game.last_round
        assert last is not None
        disp = list(displays)
        disp[player], row = ended_table(disp[player], row, action, last["ended_by"])
        self.num_players: int = game.num_players
        self.rules: RulesConfig = game.rules
        self.displays: tuple[tuple[int, ...], ...] = tuple(tuple(x) for x in disp)
        self.row: tuple[int, ...] = tuple(row)
        self.quit: tuple[bool, ...] = tuple(last["quit"])
        self.totals: tuple[int, ...] = tuple(last["totals"])
        self.current_player = player
        self.turns_in_round: int = turns + (action in (ROLL, QUIT))  # a discard or a take: its roll's turn
        self.last_round: dict = last

    def legal_actions(self) -> tuple[int, ...]:
        """No decision is asked at a round's end: ``()``."""
        return ()

    def clone(self) -> RoundEnd:
        """The view itself (it never changes)."""
        return self

    def __repr__(self) -> str:
        """Show the round, how it ended and the totals."""
        return (f"RoundEnd(round={self.round_index}, ended_by={self.last_round['ended_by']!r}, "
                f"totals={list(self.totals)})")


def step_with_round_end(game: LamaGame, action: int, dice: Sequence[Any] | None = None) -> RoundEnd | None:
    """``game.step(action, dice)`` (its errors too); the :class:`RoundEnd` when it ended a round, not the game."""
    player = game.current_player
    seen = (game.displays, game.row, game.round_index, game.start_player, game._turns())
    finished = game.rounds_finished
    game.step(action, dice)
    if game.game_over or game.rounds_finished == finished:
        return None
    return RoundEnd(game, seen, player, action)


def ended(game: LamaGame | RoundEnd) -> dict | None:
    """How the round a table shows ended (its ``last_round``): at a :class:`RoundEnd` or a game's end; else None."""
    return game.last_round if isinstance(game, RoundEnd) or game.game_over else None


def turns(game: LamaGame | RoundEnd) -> int:
    """The turns taken in the round a table shows (a quit or a roll is one; ``rules.max_round_turns`` caps them)."""
    return game.turns_in_round if isinstance(game, RoundEnd) else game._turns()


def is_round_end(game: Any) -> bool:
    """Whether ``game`` is a :class:`RoundEnd` view (the drawers' test for the table of a round's end)."""
    return isinstance(game, RoundEnd)


__all__ = ["DECISIONS", "RoundEnd", "ended", "is_round_end", "step_with_round_end", "turns"]
