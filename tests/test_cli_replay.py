"""``lama-dice replay``: in-process through ``lama_dice.cli.main.main`` and once as a real command."""

import io
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import play_random

from lama_dice.cli.main import main

RULES_MD = Path(__file__).resolve().parents[1] / "docs" / "RULES.md"


def _rules_md_json(section: str) -> dict:
    """The first ```json block after the heading ``section`` of docs/RULES.md."""
    text = RULES_MD.read_text(encoding="utf-8")
    start = text.index(section)
    block = re.search(r"```json\n(.*?)```", text[start:], re.S)
    return json.loads(block.group(1))


EXAMPLE_RECORD = _rules_md_json("### Example record")
EXAMPLE_RESULT = _rules_md_json("### Example replay result")


def run_cli(capsys, *argv):
    code = main(["replay", *map(str, argv)])
    out, err = capsys.readouterr()
    return code, out, err


def write(tmp_path: Path, obj, name="game.json") -> Path:
    p = tmp_path / name
    p.write_text(obj if isinstance(obj, str) else json.dumps(obj), encoding="utf-8")
    return p


def test_rules_md_example_in_process(tmp_path, capsys):
    code, out, err = run_cli(capsys, write(tmp_path, EXAMPLE_RECORD))
    assert code == 0 and err == ""
    assert out.endswith("\n") and out.count("\n") == 1
    assert json.loads(out) == EXAMPLE_RESULT


def test_rules_md_example_as_a_command(tmp_path):
    cmd = [sys.executable, "-m", "lama_dice"]
    proc = subprocess.run([*cmd, "replay", str(write(tmp_path, EXAMPLE_RECORD))],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout) == EXAMPLE_RESULT


def test_indent_option(tmp_path, capsys):
    code, out, _ = run_cli(capsys, write(tmp_path, EXAMPLE_RECORD), "--indent", 2)
    assert code == 0 and out.count("\n") > 5 and json.loads(out) == EXAMPLE_RESULT


def test_standard_input(monkeypatch, capsys):
    monkeypatch.setattr(sys, "stdin", io.StringIO(json.dumps(EXAMPLE_RECORD)))
    code, out, _ = run_cli(capsys, "-")
    assert code == 0 and json.loads(out) == EXAMPLE_RESULT


def test_a_random_game(tmp_path, capsys):
    g = play_random(4, seed=8)
    code, out, _ = run_cli(capsys, write(tmp_path, g.to_record()))
    assert code == 0 and json.loads(out) == g.result()


def test_illegal_record_exits_1(tmp_path, capsys):
    rec = json.loads(json.dumps(EXAMPLE_RECORD))
    rec["rounds"][0]["turns"][1]["take"] = "2"
    code, out, err = run_cli(capsys, write(tmp_path, rec))
    assert code == 1 and err == ""
    res = json.loads(out)
    assert res["valid"] is False and (res["round"], res["turn"]) == (0, 1) and "'2'" in res["error"]


@pytest.mark.parametrize("content, words", [
    ("{not json", "invalid JSON"),
    ("", "invalid JSON"),
    ("[" * 100_000, "not a game record"),
    (json.dumps({"format": "chess-pgn", "players": 2, "rounds": []}), "format"),
    (json.dumps({"format": "lama-dice-record/1", "players": 2}), "'rounds'"),
    (json.dumps([1, 2, 3]), "not a game record"),
], ids=["bad-syntax", "empty", "deep-nesting", "wrong-format", "missing-rounds", "a-list"])
def test_not_a_record_exits_1_without_traceback(tmp_path, capsys, content, words):
    code, out, err = run_cli(capsys, write(tmp_path, content))
    assert code == 1
    assert "Traceback" not in err and "Traceback" not in out
    res = json.loads(out)
    assert res["valid"] is False and res["round"] is None and res["turn"] is None
    assert words in res["error"] and "\n" not in res["error"]


def test_binary_and_missing_files_exit_1(tmp_path, capsys):
    p = tmp_path / "game.bin"
    p.write_bytes(b"\xff\xfe\x00garbage")
    code, out, err = run_cli(capsys, p)
    assert code == 1 and json.loads(out)["round"] is None and "Traceback" not in err
    code, out, err = run_cli(capsys, tmp_path / "missing.json")
    assert code == 1 and "cannot read" in json.loads(out)["error"] and "Traceback" not in err


def test_not_json_as_a_command_has_no_traceback(tmp_path):
    cmd = [sys.executable, "-m", "lama_dice"]
    proc = subprocess.run([*cmd, "replay", str(write(tmp_path, "this is not json"))],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 1
    assert "Traceback" not in proc.stderr
    assert json.loads(proc.stdout)["valid"] is False
