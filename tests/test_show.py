"""`lama-dice show`: every record of the test set renders turn by turn; illegal ones give one line."""

from __future__ import annotations

import argparse
import io
import json
import re
from itertools import cycle, islice
from pathlib import Path

import pytest
from rich.console import Console

from lama_dice.cli.commands import show as show_cmd
from lama_dice.cli.main import main
from lama_dice.cli.play import TerminalGame, make_opponents, player_names, resolve_seats
from lama_dice.cli.tui import show_record
from lama_env.engine import LamaGame
from lama_env.record import iter_replay, replay

EXAMPLES = Path(__file__).resolve().parent / "data" / "examples.json"
CASES = json.loads(EXAMPLES.read_text())
LEGAL = [c for c in CASES if c["expect"]["valid"]]
ILLEGAL = [c for c in CASES if not c["expect"]["valid"]]

TURN_LINE = re.compile(r"^turn \d+  ", re.M)


def console() -> tuple[Console, io.StringIO]:
    out = io.StringIO()
    return Console(file=out, width=100, color_system=None, force_terminal=False), out


def show(path, *, step=False, stdin=None) -> tuple[int, str]:
    con, out = console()
    rc = show_cmd.run(argparse.Namespace(record=str(path), step=step), stdin=stdin or io.StringIO(), console=con)
    return rc, out.getvalue()


def n_turns(rec) -> int:
    return sum(len(r["turns"]) for r in rec["rounds"])


def played_record(tmp_path, seed: int, players: int, stdin_text: str) -> Path:
    """A record written by `play` (scripted keys)."""
    path = tmp_path / f"played-{seed}.json"
    n, seats = resolve_seats(players, ["random"], 0)
    con, _ = console()
    TerminalGame(LamaGame(n, seed=seed), make_opponents(seats, seed), human=0,
                 stdin=io.StringIO(stdin_text), console=con, save=str(path), names=player_names(n, 0, seats)).run()
    return path


@pytest.mark.parametrize("case", LEGAL, ids=[c["name"] for c in LEGAL])
def test_every_legal_example_renders_turn_by_turn(tmp_path, case):
    path = tmp_path / "rec.json"
    path.write_text(json.dumps(case["record"]))
    rc, text = show(path)
    assert rc == 0
    rec = case["record"]
    assert len(TURN_LINE.findall(text)) == n_turns(rec)
    for r in range(len(rec["rounds"])):
        assert f"Round {r + 1} · first to play: P{rec['rounds'][r]['start_player']}" in text
    expect = case["expect"]
    finished = [r for r in expect["rounds"] if r["finished"]]
    assert text.count("over: ") == len(finished)
    for r, res in enumerate(expect["rounds"]):
        if res["finished"]:  # the summary shows each player's round points
            block = text.split(f"Round {r + 1} over: ")[1]
            for p, pts in enumerate(res["points"]):
                assert re.search(rf"^P{p} .* \+{pts} ", block, re.M)
    if expect["game_over"] and rec["players"] == 1:
        assert f"final total {expect['totals'][0]} points." in text
    elif expect["game_over"]:
        winners = " and ".join(f"P{w}" for w in expect["winners"])
        assert f"{winners} {'wins' if len(expect['winners']) == 1 else 'share the win'}" in text
    else:
        assert "Game over" not in text


@pytest.mark.parametrize("case", ILLEGAL, ids=[c["name"] for c in ILLEGAL])
def test_illegal_example_gives_one_line_and_exit_1(tmp_path, capsys, case):
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(case["record"]))
    assert main(["show", str(path)]) == 1
    captured = capsys.readouterr()
    assert captured.out == ""
    err = captured.err
    assert err.count("\n") == 1 and err.startswith("lama-dice show: invalid record: ")
    fault = case["expect"]
    assert fault["error"] in err
    if fault["round"] is not None:
        assert f"round {fault['round'] + 1}" in err


