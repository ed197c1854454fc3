"""Load: 50 games at once through the API of a real server on 127.0.0.1 (bounded; docs/performance.md reports it)."""

from __future__ import annotations

import pytest

pytest.importorskip("uvicorn", reason="the web extra: pip install -e '.[web]' (make test installs it)")

from lama_dice.cli.web.loadtest import run_load, spawn_server


def test_fifty_concurrent_games_no_errors_every_record_valid():
    with spawn_server() as (url, proc):
        res = run_load(url, games=50, players=2, opponents=["threshold:0.2"], seed=100, timeout=120)
        assert proc.poll() is None  # still serving
    assert res.errors == []
    assert res.finished == 50 and res.valid_records == 50
    assert res.requests > 50 * 5
    summary = res.summary()
    assert summary["requests_per_s"] > 0 and summary["p50_ms"] <= summary["p99_ms"]
    print("load:", summary)
