"""`lama-dice play`: scripted keys drive whole games; saved records replay to the live result."""

from __future__ import annotations

import io
import json
import os
from itertools import cycle, islice

import pytest
from conftest import check_seed_plays_game_0
from rich.console import Console

from lama_dice.agents.registry import registered
from lama_dice.cli.main import main
from lama_dice.cli.play import (
    PlayError,
    TerminalGame,
    default_opponent,
    make_opponents,
    player_names,
    resolve_seats,
    write_record,
)
from lama_env import actions as A
from lama_env.engine import LamaGame, Phase
from lama_env.record import iter_replay, replay, replay_game


def keys(*cycle_of: str, n: int = 3000) -> io.StringIO:
    """A stream that repeats the given keys (one per line) ``n`` times in all."""
    return io.StringIO("".join(k + "\n" for k in islice(cycle(cycle_of), n)))


def console() -> tuple[Console, io.StringIO]:
    out = io.StringIO()
    return Console(file=out, width=100, color_system=None, force_terminal=False), out


def new_game(players: int, specs, *, seed: int, human: int = 0, stdin, save=None):
    n, seats = resolve_seats(players, specs, human)
    con, out = console()
    game = LamaGame(n, seed=seed, game_id=0)  # as `lama-dice play` makes it
    tg = TerminalGame(game, make_opponents(seats, seed), human=human, stdin=stdin, console=con, save=save,
                      names=player_names(n, human, seats))
    return tg, out


class Interrupting(io.StringIO):
    """Gives ``lines`` lines, then raises KeyboardInterrupt (Ctrl-C at the prompt)."""

    def __init__(self, lines: int, text: str) -> None:
        super().__init__(text)
        self.left = lines

    def readline(self, *args) -> str:
        if self.left == 0:
            raise KeyboardInterrupt
        self.left -= 1
        return super().readline(*args)


def _optional(spec: str):
    name = spec.partition(":")[0]
    return pytest.param(spec, marks=pytest.mark.skipif(name not in registered(), reason=f"{name} not registered"))


# ------------------------------------------------------------------ whole games
@pytest.mark.parametrize("players, specs, seat, seed", [
    (2, ["random"], 0, 1),
    (3, ["random"], 1, 2),
    (4, ["random", "random", "random"], 3, 3),
])
def test_scripted_game_plays_to_the_end_and_record_replays(tmp_path, players, specs, seat, seed):
    path = tmp_path / "game.json"
    # "r" then "a" (the largest discard); "1" answers a take; extra keys are explained, not fatal
    tg, out = new_game(players, specs, seed=seed, human=seat, stdin=keys("r", "a", "1"), save=str(path))
    result = tg.run()
    text = out.getvalue()
    assert result.finished and result.stopped is None and result.exit_code == 0
    assert result.saved == str(path)
    rec = json.loads(path.read_text())
    assert replay(rec) == result.game.result()
    assert result.game.result()["winners"] and "Game over" in text
    assert "is not a choice here" in text
    # every human discard was the largest one the roll allowed ("a")
    human_rolls = 0
    before = None
    for game, r, t in iter_replay(rec):
        if t is not None:
            turn = rec["rounds"][r]["turns"][t]
            if turn["player"] == seat and "discard" in turn:
                g = before.clone()
                g.step(A.ROLL, dice=turn["dice"])
                largest = max(g.legal_actions(), key=lambda a: sum(A.discard_counts(a)))
                assert A.describe(largest) == "discard " + " ".join(turn["discard"])
                human_rolls += 1
        before = game.clone()
    assert human_rolls > 0


@pytest.mark.parametrize("spec", ["random", _optional("optimal"), _optional("threshold:0.2")])
def test_human_who_always_quits_against_agents(tmp_path, spec):
    path = tmp_path / "q.json"
    tg, out = new_game(2, [spec], seed=11, stdin=keys("q"), save=str(path))
    result = tg.run()
    assert result.finished
    rec = json.loads(path.read_text())
    assert replay(rec) == result.game.result()
    human_turns = [t for rnd in rec["rounds"] for t in rnd["turns"] if t["player"] == 0]
    assert human_turns and all(t["action"] == "quit" for t in human_turns)
    assert out.getvalue().count("Round ") >= len(rec["rounds"])


