"""Records that say who played: ``lama-dice-record/2`` and its ``about`` part (docs/RULES.md, "Who played")."""

from __future__ import annotations

import json

import pytest

from lama_dice.cli.main import main
from lama_env import __version__
from lama_env.engine import LamaGame
from lama_env.record import RECORD_FORMAT_2, RecordError, record_names, replay, with_about


def played(n=2, seed=3):
    g = LamaGame(n, seed=seed)
    while not g.game_over and g.rounds_finished == 0:  # the first round (the next one is dealt as it ends)
        g.step(sorted(g.legal_actions())[-1] if g.phase.name != "TURN" else 0)
    return g


def test_with_about_writes_a_v2_record_that_replays_like_the_v1_one():
    g = played()
    v1 = g.to_record()
    v2 = with_about(v1, names=["You", "P1 threshold:0.2"], agents=[None, "threshold:0.2"], seed=3,
                    version=__version__)
    assert v1["format"] == "lama-dice-record/1" and "about" not in v1  # the engine's record is unchanged
    assert v2["format"] == RECORD_FORMAT_2
    assert v2["about"] == {"names": ["You", "P1 threshold:0.2"], "agents": [None, "threshold:0.2"], "seed": 3,
                           "version": __version__}
    assert replay(v2) == replay(v1) == g.result()
    assert record_names(v2) == ["You", "P1 threshold:0.2"]
    assert record_names(v1) is None
    assert with_about(v1, version="9.9")["about"] == {"seed": None, "version": "9.9"}  # names, agents: optional


def test_a_v1_record_may_not_carry_about():
    rec = dict(played().to_record(), about={"seed": 1})
    res = replay(rec)
    assert not res["valid"] and res["round"] is None
    assert res["error"] == "unknown record field 'about' ('lama-dice-record/2' records may have 'about')"


@pytest.mark.parametrize("about, error", [
    ([], "about must be an object, got list"),
    ({"who": 1}, "unknown about field 'who' (known: names, agents, seed, version)"),
    ({"names": ["You"]}, "about.names must list 2 items (a name per player), got ['You']"),
    ({"names": ["You", 3]}, "about.names[1] must be a name: a non-empty string of at most 64 characters, got 3"),
    ({"names": ["You", ""]}, "about.names[1] must be a name: a non-empty string of at most 64 characters, got ''"),
    ({"names": ["You", None]}, "about.names[1] must be a name"),
    ({"names": ["You", "x" * 65]}, "about.names[1] must be a name"),
    ({"agents": [None, None, None]}, "about.agents must list 2 items (an agent spec or null (a person) per player)"),
    ({"agents": [None, 7]}, "about.agents[1] must be an agent spec or null (a person)"),
    ({"seed": -1}, "about.seed must be an integer 0..2**63 - 1, got -1"),
    ({"seed": True}, "about.seed must be an integer 0..2**63 - 1, got True"),
    ({"seed": 1.5}, "about.seed must be an integer 0..2**63 - 1"),
    ({"seed": "5"}, "about.seed must be an integer"),
    ({"version": 1}, "about.version must be a non-empty string of at most 64 characters, got 1"),
])
def test_replay_checks_the_about_part(about, error, tmp_path, capsys):
    rec = dict(played().to_record(), format=RECORD_FORMAT_2, about=about)
    res = replay(rec)
    assert not res["valid"] and res["round"] is None and res["turn"] is None
    assert res["error"].startswith(error), res["error"]
    path = tmp_path / "r.json"
    path.write_text(json.dumps(rec))
    assert main(["replay", str(path)]) == 1
    assert json.loads(capsys.readouterr().out) == res


def test_with_about_refuses_a_part_that_does_not_fit():
    with pytest.raises(RecordError, match=r"about.names must list 2 items"):
        with_about(played().to_record(), names=["You"], version=__version__)
    with pytest.raises(RecordError, match=r"about.agents\[0\] must be"):
        with_about(played().to_record(), agents=["", None], version=__version__)


def test_with_about_writes_a_seed_no_reader_accepts_as_null():
    # A seed is at most 2**63 - 1 wherever it enters (lama_env.reader.MAX_SEED): a larger one is written as null.
    rec = with_about(played().to_record(), seed=2**63, version=__version__)
    assert rec["about"]["seed"] is None and replay(rec)["valid"]
    assert with_about(played().to_record(), seed=2**63 - 1, version=__version__)["about"]["seed"] == 2**63 - 1
    bad = replay(dict(rec, about=dict(rec["about"], seed=2**63)))
    assert bad["error"] == "about.seed must be an integer 0..2**63 - 1, got 9223372036854775808"


def test_a_v2_record_without_about_and_an_unknown_format():
    rec = dict(played().to_record(), format=RECORD_FORMAT_2)
    assert replay(rec)["valid"]
    bad = replay(dict(rec, format="lama-dice-record/3"))
    assert bad["error"] == ("not a game record: format must be 'lama-dice-record/1' or 'lama-dice-record/2', "
                            "got 'lama-dice-record/3'")


def test_the_gif_frames_and_show_name_the_players_of_a_v2_record(tmp_path, capsys):
    from lama_dice.animation import record_frames

    g = played()
    v2 = with_about(g.to_record(), names=["You", "P1 lookahead"], agents=[None, "lookahead"], seed=3,
                    version=__version__)
    captions = [f.caption for f in record_frames(v2)]
    assert captions[0] == "Round 1 is dealt: You starts"
    assert any(c.startswith("P1 lookahead ") for c in captions)
    assert not any("P0" in c for c in captions)
    assert next(iter(record_frames(v2, ["A", "B"]))).caption == "Round 1 is dealt: A starts"  # names given win
    path = tmp_path / "g.json"
    path.write_text(json.dumps(v2))
    assert main(["show", str(path)]) == 0
    out = capsys.readouterr().out
    assert "Played by You, P1 lookahead (agents: a person, lookahead); seed 3; written by lama-dice" in out
    assert main(["show", str(path), "--gif", str(tmp_path / "g.gif")]) == 0
    assert (tmp_path / "g.gif").stat().st_size > 1000
