"""``lama-dice bench --only pgx``: the vector game beside Pgx, each contender in its own worker process.

No timing assertions (the figures depend on the machine): the skip note without jax/pgx, the
worker protocol, and, where the bench-pgx extra is installed, a small run's structure.
"""

from __future__ import annotations

import importlib.util
import io
import json

import pytest

from lama_dice.bench import pgx_speed
from lama_dice.cli.main import main
from lama_env.extras import install_command


def test_without_pgx_the_section_is_one_line_note(monkeypatch: pytest.MonkeyPatch,
                                                  capsys: pytest.CaptureFixture) -> None:
    find = importlib.util.find_spec
    # neither jax nor pgx, whatever this venv has (the bench-pgx extra is not part of make test)
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name in ("jax", "pgx") else find(name, *a))
    assert main(["bench", "--only", "pgx", "--quiet", "--json", "-"]) == 0
    captured = capsys.readouterr()
    report = json.loads(captured.out)
    note = report["sections"]["pgx"]["skipped"]
    assert note == f"pgx: skipped, jax and pgx not installed ({install_command('bench-pgx')})"
    assert note.endswith("[bench-pgx]')")  # the command that installs the extra where this package is
    # the tables go to stderr with --json - (the note first, wrapped at the console's width)
    assert "".join(captured.err.split()).startswith("".join(note.split())) and "Traceback" not in captured.err
    target = report["targets"][-1]
    assert target["goal"] == pgx_speed.TARGET and target["met"] is None and target["note"] == note
    # the targets table prints the note as it is (its "[bench-pgx]" is not taken for rich markup)
    from rich.console import Console

    from lama_dice.cli.commands.bench import render

    console = Console(record=True, width=400, color_system=None)
    render(console, report)
    assert console.export_text().count(note) == 2  # the note's line, and the targets table's cell


def test_the_worker_protocol_in_process() -> None:
    requests = [{"cmd": "setup", "batch": 8, "seed": 0}, {"cmd": "run", "seconds": 0.01}, {"cmd": "quit"},
                {"cmd": "run", "seconds": 0.01}]
    out = io.StringIO()
    assert pgx_speed.worker_main("vector_numpy", io.StringIO("".join(json.dumps(r) + "\n" for r in requests)),
                                 out) == 0
    setup, ran = (json.loads(x) for x in out.getvalue().splitlines())  # nothing after quit
    assert setup["compile_s"] >= 0 and setup["chunk"] >= 1 and {"numpy", "numba"} <= set(setup["versions"])
    assert ran["steps"] % setup["chunk"] == 0 and ran["work"] == 8 * ran["steps"] > 0
    assert ran["wall_s"] >= 0.01 and ran["cpu_s"] > 0


def test_a_worker_process_reports_its_errors_in_one_line() -> None:
    w = pgx_speed.Worker("vector_numpy")
    try:
        assert w.request(cmd="setup", batch=4, seed=1)["chunk"] >= 1
        assert w.request(cmd="run", seconds=0.01)["work"] > 0
        with pytest.raises(pgx_speed.WorkerError, match=r"^vector_numpy: VectorGameError: num_envs must be"):
            w.request(cmd="setup", batch=0, seed=1)
    finally:
        w.close()
    assert w.proc.returncode == 0
    bad = pgx_speed.Worker("nonsense")
    try:
        with pytest.raises(pgx_speed.WorkerError, match="unknown contender 'nonsense'"):
            bad.request(cmd="setup", batch=4, seed=0)
    finally:
        bad.close()


@pytest.mark.skipif(bool(pgx_speed.missing_modules()), reason="needs the bench-pgx extra (jax, pgx)")
def test_a_small_run_against_pgx_leduc_holdem() -> None:
    sec = pgx_speed.run(batch=64, sweep=(16, 64), games=("leduc_holdem",), seconds=0.05, repeats=1, slices=1,
                        sweep_repeats=1)
    assert {"jax", "pgx", "numpy", "numba", "backend"} <= set(sec["versions"])
    res = sec["results"]
    assert {"vector_numpy", "pgx:leduc_holdem"} <= set(res)
    assert ("vector" in res) != ("vector" in sec["notes"])  # measured, or said why not
    for r in res.values():
        assert r["per_s"] > 0 and r["compile_s"] > 0 and r["runs"] == 1
    assert sec["ratios"]["vector_numpy_vs_leduc_holdem"]["ratio"] > 0
    if "vector" in res:
        assert sec["ratios"]["vector_vs_leduc_holdem"]["target"] == pgx_speed.TARGET
    assert set(sec["sweep"]) == {"16", "64"}
    assert sec["sweep"]["64"]["results"]["pgx:leduc_holdem"] == {k: v for k, v in res["pgx:leduc_holdem"].items()
                                                                 if k not in ("import_s", "compile_s", "chunk")}
    title, rows, _notes = pgx_speed.table_rows(sec)
    assert "batch 64" in title and any(r[0].startswith("ratio vector_numpy / pgx:leduc_holdem") for r in rows)