def _seed_with_discard_choice() -> tuple[int, tuple[int, ...]]:
    """A seed whose first roll (seat 0 starts) matches with at least three discard choices."""
    for seed in range(200):
        g = LamaGame(2, seed=seed, game_id=0)
        g.step(A.ROLL)
        if g.phase == Phase.DISCARD and len(g.legal_actions()) >= 3:
            return seed, g.legal_actions()
    raise AssertionError("no seed found")


def test_numbered_keys_pick_the_listed_option(tmp_path):
    seed, legal = _seed_with_discard_choice()
    listed = sorted(legal, key=lambda a: (-sum(A.discard_counts(a)), a))  # "1 is the largest discard"
    path = tmp_path / "k.json"
    tg, out = new_game(2, ["random"], seed=seed, stdin=io.StringIO("r\n2\n"), save=str(path))
    result = tg.run()
    text = out.getvalue()
    assert result.stopped == "eof"
    assert f"  2  {A.describe(listed[1])} " in text
    assert f"  1  {A.describe(listed[0])} " in text
    first = json.loads(path.read_text())["rounds"][0]["turns"][0]
    assert "discard " + " ".join(first["discard"]) == A.describe(listed[1])


def test_wrong_keys_are_explained_and_asked_again():
    seed, legal = _seed_with_discard_choice()
    tg, out = new_game(2, ["random"], seed=seed, stdin=io.StringIO("x\n\n7\nroll\n99\nr\nA\n"))
    result = tg.run()
    text = out.getvalue()
    assert "'x' is not a choice here: type r to roll or q to quit." in text
    assert "Nothing typed: type r to roll or q to quit." in text
    assert "'7' is not a choice here" in text
    assert f"'99' is not a choice here: type a number 1-{len(legal)}" in text
    assert "'r' is not a choice here" in text
    assert result.stopped == "eof"
    first = result.game.to_record()["rounds"][0]["turns"][0]
    assert sum(A.discard_counts(max(legal, key=lambda a: sum(A.discard_counts(a))))) == len(first["discard"])


# ------------------------------------------------------------------ stopping early
def test_eof_mid_game_saves_a_valid_unfinished_record(tmp_path):
    path = tmp_path / "eof.json"
    tg, out = new_game(3, ["random"], seed=4, human=1, stdin=io.StringIO(""), save=str(path))
    result = tg.run()
    assert result.stopped == "eof" and not result.finished and result.exit_code == 0
    rec = json.loads(path.read_text())
    res = replay(rec)
    assert res["valid"] and res["rounds"][-1]["finished"] is False
    assert res == result.game.result()
    assert rec["rounds"][0]["turns"] and all(t["player"] != 1 for t in rec["rounds"][0]["turns"])
    assert "Game stopped (end of input)" in out.getvalue()


def test_eof_during_a_discard_choice_drops_the_pending_roll(tmp_path):
    seed, _ = _seed_with_discard_choice()
    path = tmp_path / "pending.json"
    tg, _ = new_game(2, ["random"], seed=seed, stdin=io.StringIO("r\n"), save=str(path))
    result = tg.run()
    assert result.game.phase == Phase.DISCARD  # the live game waits for the discard
    rec = json.loads(path.read_text())
    assert rec["rounds"][0]["turns"] == []
    res = replay(rec)
    assert res["valid"] and res["rounds"][0]["finished"] is False


def test_eof_between_rounds_keeps_the_finished_rounds(tmp_path):
    path = tmp_path / "between.json"
    # quit every turn; the key list ends right after the first round
    tg, out = new_game(2, ["random"], seed=8, stdin=keys("q", n=1), save=str(path))
    result = tg.run()
    game = result.game
    # rounds flow: the game has dealt round 2, but the person stopped at round 1's end, before seeing it
    assert result.stopped == "eof" and game.rounds_finished == 1 and not game.game_over
    assert "Game stopped (end of input) in round 1." in out.getvalue()
    rec = json.loads(path.read_text())
    assert len(rec["rounds"]) == 1  # the finished round only: the unseen deal is left out
    assert replay(rec) == {**game.result(), "rounds": game.result()["rounds"][:1]}
    assert replay(rec)["rounds"][0]["finished"]


