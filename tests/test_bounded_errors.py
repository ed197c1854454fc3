"""Error messages that quote user input stay short: one line of bounded length, whatever the input's size."""

from __future__ import annotations

import json

from lama_dice.cli.main import main
from lama_env.engine import LamaGame
from lama_env.errors import MESSAGE_LIMIT, bounded, clip
from lama_env.record import replay


def _record_with_hand(hand) -> dict:
    g = LamaGame(2, seed=0)
    for _ in range(3):
        g.step(g.legal_actions()[0])
    rec = g.to_record()
    rec["rounds"][0]["hands"][0] = hand
    return rec


def test_clip_keeps_short_values_and_cuts_long_ones():
    assert clip("ab") == "'ab'" and clip(3) == "3" and clip(["1", "2"]) == "['1', '2']"
    big = clip(["1"] * 1_000_000)
    assert len(big) < 120 and big.endswith("(1000000 items)")
    assert len(clip("X" * 1_000_000)) < 120 and clip("X" * 1_000_000).endswith("(1000000 chars)")
    assert len(clip([["1"] * 1_000_000])) < 120  # nested: never turned into text in full
    assert "\n" not in clip("a\nb" * 100)
    assert bounded("x\ny") == "x y" and len(bounded("y" * 10**6)) < MESSAGE_LIMIT + 60


def test_a_million_card_hand_gets_a_short_one_line_error(tmp_path, capsys):
    for hand in (["1"] * 1_000_000, ["X" * 1_000_000], [["1"] * 100_000]):
        rec = _record_with_hand(hand)
        result = replay(rec)
        assert result["valid"] is False and len(result["error"]) < 300, result["error"][:400]
        path = tmp_path / "big.json"
        path.write_text(json.dumps(rec), encoding="utf-8")
        assert main(["replay", str(path)]) == 1
        out = capsys.readouterr().out
        assert len(out) < 400 and len(out.strip().splitlines()) == 1


def test_a_huge_agent_spec_gets_a_short_one_line_error(capsys):
    assert main(["evaluate", "--agents", "x" * 1_000_000, "random", "--games", "2", "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert len(err) < MESSAGE_LIMIT + 100 and len(err.strip().splitlines()) == 1
    assert main(["evaluate", "--agents", "threshold:" + "9" * 1_000_000, "random", "--games", "2",
                 "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert len(err) < 400 and len(err.strip().splitlines()) == 1
