"""``lama-dice bench``: it runs (``--quick``, one repeat) and writes well-formed JSON.

No timing assertions: the figures depend on the machine.  What is checked is
the report's structure, and the counts that do not depend on timing (the
forward passes of batched inference).
"""

from __future__ import annotations

import json
import math
import sys

import pytest

from lama_dice.bench import aec_speed, suite
from lama_dice.cli.main import main


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> dict:
    out = tmp_path_factory.mktemp("bench") / "bench.json"
    rc = main(["bench", "--quick", "--repeats", "1", "--quiet", "--json", str(out)])
    data = json.loads(out.read_text(encoding="utf-8"))
    assert rc == 0, data["errors"]
    return data


def _rate(entry: dict) -> None:
    assert entry["per_s"] > 0 and entry["per_cpu_s"] > 0
    assert entry["runs"] == 1 and len(entry["all_per_s"]) == 1


def _ratio(entry: dict) -> None:
    assert {"of", "over", "ratio", "ratio_cpu", "all"} <= set(entry)
    assert entry["ratio"] > 0 and math.isfinite(entry["ratio"])


def test_report_header(report: dict) -> None:
    assert report["format"] == "lama-dice-bench/1"
    assert report["errors"] == {}
    meta = report["meta"]
    assert meta["quick"] is True and meta["repeats"] == 1 and meta["seed"] == 0
    assert {"date_utc", "python", "cpu_count", "load_average_before", "load_average_after", "versions",
            "seconds"} <= set(meta)
    assert set(report["sections"]) == set(suite.SECTIONS)


def test_aec_section(report: dict) -> None:
    a = report["sections"]["aec"]
    assert {"lama_env", "lama_raw", "engine"} <= set(a["results"])
    for r in a["results"].values():
        _rate(r)
    _ratio(a["ratios"]["engine_vs_env"])
    if "leduc" in a["results"]:
        _ratio(a["ratios"]["env_vs_leduc"])
        assert a["ratios"]["env_vs_leduc"]["target"] == aec_speed.TARGET
    else:
        assert any("rlcard" in n for n in a["notes"])


def test_evaluate_sections(report: dict) -> None:
    s = report["sections"]
    e = s["evaluate"]
    assert e["evaluate_backend"] == "fast"
    assert set(e["results"]) == {"naive", "evaluate", "kernel", "python_backend"}
    for r in e["results"].values():
        _rate(r)
    _ratio(e["ratios"]["evaluate_vs_naive"])
    assert e["ratios"]["evaluate_vs_naive"]["target"] == 50.0
    assert {"import_s", "first_call_s", "second_call_s"} <= set(s["kernel_load"]["cached"])
    assert s["one_shot"]["wall_s"] > 0 and s["one_shot"]["command"].startswith("lama-dice evaluate")
    fu = s["first_use"]  # --quick: warm only (the cold runs are tests/test_first_use.py's)
    assert fu["cold_measured"] is False and set(fu["results"]) == set(suite.QUICK.first_use_cases)
    warm = fu["results"]["evaluate"]["warm"]
    assert warm["wall_s"] > 0 and warm["cpu_s"] > 0 and warm["note"] is False  # warm: no compile, no note
    assert s["memory"]["auto"]["maxrss_after_kib"] >= s["memory"]["auto"]["maxrss_before_kib"] > 0
    assert s["memory"]["auto"]["backend"] == "fast"
    assert s["solver"]["seconds"] > 0 and s["solver"]["states"] > 0


def test_scaling_section(report: dict) -> None:
    sc = report["sections"]["scaling"]
    assert set(sc["workers"]) == {"workers_1", "workers_2"}
    for group in ("python_chunk_size", "kernel_games_per_call", "workers"):
        assert sc[group]
        for r in sc[group].values():
            _rate(r)


def test_learned_policy_inference_is_batched(report: dict) -> None:
    pi = report["sections"]["ppo_inference"]
    if "skipped" in pi:
        pytest.skip(pi["skipped"])
    one, big = pi["results"]["chunk_1"], pi["results"]["chunk_64"]
    # chunk_size 1: one forward pass per decision; a chunk of games: one per policy per lockstep step
    assert one["forward_passes"] == one["decisions"] and one["mean_batch"] == 1.0
    assert big["forward_passes"] < big["decisions"] and big["mean_batch"] > 1.0


