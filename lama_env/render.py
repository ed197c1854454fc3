"""A plain-text picture of the table (the ``ansi`` / ``human`` render modes); pure Python, read only.

Example (two players, player 0 deciding what to discard; ``>`` marks the player to decide)::

    Round 1 · start player_0 · player_0 to discard (dice 2 3 2)
    llama row: L 1 2 3 4 5 6
      seat      display       points  total
    > player_0  2 3 4 4 5 5       14      0
      player_1  L L 2 3 4 6       25      0
"""

from __future__ import annotations

from collections.abc import Sequence

from .engine import LamaGame
from .roundend import DECISIONS, RoundEnd, ended, is_round_end
from .rules import FACES, NUM_FACES, score_display, winners


def _cards(counts: Sequence[int]) -> str:
    cards = [FACES[f] for f in range(NUM_FACES) for _ in range(counts[f])]
    return " ".join(cards) if cards else "(empty)"


def render_text(game: LamaGame | RoundEnd, names: Sequence[str] | None = None, highlight: int | None = None) -> str:
    """Describe the table in a few lines of text.

    Args:
        game: the game to draw, or the table of a round's end (:class:`~lama_env.roundend.RoundEnd`).
        names: a name per seat (default ``player_0``, ``player_1``, ...).
        highlight: a seat to mark with ``*`` (e.g. the learner of a Gym env).

    Returns:
        The round, the start player, whose decision it is (with the dice after a
        roll), the llama row, and one line per player with their display, current
        round points, chip total and whether they have quit; a finished round or
        game adds its outcome.
    """
    n = game.num_players
    if names is None:
        names = [f"player_{p}" for p in range(n)]
    labels = [names[p] + ("*" if p == highlight else "") for p in range(n)]
    width = max(4, max(len(s) for s in labels))
    phase = game.phase
    end = ended(game)
    how = end["ended_by"] if end else None
    head = f"Round {game.round_index + 1} · start {names[game.start_player]} · "
    if phase in DECISIONS:
        head += f"{names[game.current_player]} {DECISIONS[phase]}"
        if game.dice is not None:
            head += f" (dice {' '.join(FACES[f] for f in game.dice)})"
    elif is_round_end(game):
        head += f"round over ({how})"
    else:
        head += f"game over ({how}); winners: {', '.join(names[p] for p in winners(game.totals))}"
    row = " ".join(FACES[f] if game.row[f] else "·" for f in range(NUM_FACES))
    cards = [_cards(d) for d in game.displays]
    cw = max(12, max(len(c) for c in cards))
    lines = [head, f"llama row: {row}", f"  {'seat':<{width}}  {'display':<{cw}}  points  total"]
    deciding = game.current_player if phase in DECISIONS else None
    for p in range(n):
        status = "  [quit]" if game.quit[p] else ""
        if end is not None and p in (end["went_out"], end["busted"]):
            status = "  [bust]" if end["busted"] == p else "  [went out]"
        pts = end["points"][p] if end is not None else score_display(game.displays[p])
        mark = ">" if p == deciding else " "
        lines.append(f"{mark} {labels[p]:<{width}}  {cards[p]:<{cw}}  {pts:>6}  {game.totals[p]:>5}{status}")
    return "\n".join(lines)


__all__ = ["render_text"]