def test_not_a_record_gives_one_line(tmp_path, capsys):
    path = tmp_path / "junk.json"
    path.write_text("{not json")
    assert main(["show", str(path)]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "not a game record" in err
    assert main(["show", str(tmp_path / "missing.json")]) == 1
    assert "cannot read" in capsys.readouterr().err


def test_records_written_by_play_render(tmp_path):
    # a whole game ("r", "a" = largest discard, "1" for takes) and one stopped in its first round
    full = played_record(tmp_path, 3, 3, "".join(k + "\n" for k in islice(cycle("ra1"), 3000)))
    part = played_record(tmp_path, 4, 2, "r\na\n1\n")
    rec = json.loads(full.read_text())
    rc, text = show(full)
    assert rc == 0 and "Game over" in text
    assert len(TURN_LINE.findall(text)) == n_turns(rec)
    # a record written by play names its players (lama-dice-record/2): the seats are "You", "P1 random", ...
    assert rec["about"]["names"] == ["You", "P1 random", "P2 random"]
    assert "Played by You, P1 random, P2 random (agents: a person, random, random); no seed" in text
    assert "P0 " not in text
    # the same record without its about part: P0, P1, ...
    bare = tmp_path / "bare.json"
    bare.write_text(json.dumps({k: v for k, v in rec.items() if k != "about"} | {"format": "lama-dice-record/1"}))
    rc, text = show(bare)
    assert rc == 0 and "You" not in text and "Played by" not in text
    rc, text = show(part)
    assert rc == 0 and "is unfinished" in text
    assert len(TURN_LINE.findall(text)) == n_turns(json.loads(part.read_text()))


def test_step_waits_for_enter_between_turns(tmp_path):
    case = max(LEGAL, key=lambda c: n_turns(c["record"]))
    path = tmp_path / "rec.json"
    path.write_text(json.dumps(case["record"]))
    # a pause after each deal and each turn: k Enters then the end of input show k turns
    for k in (0, 1, 3):
        rc, text = show(path, step=True, stdin=io.StringIO("\n" * k))
        assert rc == 0
        assert len(TURN_LINE.findall(text)) == k
        assert text.count("Enter = next turn") == k + 1
    rc, text = show(path, step=True, stdin=io.StringIO("\n\nq\n\n\n"))
    assert len(TURN_LINE.findall(text)) == 2
    rc, text = show(path, step=True, stdin=io.StringIO("\n" * 10_000))
    assert len(TURN_LINE.findall(text)) == n_turns(case["record"])
    rc, text = show(path, step=False, stdin=io.StringIO(""))
    assert "Enter = next turn" not in text and len(TURN_LINE.findall(text)) == n_turns(case["record"])


def test_cli_show_renders_to_stdout(tmp_path, capsys):
    path = tmp_path / "rec.json"
    path.write_text(json.dumps(LEGAL[0]["record"]))
    assert main(["show", str(path)]) == 0
    out = capsys.readouterr().out
    assert len(TURN_LINE.findall(out)) == n_turns(LEGAL[0]["record"])


@pytest.mark.parametrize("case", LEGAL, ids=[c["name"] for c in LEGAL])
def test_iter_replay_steps_through_every_turn(case):
    rec = case["record"]
    steps = [(r, t, game.clone()) for game, r, t in iter_replay(rec)]
    assert len(steps) == len(rec["rounds"]) + n_turns(rec)
    assert [(r, t) for r, t, _ in steps if t is None] == [(r, None) for r in range(len(rec["rounds"]))]
    assert steps[-1][2].result() == replay(rec) == case["expect"]


def test_show_record_reports_whether_it_finished():
    con, _ = console()
    rec = LEGAL[0]["record"]
    assert show_record(rec, con) is True
    assert show_record(rec, con, step=True, stdin=io.StringIO("q\n")) is False


def _render_turns(game: LamaGame) -> str:
    con, out = console()
    assert show_record(game.to_record(), con)
    return out.getvalue()


def test_triple_llama_returns_a_chip_in_the_picture():
    from lama_env import actions as A

    hands = [["1", "1", "2", "2", "3", "3"], ["4", "4", "5", "5", "6", "6"]]
    game = LamaGame(2, start_points=[15, 0], hands=hands)
    game.step(A.ROLL, dice=["L", "L", "L"])  # seat 0 returns a ten
    game.step(A.ROLL, dice=["L", "L", "L"])  # seat 1 has no chip
    text = _render_turns(game)
    assert "P0: rolls [L] [L] [L] → triple llama! returns a chip (15 → 5)" in text
    assert "P1: rolls [L] [L] [L] → triple llama! no chip to return" in text
    assert "is unfinished" in text


def test_triple_llama_that_also_matches_shows_the_discard():
    from lama_env import actions as A

    hands = [["L", "L", "2", "2", "3", "3"], ["4", "4", "5", "5", "6", "6"]]
    game = LamaGame(2, {"triple_llama": "also_match"}, start_points=[3, 0], hands=hands)
    game.step(A.ROLL, dice=["L", "L", "L"])
    game.step(max(game.legal_actions(), key=lambda a: sum(A.discard_counts(a))))
    text = _render_turns(game)
    assert "P0: rolls [L] [L] [L] → triple llama! returns a chip (3 → 2) → discards L L" in text
