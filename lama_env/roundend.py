"""The table as a round ended, for viewers that pause between rounds (rounds flow on in the game).

A step that ends a round (not the game) deals the next one at once, or with ``chance="explicit"``
leaves the next deal's chance node; :attr:`lama_env.engine.LamaGame.last_round` says how the round
ended.  A viewer (the terminal game, the web app, ``lama-dice show``, the animations) that shows
the round's end, displays and all, steps the game with :func:`step_with_round_end`, which returns a
:class:`RoundEnd`: a read-only view of the ended round's table with the attributes the drawers read
from a game (:func:`lama_env.picture.status_text`, :class:`lama_env.picture.TablePicture`,
:func:`lama_env.render.render_text`, the terminal and web tables).  It is presentation, not
game state: the displays and the row after the last action come from the rules' pure functions
(:func:`lama_env.transitions.ended_table`), the points, totals and how the round ended from ``last_round``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from .actions import QUIT, ROLL
from .rules import RulesConfig, score_display
from .transitions import ended_table

if TYPE_CHECKING:
    from .engine import LamaGame


class RoundEnd:
    """The table of a round that a step ended, as it stood then (see the module docstring).

    Its attributes mirror :class:`~lama_env.engine.LamaGame`'s read-only views: ``num_players``,
    ``rules``, ``round_index`` and ``start_player`` (the ended round's), ``displays``, ``row``,
    ``quit``, ``totals`` (after the round), ``round_points``, ``ended_by``, ``went_out``,
    ``busted``, ``triple_llamas``, ``current_player`` (who made the last move), ``turns_in_round``,
    ``num_active``, ``last_player_rule``; ``last_round`` is the game's :attr:`last_round`.  No
    decision is asked (``phase`` None, no legal actions, no dice pending) and the game goes on
    (``game_over`` False, no winners).
    """

    __slots__ = ("busted", "current_player", "displays", "ended_by", "last_round", "num_active", "num_players",
                 "quit", "round_index", "round_points", "row", "rules", "start_player", "totals",
                 "triple_llamas", "turns_in_round", "went_out")

    phase = None
    dice = None
    game_over = False
    winners: list[int] = []  # noqa: RUF012 (a shared, never changed, empty list: nobody wins at a round's end)

    def __init__(self, game: LamaGame, seen: tuple[Any, ...], player: int, action: int) -> None:
        """The view of the round that ``player``'s ``action`` just ended in ``game`` (``seen``: the reads before it)."""
        displays, row, self.round_index, self.start_player, turns, active = seen
        last = game.last_round
        assert last is not None
        disp = list(displays)
        disp[player], row = ended_table(disp[player], row, action, last["ended_by"])
        if action in (ROLL, QUIT):  # a turn (a discard or a take belongs to its roll's)
            turns += 1
        if action == QUIT:
            active -= 1
        self.num_players: int = game.num_players
        self.rules: RulesConfig = game.rules
        self.displays: tuple[tuple[int, ...], ...] = tuple(tuple(x) for x in disp)
        self.row: tuple[int, ...] = tuple(row)
        self.quit: tuple[bool, ...] = tuple(last["quit"])
        self.totals: tuple[int, ...] = tuple(last["totals"])
        self.round_points: tuple[int, ...] = tuple(last["points"])
        self.ended_by: str = last["ended_by"]
        self.went_out: int | None = last["went_out"]
        self.busted: int | None = last["busted"]
        self.triple_llamas: tuple[int, ...] = tuple(last["triple_llamas"])
        self.current_player = player
        self.turns_in_round: int = turns
        self.num_active: int = active
        self.last_round: dict = last

    @property
    def last_player_rule(self) -> bool:
        """Whether one player was left in the round (as :attr:`LamaGame.last_player_rule`)."""
        return self.num_active == 1

    def display(self, player: int) -> tuple[int, ...]:
        """``player``'s display as the round ended."""
        return self.displays[player]

    def current_points(self, player: int) -> int:
        """What ``player``'s display scored."""
        return score_display(self.displays[player])

    def legal_actions(self) -> tuple[int, ...]:
        """No decision is asked at a round's end: ``()``."""
        return ()

    def copy(self) -> RoundEnd:
        """The view itself (it never changes)."""
        return self

    def __repr__(self) -> str:
        """Show the round, how it ended and the totals."""
        return f"RoundEnd(round={self.round_index}, ended_by={self.ended_by!r}, totals={list(self.totals)})"


def step_with_round_end(game: LamaGame, action: int, dice: Sequence[Any] | None = None) -> RoundEnd | None:
    """``game.step(action, dice)``; the :class:`RoundEnd` view when the step ended a round and the game goes on.

    Raises:
        lama_env.engine.IllegalActionError: the action (or the dice) is not legal now; nothing changed.
    """
    player = game.current_player
    seen = (game.displays, game.row, game.round_index, game.start_player, game.turns_in_round, game.num_active)
    finished = game.rounds_finished
    game.step(action, dice)
    if game.game_over or game.rounds_finished == finished:
        return None
    return RoundEnd(game, seen, player, action)


def is_round_end(game: Any) -> bool:
    """Whether ``game`` is a :class:`RoundEnd` view (the drawers' test for the table of a round's end)."""
    return isinstance(game, RoundEnd)


__all__ = ["RoundEnd", "is_round_end", "step_with_round_end"]
