"""``lama-dice bench --baseline``: the current code against a baseline checkout, each run in a fresh process.

No timing assertions (the figures depend on the machine): what is checked is that each side
imports the library from where it should, the report's structure and ratios, and one-line errors.
"""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import pytest

from lama_dice.bench import baseline
from lama_dice.bench.report import BASELINE_COLUMNS, Table, blocks, markdown
from lama_dice.cli.main import main

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def report() -> dict:
    # this checkout as its own baseline: the library imported through the probe's checkout finder
    return baseline.compare(str(ROOT), ("engine", "solver"), repeats=2, quick=True)


def test_each_side_imports_from_its_checkout(report: dict) -> None:
    meta = report["meta"]
    assert report["format"] == baseline.FORMAT and meta["repeats"] == 2 and meta["quick"] is True
    assert meta["baseline"] == f"folder {ROOT}" and meta["baseline_imported_from"] == str(ROOT)
    assert meta["current_imported_from"] is not None
    for name in ("engine", "solver"):
        r = report["probes"][name]
        for side in ("current", "baseline"):
            assert "errors" not in r[side] and r[side]["runs"] == 2 and r[side]["per_s"] > 0
        assert r["baseline"]["imported_from"] == str(ROOT)
        assert len(r["all_ratios"]) == 2 and math.isfinite(r["ratio"]) and r["ratio"] > 0
        assert r["current"]["unit"] == {"engine": "step", "solver": "decision"}[name]


def test_the_report_renders_as_one_table(report: dict) -> None:
    bs = blocks(report)
    tables = [b for b in bs if isinstance(b, Table)]
    assert len(tables) == 1 and tables[0].columns == BASELINE_COLUMNS
    assert [row[0] for row in tables[0].rows] == [baseline.WHAT["engine"], baseline.WHAT["solver"]]
    assert "| measure | current per s |" in markdown(report)


def test_a_probe_reports_a_folder_that_is_not_a_checkout(tmp_path: Path) -> None:
    run = subprocess.run([sys.executable, str(baseline.PROBE_FILE), "engine", "--quick", "--root", str(tmp_path)],
                         capture_output=True, text=True, timeout=120)
    out = json.loads(run.stdout.strip().splitlines()[-1])
    assert "is not a lama-dice checkout" in out["error"]


@pytest.mark.parametrize("argv, words", [
    (["--baseline", "/no/such/folder-or-revision"], "not a folder, nor a revision"),
    (["--baseline", str(ROOT), "--only", "nonsense"], "unknown probe 'nonsense'"),
])
def test_bad_baselines_give_one_line(argv: list[str], words: str, capsys: pytest.CaptureFixture) -> None:
    assert main(["bench", "--quiet", *argv]) == 2
    err = capsys.readouterr().err.strip()
    assert words in err and len(err.splitlines()) == 1