def test_training_section(report: dict) -> None:
    tr = report["sections"]["training"]
    if "skipped" in tr:
        pytest.skip(tr["skipped"])
    assert set(tr["results"]) == {"lama", "connect_four"}
    for r in tr["results"].values():
        _rate(r)
        assert 0 < r["env_share"] < 1 and 0 < r["train_share"] < 1 and r["rollout_per_s"] > 0
    _ratio(tr["ratios"]["lama_vs_connect_four"])


def test_targets(report: dict) -> None:
    rows = report["targets"]
    assert [r["goal"] for r in rows] == [aec_speed.TARGET, 50.0, 10.0, 10.0, 1.0]
    for r in rows:
        assert {"target", "goal", "ratio", "met"} <= set(r)
        assert r["met"] is None or r["met"] == (r["ratio"] >= r["goal"])


def test_one_renderer_for_the_terminal_and_the_docs(report: dict) -> None:
    """``lama-dice bench`` and docs/performance.md show the same tables (lama_dice.bench.report)."""
    from rich.console import Console

    from lama_dice.bench.report import Line, Table, blocks, markdown
    from lama_dice.cli.commands.bench import render

    bs = blocks(report)
    tables = [b for b in bs if isinstance(b, Table)]
    assert tables[-1].title.startswith("Targets") and len(tables[-1].rows) == len(report["targets"])
    assert any(isinstance(b, Line) and b.kind == "meta" for b in bs)
    for t in tables:
        assert t.rows and all(len(row) == len(t.columns) for row in t.rows)
    md = markdown(report)
    console = Console(record=True, width=400)
    render(console, report)
    shown = " ".join(console.export_text().split())  # rich wraps a title to its table's width

    def flat(text: str) -> str:
        return " ".join(text.split())

    for t in tables:
        assert f"**{t.title}**" in md
        assert flat(t.title) in shown
        for row in t.rows:
            assert flat(row[0]) in shown and all(flat(c) in md for c in row)
    for line in (b for b in bs if isinstance(b, Line)):
        assert flat(line.text) in shown and line.text[1:] in md


def test_json_to_stdout_and_one_section(capsys: pytest.CaptureFixture) -> None:
    assert main(["bench", "--quick", "--only", "solver", "--quiet", "--json", "-"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert list(data["sections"]) == ["solver"]
    assert data["targets"][0]["ratio"] is None and data["targets"][0]["met"] is None


@pytest.mark.parametrize("argv, words", [
    (["--repeats", "0"], "--repeats"),
    (["--only", "nonsense"], "unknown section"),
    (["--json", "/no/such/dir/out.json"], "does not exist"),
])
def test_bad_arguments_give_one_line(argv: list[str], words: str, capsys: pytest.CaptureFixture) -> None:
    assert main(["bench", *argv]) == 2
    err = capsys.readouterr().err.strip()
    assert words in err and len(err.splitlines()) == 1


def test_leduc_is_skipped_with_a_note_without_rlcard(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "rlcard", None)  # import rlcard -> ImportError
    envs, notes = aec_speed.make_envs()
    assert "leduc" not in envs and {"lama_env", "lama_raw"} <= set(envs)
    assert len(notes) == 1 and "rlcard" in notes[0] and "lama-dice[bench]" in notes[0]


# ----------------------------------------------------------------------------- the speed-ups keep behaviour
def test_games_are_a_function_of_the_seed() -> None:
    """The engine's block-wise random numbers: same seed, same game; another seed, another game."""
    import random

    from lama_env.engine import LamaGame

    def play(seed: int) -> dict:
        g = LamaGame(3, seed=seed)
        pick = random.Random(seed)
        while not g.game_over:
            g.step(pick.choice(g.legal_actions()))
        return g.to_record()

    assert play(5) == play(5)
    assert play(5)["rounds"][0]["hands"] != play(6)["rounds"][0]["hands"]


def test_encode_cache_follows_the_state() -> None:
    """``encode`` reuses its last result only for the same game, version and seat, and hands out new arrays."""
    import numpy as np

    from lama_env.engine import LamaGame
    from lama_env.observation import encode

    g = LamaGame(2, seed=3)
    v0 = g._version
    a = encode(g, 0)
    a[:] = 7.0  # the caller's array is its own
    b = encode(g, 0)
    assert not np.array_equal(a, b) and b is not a
    c = g.clone()
    g.step(0)  # roll
    assert g._version > v0 and c._version == v0
    assert not np.array_equal(encode(g, 0), b)
    np.testing.assert_array_equal(encode(c, 0), b)
    np.testing.assert_array_equal(encode(g, 1), encode(g.clone(), 1))
