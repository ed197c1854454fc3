"""A schema-driven fuzz run of the web API, in-process through the ASGI transport, bounded in examples.

schemathesis generates requests from ``/openapi.json`` and checks every answer against the schema (no 5xx;
only documented status codes, content types and bodies; schema-valid data accepted, invalid data refused),
one operation at a time and in sequences that follow the schema's links (a game made, then played).

Valid data may still be refused where the schema cannot say why: a seat outside the table or an agent spec
that does not exist (400 on ``POST /api/games``), a record of the right shape that does not replay (422 on
``/api/replay``). Those operations accept those statuses for valid data too; every other check is as
schemathesis ships it.
"""

from __future__ import annotations

import json
import tempfile
import urllib.parse
from pathlib import Path

import pytest

pytest.importorskip("fastapi", reason="the web extra: pip install -e '.[web]' (make test installs it)")
pytest.importorskip("schemathesis", reason="the test extra: pip install -e '.[test]'")

import schemathesis
from fastapi.testclient import TestClient
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from schemathesis.config import SchemathesisConfig

from lama_dice.cli.web.app import create_app
from lama_env.engine import LamaGame

#: Requests per operation and phase (the stateful run: 3 times as many sequences): about 15 s of CPU in all.
MAX_EXAMPLES = 20
ACCEPTED = ["2xx", "404", "409"]  # schemathesis's own positive-data statuses for an API without auth


def _app(root: Path):
    records, results = root / "records", root / "results"
    records.mkdir()
    results.mkdir()
    game = LamaGame(2, seed=3)
    (records / "game.json").write_text(json.dumps(game.to_record()))
    (records / "bad.json").write_text('{"format": "lama-dice-record/1", "players": ' + "9" * 5000 + "}")
    return create_app(records=records, results=results)


CONFIG = SchemathesisConfig.from_dict({
    "generation": {"max-examples": MAX_EXAMPLES, "deterministic": True, "database": "none"},
    "checks": {"positive_data_acceptance": {"expected-statuses": ACCEPTED}},
    "operations": [
        {"include-name": "POST /api/games",
         "checks": {"positive_data_acceptance": {"expected-statuses": [*ACCEPTED, "400"]}}},
        {"include-name": "POST /api/replay",
         "checks": {"positive_data_acceptance": {"expected-statuses": [*ACCEPTED, "422"]}}},
        {"include-path-regex": "^/api/records/",
         "checks": {"positive_data_acceptance": {"expected-statuses": [*ACCEPTED, "400", "422"]}}},
    ],
})

_FOLDER = tempfile.TemporaryDirectory(prefix="lama-dice-fuzz-")  # removed when the test process ends
APP = _app(Path(_FOLDER.name))
schema = schemathesis.openapi.from_asgi("/openapi.json", APP, config=CONFIG)


@schema.parametrize()
@settings(deadline=None, suppress_health_check=list(HealthCheck))
def test_the_api_conforms_to_its_schema_under_fuzzing(case):
    case.call_and_validate()


_STATEFUL = schema.as_state_machine()
_STATEFUL.TestCase.settings = settings(max_examples=3 * MAX_EXAMPLES, stateful_step_count=10, deadline=None,
                                       suppress_health_check=list(HealthCheck), derandomize=True, database=None)
#: Sequences of requests that follow the schema's links: a game made, then its state, moves, record.
TestTheApiStatefully = _STATEFUL.TestCase


#: Parts of record names that reach the file system in odd ways (the schema's plain strings rarely hit them).
_PARTS = ["..", ".", "", "game.json", "bad.json", "\x00", "\\", "%00", "x" * 300, "é", "\t", "~", "/etc/passwd",
          "records", "CON", "a:b", "..json"]


@given(st.lists(st.sampled_from(_PARTS) | st.text(max_size=8), min_size=1, max_size=6).map("/".join)
       | st.text(min_size=1, max_size=5000))
@settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True, database=None)
def test_any_record_name_gets_the_record_or_a_one_line_4xx(name):
    with TestClient(APP, raise_server_exceptions=False) as client:
        r = client.get("/api/records/" + urllib.parse.quote(name, safe="/"))
    assert r.status_code in (200, 400, 404, 422), (name, r.text)
    if r.status_code != 200:
        error = r.json()["error"]
        assert "\n" not in error and len(error) < 400 and _FOLDER.name not in error, error