def test_ctrl_c_ends_cleanly_and_saves(tmp_path):
    path = tmp_path / "int.json"
    tg, out = new_game(2, ["random"], seed=6, stdin=Interrupting(7, "r\n1\n" * 20), save=str(path))
    result = tg.run()
    assert result.stopped == "interrupt" and result.exit_code == 130
    res = replay(json.loads(path.read_text()))
    assert res["valid"]
    assert "Game stopped (Ctrl-C)" in out.getvalue()


def test_record_is_written_atomically(tmp_path):
    path = tmp_path / "r.json"
    write_record({"a": 1}, str(path))
    with pytest.raises(TypeError):
        write_record({"bad": object()}, str(path))
    assert json.loads(path.read_text()) == {"a": 1}  # the old file is intact
    assert os.listdir(tmp_path) == ["r.json"]  # no temporary file left behind


# ------------------------------------------------------------------ set-up
def test_resolve_seats():
    assert resolve_seats(None, ["random"], 0) == (2, {1: "random"})
    assert resolve_seats(None, ["random", "optimal"], 0) == (3, {1: "random", 2: "optimal"})
    assert resolve_seats(4, ["random"], 2) == (4, {0: "random", 1: "random", 3: "random"})
    assert resolve_seats(1, None, 0) == (1, {})
    for bad, words in [((2, ["random", "random"], 0), "--opponents gives 2 specs for 1 opponents"),
                       ((3, None, 3), r"--seat must be 0\.\.2, got 3"),
                       ((7, None, 0), r"--players must be 1\.\.6, got 7"),
                       ((1, ["random"], 0), r"a solo game \(--players 1\) has no opponents")]:
        with pytest.raises(PlayError, match=words):
            resolve_seats(*bad)


def test_default_opponent_is_solo_optimal_if_registered_else_random(monkeypatch):
    expected = "solo-optimal" if "solo-optimal" in registered() else "random"
    assert default_opponent() == expected
    import lama_dice.agents.registry as reg

    monkeypatch.setattr(reg, "registered", lambda: {"random": None})
    assert default_opponent() == "random"
    assert resolve_seats(2, None, 0) == (2, {1: "random"})


def test_cli_play_saves_a_record_that_replays(tmp_path, monkeypatch, capsys):
    path = tmp_path / "cli.json"
    monkeypatch.setattr("sys.stdin", keys("r", "a", "1"))
    rc = main(["play", "--seed", "5", "--opponents", "random", "--save", str(path)])
    out = capsys.readouterr().out
    assert rc == 0
    assert "Game over" in out and f"Record saved to {path}" in out
    rec = json.loads(path.read_text())
    assert replay(rec)["game_over"] is True
    # the record says who played, with what seed, by which version (lama-dice-record/2)
    from lama_env import __version__

    assert rec["format"] == "lama-dice-record/2"
    assert rec["about"] == {"names": ["You", "P1 random"], "agents": [None, "random"], "seed": 5,
                            "version": __version__}
    assert main(["replay", str(path)]) == 0
    check_seed_plays_game_0(rec, 5)  # game 0 of the seed's compiled streams: evaluate --backend fast's, the envs'


def test_cli_play_takes_the_rules_of_every_game_command(tmp_path, monkeypatch, capsys):
    """``--rule`` (as in evaluate and solve): the game is played, and recorded, under those rules."""
    path = tmp_path / "rules.json"
    monkeypatch.setattr("sys.stdin", keys("r", "a", "1"))
    rc = main(["play", "--seed", "5", "--opponents", "random", "--rule", "end_threshold=12",
               "--rule", "triple_llama=also_match", "--save", str(path)])
    capsys.readouterr()
    record = json.loads(path.read_text())
    assert rc == 0 and record["rules"]["end_threshold"] == 12 and record["rules"]["triple_llama"] == "also_match"
    assert replay_game(record).rules.end_threshold == 12
    check_seed_plays_game_0(record, 5)


@pytest.mark.parametrize("argv, message", [
    (["--players", "2", "--opponents", "random", "random"], "--opponents gives 2 specs for 1 opponents"),
    (["--seat", "4"], "--seat must be 0..1"),
    (["--opponents", "no-such-agent"], "unknown agent spec 'no-such-agent'"),
    (["--rule", "end_threshold=0"], "end_threshold must be at least 1"),
    (["--rule", "no_such_rule=1"], "no_such_rule"),
])
def test_cli_play_bad_arguments_give_one_line(monkeypatch, capsys, argv, message):
    monkeypatch.setattr("sys.stdin", io.StringIO(""))
    assert main(["play", *argv]) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1


