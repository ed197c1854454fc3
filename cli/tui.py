"""The terminal picture of a game, shared by ``lama-dice play`` and ``lama-dice show``.

Everything here only *reads* a :class:`~lama_env.engine.LamaGame` and turns it
into `rich <https://rich.readthedocs.io>`_ renderables; the rules stay in the
engine (round points come from :func:`lama_env.rules.score_display`, the
chance of a roll that matches nothing from :func:`lama_env.odds.p_no_match`).

* :func:`table_view`: the table (llama row, dice, every display with its
  round points, chips, who has quit, whose turn it is, the no-match chance);
* :func:`turn_text`: one line saying what a turn did (from its record entry);
* :func:`round_summary` / :func:`game_summary`: end-of-round and end-of-game;
* :func:`show_record`: a whole record, turn by turn (``lama-dice show``).

The output works on any :class:`rich.console.Console`, colour or not, tty or not::

    console = Console(file=io.StringIO(), width=100, color_system=None)
    console.print(table_view(game, seat_names(game.num_players)))
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple, TextIO

from rich import box
from rich.console import Console, Group, RenderableType
from rich.rule import Rule
from rich.table import Table
from rich.text import Text

from lama_env.engine import LamaGame
from lama_env.odds import p_no_match
from lama_env.roundend import RoundEnd, ended, is_round_end
from lama_env.rules import FACES, NUM_FACES, face_index, score_display, winners
from lama_env.safetext import safe_text
from lama_env.transitions import is_triple_llama

#: Colour of each face (index order: L, 1..6).
FACE_STYLES: tuple[str, ...] = ("bold yellow", "red", "magenta", "blue", "cyan", "green", "bright_white")

_ENDINGS = {
    "went_out": "went out",
    "row_empty": "the llama row is empty",
    "bust": "bust",
    "all_quit": "everyone quit",
    "turn_cap": "the turn cap was reached",
}


class Snapshot(NamedTuple):
    """What :func:`turn_text` needs from the state before a turn."""

    row: tuple[int, ...]
    totals: tuple[int, ...]


def snapshot(game: LamaGame | RoundEnd) -> Snapshot:
    """The llama row and chip totals of ``game`` now (take it before a turn)."""
    return Snapshot(game.row, game.totals)


def seat_names(num_players: int, names: Mapping[int, str] | None = None) -> list[str]:
    """Display names per seat: ``names[seat]`` where given, else ``"P<seat>"``.

    A given name is shown as :func:`lama_env.safetext.safe_text` makes it (no control codes, one line).
    """
    names = names or {}
    return [safe_text(names[p]) if p in names else f"P{p}" for p in range(num_players)]


# ---------------------------------------------------------------- pieces
def face_text(face: int, style: str = "") -> Text:
    """One face (index) as coloured text."""
    return Text(FACES[face], style=f"{FACE_STYLES[face]} {style}".strip())


def cards_text(counts: Sequence[int], highlight: Sequence[int] = ()) -> Text:
    """Cards given as counts per face, in face order (``L 1 3 3 6``); faces in ``highlight`` reversed."""
    out = Text()
    for f in range(NUM_FACES):
        for _ in range(counts[f]):
            if out:
                out.append(" ")
            out.append_text(face_text(f, "reverse" if f in highlight else ""))
    return out if out else Text("(empty)", style="dim")


def faces_text(faces: Sequence[Any]) -> Text:
    """Faces given as names or indices, in the given order (``3 4 L``)."""
    out = Text()
    for f in faces:
        if out:
            out.append(" ")
        out.append_text(face_text(FACES.index(f) if isinstance(f, str) else int(f)))
    return out


def dice_text(dice: Sequence[Any]) -> Text:
    """Three dice as ``[3] [4] [L]`` (faces as names or indices)."""
    out = Text()
    for f in dice:
        if out:
            out.append(" ")
        out.append("[")
        out.append_text(face_text(FACES.index(f) if isinstance(f, str) else int(f), "bold"))
        out.append("]")
    return out


def row_text(row: Sequence[int]) -> Text:
    """The llama row: each face still there, ``·`` where it was taken."""
    out = Text()
    for f in range(NUM_FACES):
        if f:
            out.append(" ")
        out.append_text(face_text(f) if row[f] else Text("·", style="dim"))
    return out


def _chance(p: float) -> str:
    return f"{100 * p:.0f}%" if p >= 0.005 or p == 0 else "<1%"


# ---------------------------------------------------------------- the table
def table_view(
    game: LamaGame | RoundEnd,
    names: Sequence[str],
    *,
    dice: Sequence[Any] | None = None,
    you: int | None = None,
) -> RenderableType:
    """The picture of the table.

    Args:
        game: the game to draw.
        names: a display name per seat.
        dice: the dice just rolled, shown when no roll is pending (a pending
            roll, :attr:`LamaGame.dice`, is always shown).
        you: the human's seat (its row is marked).

    Returns:
        A renderable: a header line (round, llama row, dice) over one row per
        seat with its display, current round points, chips (total points),
        the chance that the next roll matches nothing, and its status.
    """
    pending = game.dice
    shown = pending if pending is not None else dice
    over = game.game_over or is_round_end(game)
    header = Text.assemble(
        (f"Round {game.round_index + 1}", "bold"),
        "   llama row ", row_text(game.row),
    )
    if shown is not None:
        header.append("   dice ")
        header.append_text(dice_text(shown))
    lines: list[RenderableType] = [header]
    if not over and game.quit.count(False) == 1 and game.num_players > 1:
        lines.append(Text("Only one player is left: for them a roll that matches nothing is a bust.",
                          style="italic"))

    table = Table(box=box.SIMPLE_HEAD, pad_edge=False, show_edge=False, expand=False, padding=(0, 1))
    table.add_column("", width=1, no_wrap=True)
    table.add_column("player", no_wrap=True)
    table.add_column("display", no_wrap=True, min_width=11)
    table.add_column("pts", justify="right", no_wrap=True)
    table.add_column("chips", justify="right", no_wrap=True)
    table.add_column("no match", justify="right", no_wrap=True)
    table.add_column("", no_wrap=True)
    totals = game.totals
    won = set(winners(totals)) if game.game_over else set()
    end = ended(game) or {}
    for p in range(game.num_players):
        disp = game.displays[p]
        acting = not over and p == game.current_player
        quit_ = game.quit[p]
        highlight = [f for f in set(pending) if disp[f]] if (acting and pending is not None) else []
        if over:
            status = ("winner" if p in won else "went out" if end.get("went_out") == p
                      else "quit" if quit_ else "")
        else:
            status = "to act" if acting else "quit" if quit_ else ""
        style = "bold" if acting else "dim" if quit_ else ""
        name = Text(names[p])
        if you is not None and p == you:
            name.stylize("underline")
        table.add_row(
            Text("▶", style="bold green") if acting else "",
            name,
            cards_text(disp, highlight),
            str(score_display(disp)),
            str(totals[p]),
            "" if (quit_ or over) else _chance(p_no_match(disp, game.rules)),
            Text(status, style={"to act": "bold green", "quit": "dim", "winner": "bold yellow"}.get(status, "")),
            style=style,
        )
    return Group(*lines, table)


# ---------------------------------------------------------------- turns
def turn_text(turn: Mapping[str, Any], before: Snapshot, game: LamaGame | RoundEnd, names: Sequence[str]) -> Text:
    """One line saying what a turn did.

    Args:
        turn: the turn's record entry (``{"player", "action", "dice", "discard" | "take"}``).
        before: :func:`snapshot` of the game before the turn.
        game: the game after the turn (the table of the round's end, a RoundEnd, if it ended one).
        names: a display name per seat.
    """
    p = turn["player"]
    end = ended(game) or {}
    out = Text.assemble((f"{names[p]}: ", "bold"))
    if turn["action"] == "quit":
        out.append("quits", style="bold")
        out.append(f" (display scores {score_display(game.displays[p])})")
        return out
    out.append("rolls ")
    out.append_text(dice_text(turn["dice"]))
    parts: list[Text] = []
    if is_triple_llama([face_index(f) for f in turn["dice"]]):
        chip = (f"returns a chip ({before.totals[p]} → {game.totals[p]})" if before.totals[p]
                else "no chip to return")
        parts.append(Text(f"triple llama! {chip}", style="bold yellow"))
    if "discard" in turn:
        t = Text("discards ")
        shown = sorted(turn["discard"], key=FACES.index)
        t.append_text(faces_text(shown) if shown else Text("nothing"))
        if end.get("went_out") == p and end.get("ended_by") == "went_out":
            t.append(" and goes out!", style="bold green")
        parts.append(t)
    elif "take" in turn:
        t = Text("matches nothing, takes ")
        t.append_text(faces_text([turn["take"]]))
        t.append(" from the llama row")
        parts.append(t)
    elif end.get("busted") == p:
        gained = [f for f in range(NUM_FACES) if before.row[f] and not game.row[f]]
        t = Text("BUST! takes the rest of the llama row: ", style="bold red")
        t.append_text(faces_text(gained))
        parts.append(t)
    for part in parts:
        out.append(" → ")
        out.append_text(part)
    return out


# ---------------------------------------------------------------- summaries
def round_summary(game: LamaGame | RoundEnd, names: Sequence[str],
                  start_totals: Sequence[int] | None = None) -> RenderableType:
    """The end of a round: how it ended, each display, its points and the totals.

    Args:
        game: the table of a round's end (:class:`~lama_env.roundend.RoundEnd`), or a game that is over.
        names: a display name per seat.
        start_totals: the totals when the round was dealt, to show ``before → after``.
    """
    res = game.last_round
    assert res is not None
    if res["went_out"] is not None:
        how = f"{names[res['went_out']]} went out (and returns a chip)"
    elif res["busted"] is not None:
        how = f"{names[res['busted']]} went bust"
    else:
        how = _ENDINGS.get(res["ended_by"], str(res["ended_by"]))
    title = Text.assemble((f"Round {game.round_index + 1} over: ", "bold"), how)
    table = Table(box=box.SIMPLE_HEAD, pad_edge=False, show_edge=False, padding=(0, 1))
    table.add_column("player", no_wrap=True)
    table.add_column("display", no_wrap=True)
    table.add_column("points", justify="right")
    table.add_column("total", justify="right")
    for p in range(game.num_players):
        total = f"{start_totals[p]} → {res['totals'][p]}" if start_totals is not None else str(res["totals"][p])
        table.add_row(Text(names[p]), cards_text(game.displays[p]), f"+{res['points'][p]}",
                      Text(total, style="bold"))
    return Group(Rule(style="dim"), title, table)


def game_summary(game: LamaGame, names: Sequence[str]) -> RenderableType:
    """The end of the game: the winner(s) and the standings (fewest points first)."""
    totals = game.totals
    won = winners(totals)
    who = " and ".join(names[w] for w in won)
    verb = "wins" if len(won) == 1 else "share the win"
    if game.num_players == 1:
        pts = totals[0]
        title = Text.assemble(("Game over", "bold"), f" after {game.round_index + 1} rounds: ",
                              (f"final total {pts} point{'' if pts == 1 else 's'}.", "bold yellow"))
        return Group(Rule(style="dim"), title)
    title = Text.assemble(("Game over", "bold"), f" after {game.round_index + 1} rounds: ",
                          (f"{who} {verb}", "bold yellow"),
                          f" with {totals[won[0]]} point{'' if totals[won[0]] == 1 else 's'}.")
    table = Table(box=box.SIMPLE_HEAD, pad_edge=False, show_edge=False, padding=(0, 1))
    table.add_column("place", justify="right")
    table.add_column("player", no_wrap=True)
    table.add_column("total", justify="right")
    for p in sorted(range(game.num_players), key=lambda q: (totals[q], q)):
        place = 1 + sum(1 for q in range(game.num_players) if totals[q] < totals[p])
        table.add_row(str(place), Text(names[p]), str(totals[p]), style="bold yellow" if p in won else "")
    return Group(Rule(style="dim"), title, table)


# ---------------------------------------------------------------- a record
def show_record(
    record: Any,
    console: Console,
    *,
    step: bool = False,
    stdin: TextIO | None = None,
    names: Mapping[int, str] | None = None,
) -> bool:
    """Render a legal record turn by turn: the deal, then each turn's line and table.

    Args:
        record: a ``lama-dice-record/1`` object; check it with
            :func:`lama_env.record.replay` first (a fault raises
            :class:`~lama_env.record.RecordError` part-way).
        console: where to draw.
        step: wait for Enter (a line on ``stdin``) between turns; ``q`` stops.
        stdin: the stream read when ``step`` is set.
        names: optional display names per seat (default: the record's own, ``about.names``).

    Returns:
        True if the whole record was shown, False if stopped (``q`` or end of input).
    """
    from lama_env.record import iter_replay, record_names

    n = record["players"]
    own = record_names(record)
    seat = seat_names(n, names if names is not None or own is None else dict(enumerate(own)))
    rounds = record["rounds"]
    console.print(Text.assemble(("Game record", "bold"), f": {n} player{'s' if n != 1 else ''}, "
                                f"{len(rounds)} round{'s' if len(rounds) != 1 else ''}, rules: ",
                                _rules_line(record)))
    about = about_line(record)
    if about:
        console.print(Text(about), soft_wrap=True)
    before: Snapshot | None = None
    start: Snapshot | None = None
    for game, r, t in iter_replay(record):
        if t is None:
            console.print(Rule(Text(f"Round {r + 1} · first to play: {seat[game.start_player]}"), style="cyan"))
            console.print(table_view(game, seat))
            before = start = snapshot(game)
            if rounds[r]["turns"] and not _pause(console, step, stdin):
                return False
            continue
        turn = rounds[r]["turns"][t]
        assert before is not None and start is not None  # set when the round was dealt (t is None)
        console.print(Text(f"turn {t + 1}  ", style="dim").append_text(turn_text(turn, before, game, seat)))
        if game.game_over or is_round_end(game):
            console.print(round_summary(game, seat, start.totals))
            if isinstance(game, LamaGame) and game.game_over:
                console.print(game_summary(game, seat))
        else:
            console.print(table_view(game, seat, dice=turn.get("dice")))
        before = snapshot(game)
        last = t == len(rounds[r]["turns"]) - 1 and r == len(rounds) - 1
        if not last and not _pause(console, step, stdin):
            return False
    if not (game.game_over or is_round_end(game)):
        console.print(Text(f"(round {game.round_index + 1} is unfinished: the record ends here)", style="italic"))
    return True


def about_line(record: Mapping[str, Any]) -> str | None:
    """Who played, the seed and the version of a ``lama-dice-record/2`` record, in one line (None without ``about``).

    ``Played by You, P1 ppo:2p (agents: -, ppo:2p); seed 5; written by lama-dice 0.1.0``.
    """
    about = record.get("about")
    if not isinstance(about, Mapping):
        return None
    parts = []
    agents = ", ".join(safe_text(a) if a is not None else "a person" for a in about.get("agents") or ())
    if about.get("names"):
        who = "Played by " + ", ".join(safe_text(x) for x in about["names"])
        if agents:
            who += f" (agents: {agents})"
        parts.append(who)
    elif agents:
        parts.append("Agents: " + agents)
    if "seed" in about:
        parts.append(f"seed {safe_text(about['seed'])}" if about["seed"] is not None else "no seed (fresh randomness)")
    if about.get("version"):
        parts.append(f"written by lama-dice {safe_text(about['version'])}")
    return "; ".join(parts) if parts else None


def _rules_line(record: Mapping[str, Any]) -> str:
    from lama_env.rules import RulesConfig

    rules = RulesConfig.from_dict(record.get("rules"))
    d = rules.to_dict()
    text = ", ".join(f"{k}={str(v).lower() if isinstance(v, bool) else v}" for k, v in d.items() if k != "dice")
    return text + (", custom dice" if "dice" in d else "")


def _pause(console: Console, step: bool, stdin: TextIO | None) -> bool:
    if not step:
        return True
    console.print(Text("Enter = next turn, q = stop", style="dim"), end=" ")
    line = (stdin.readline() if stdin is not None else "")
    if not line or not console.is_terminal:  # a terminal echoes the Enter itself
        console.print(line.rstrip("\r\n"), markup=False, highlight=False)
    return bool(line) and line.strip().lower() not in ("q", "quit")
