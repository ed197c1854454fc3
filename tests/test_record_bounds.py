"""Records are read within bounds (issues 28, 52): the bounded reader of lama_env.reader.

A size limit, integers of at most 2**63 - 1, no NaN or Infinity, no duplicate key, no deep nesting, regular
files only.

Every case gives the one-line replay fault of docs/RULES.md, in ``lama_env.record.parse_record_json``, in
``lama-dice replay`` and ``lama-dice show`` alike, never a traceback.
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys

import pytest

from lama_dice.cli.main import main
from lama_dice.cli.recordfile import load_record_file, parse_record_bytes
from lama_env.engine import LamaGame
from lama_env.errors import clip
from lama_env.reader import MAX_INT
from lama_env.record import MAX_RECORD_BYTES, RecordError, parse_record_json, replay

HUGE = '{"format": "lama-dice-record/1", "players": ' + "9" * 100_000 + ', "rounds": []}'


def _record() -> dict:
    return LamaGame(2, seed=4).to_record()


@pytest.mark.parametrize(("text", "words"), [
    (HUGE, "an integer of 100,000 digits"),
    ('{"players": -' + "1" * 20 + "}", "an integer of 20 digits"),
    ('{"players": ' + str(MAX_INT + 1) + "}", "the integer 9223372036854775808 is too large"),
    ('{"players": 2, "players": 3}', "the key 'players' is given twice in one object"),
    ('{"players": NaN}', "NaN is not a JSON number"),
    ('{"players": Infinity}', "Infinity is not a JSON number"),
    ('{"players": -Infinity}', "-Infinity is not a JSON number"),
    ('{"players": 1e999}', "'1e999' is out of range"),
    ("[" * 100_000 + "]" * 100_000, "nested more than 64 levels deep"),
    ("[" * 65 + "]" * 65, "nested more than 64 levels deep"),
    ('{"players": 2', "invalid JSON at line 1 column 14"),
    (" " * (MAX_RECORD_BYTES + 1), "larger than 5 MiB"),
])
def test_parse_record_json_refuses_with_one_line(text, words):
    with pytest.raises(RecordError, match=None) as info:
        parse_record_json(text)
    message = str(info.value)
    assert words in message and "\n" not in message and len(message) < 300, message
    assert info.value.as_result()["valid"] is False


def test_parse_record_json_reads_a_record_and_its_largest_integers():
    rec = _record()
    assert parse_record_json(json.dumps(rec)) == rec
    assert parse_record_json('{"start_points": [' + str(-MAX_INT) + ", 0.5]}") == {"start_points": [-MAX_INT, 0.5]}
    assert isinstance(parse_record_json("[" * 64 + "]" * 64), list)  # 64 levels: the most a record may nest


def test_replay_of_a_huge_integer_object_gives_a_result_not_a_traceback():
    out = replay({**_record(), "players": 10 ** 100_000})
    assert out["valid"] is False and "players must be an integer" in out["error"]
    assert "100001 digits" in out["error"]
    assert clip(10 ** 5000) == "<an integer of about 5001 digits>" and clip(-12) == "-12"


def _replay_cli(capsys, path):
    code = main(["replay", str(path)])
    out, err = capsys.readouterr()
    return code, out, err


def test_replay_and_show_of_a_100000_digit_integer_give_one_line(tmp_path, capsys):
    path = tmp_path / "huge.json"
    path.write_text(HUGE)
    code, out, err = _replay_cli(capsys, path)
    assert code == 1 and err == ""
    result = json.loads(out)
    assert result["valid"] is False and "an integer of 100,000 digits" in result["error"]
    assert main(["show", str(path)]) == 1
    out, err = capsys.readouterr()
    assert err.count("\n") == 1 and "an integer of 100,000 digits" in err and "Traceback" not in err


def test_replay_refuses_a_device_before_reading_it(capsys):
    code, out, err = _replay_cli(capsys, "/dev/zero")
    assert code == 1 and err == ""
    assert json.loads(out)["error"] == ("cannot read /dev/zero: it is a device, not a regular file (pipe its content "
                                        "to standard input instead)")


def test_replay_and_show_of_a_fifo_refuse_it_without_waiting_for_a_writer(tmp_path, capsys):
    fifo = tmp_path / "game.json"
    os.mkfifo(fifo)  # no writer ever opens it: reading it would block for ever
    code, out, _ = _replay_cli(capsys, fifo)
    assert code == 1 and "it is a FIFO, not a regular file" in json.loads(out)["error"]
    assert main(["show", str(fifo)]) == 1
    assert "it is a FIFO, not a regular file" in capsys.readouterr().err


def test_a_record_at_the_limit_is_read_and_one_byte_more_is_not(tmp_path):
    text = json.dumps(_record())
    for extra, valid in ((MAX_RECORD_BYTES - len(text), True), (MAX_RECORD_BYTES - len(text) + 1, False)):
        path = tmp_path / "padded.json"
        path.write_text(text + " " * extra)
        _, fault = load_record_file(str(path))
        assert (fault is None) is valid, fault
    assert "larger than 5 MiB" in parse_record_bytes(b" " * (MAX_RECORD_BYTES + 1), "upload")[1]["error"]


def test_stdin_is_read_within_the_limit_too(monkeypatch, capsys):
    monkeypatch.setattr(sys, "stdin", io.StringIO(" " * (MAX_RECORD_BYTES + 10)))
    code, out, _ = _replay_cli(capsys, "-")
    assert code == 1 and "- is larger than 5 MiB" in json.loads(out)["error"]
    monkeypatch.setattr(sys, "stdin", io.StringIO(json.dumps(_record())))
    assert _replay_cli(capsys, "-")[0] == 0


def test_an_unreadable_file_names_no_more_than_given(tmp_path):
    rec, fault = load_record_file(str(tmp_path), name="folder.json")  # a directory: cannot be read
    assert rec is None and fault["error"].startswith("cannot read folder.json: ")
    assert str(tmp_path) not in fault["error"]


def test_replay_of_dev_zero_as_a_real_command():
    proc = subprocess.run([sys.executable, "-m", "lama_dice", "replay", "/dev/zero"], capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 1 and proc.stderr == ""
    assert "it is a device, not a regular file" in json.loads(proc.stdout)["error"]