def test_network_for_another_player_count_is_refused_before_the_first_move(monkeypatch, capsys):
    """`play --opponents ppo:4p` in a 2-player game: one line, exit 2, no table drawn."""
    monkeypatch.setattr("sys.stdin", io.StringIO("r\n" * 50))
    assert main(["play", "--players", "2", "--opponents", "ppo:4p"]) == 2
    captured = capsys.readouterr()
    assert "was trained for 4 players, the game has 2" in captured.err and captured.err.count("\n") == 1
    assert captured.out == ""  # refused before anything of the game was shown


def test_missing_agent_for_a_seat_is_refused():
    con, _ = console()
    with pytest.raises(PlayError):
        TerminalGame(LamaGame(3, seed=0), make_opponents({1: "random"}), human=0,
                     stdin=io.StringIO(), console=con)



def test_bad_save_path_is_refused_before_the_game(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr("sys.stdin", io.StringIO(""))
    assert main(["play", "--opponents", "random", "--save", str(tmp_path / "no" / "x.json")]) == 2
    assert "cannot save the record to" in capsys.readouterr().err
    assert main(["play", "--opponents", "random", "--save", str(tmp_path)]) == 2
    assert "it is a folder" in capsys.readouterr().err


def test_failed_save_at_the_end_is_reported(tmp_path):
    folder = tmp_path / "gone"
    folder.mkdir()
    tg, out = new_game(2, ["random"], seed=1, stdin=io.StringIO(""), save=str(folder / "x.json"))
    folder.rmdir()  # the folder disappears during the game
    result = tg.run()
    assert result.saved is None and result.save_error and result.exit_code == 1
    assert "Could not save the record" in out.getvalue()


def test_unwritable_save_folder_is_refused_before_the_game(tmp_path, capsys, monkeypatch):
    stdin = io.StringIO("r\n" * 100)
    monkeypatch.setattr("sys.stdin", stdin)
    real_access = os.access
    monkeypatch.setattr(os, "access", lambda p, mode: False if str(p) == str(tmp_path) else real_access(p, mode))
    assert main(["play", "--opponents", "random", "--save", str(tmp_path / "game.json")]) == 2
    captured = capsys.readouterr()
    assert "--save" in captured.err and "is not writable" in captured.err
    assert len(captured.err.strip().splitlines()) == 1
    assert stdin.tell() == 0 and captured.out == ""  # not a key read, nothing shown: the game never started


def test_the_record_is_on_disk_at_every_prompt_and_the_final_write_ignores_ctrl_c(tmp_path, monkeypatch):
    """A doubled SIGINT (timeout --foreground) cannot lose the record.

    It is written before each question, and the last write runs with SIGINT ignored.
    """
    import signal

    import lama_dice.cli.play as play

    path = tmp_path / "g.json"

    seen: list[bool] = []

    class Watching(io.StringIO):
        def readline(self, *a):
            seen.append(path.is_file() and replay(json.loads(path.read_text()))["valid"])
            return super().readline(*a)

    handlers = []
    real = play.write_record
    monkeypatch.setattr(play, "write_record", lambda r, p: (handlers.append(signal.getsignal(signal.SIGINT)),
                                                            real(r, p)))
    stdin = Watching("r\n1\n" * 5)
    tg, _ = new_game(2, ["random"], seed=6, stdin=stdin, save=str(path))
    # Python's own Ctrl-C handler, whatever the runner inherited (a job started with & ignores SIGINT)
    inherited = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        result = tg.run()
        now = signal.getsignal(signal.SIGINT)
    finally:
        signal.signal(signal.SIGINT, inherited)
    assert seen and all(seen)  # on disk, a valid record, whenever the program waited
    assert handlers[-1] is signal.SIG_IGN and handlers[0] is not signal.SIG_IGN  # the final write only
    assert now is signal.default_int_handler  # restored
    assert result.saved == str(path) and replay(json.loads(path.read_text()))["valid"]


def test_records_get_the_mode_of_the_users_other_files(tmp_path):
    old = os.umask(0o022)
    try:
        write_record({"a": 1}, str(tmp_path / "r.json"))
    finally:
        os.umask(old)
    assert (tmp_path / "r.json").stat().st_mode & 0o777 == 0o644
