"""The worked examples of tests/data/examples.json replay to their expected results."""

import json
from pathlib import Path

import pytest

from lama_env.record import replay

EXAMPLES = Path(__file__).resolve().parent / "data" / "examples.json"

CASES = json.loads(EXAMPLES.read_text())


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_example_replays_to_expected(case):
    assert replay(case["record"]) == case["expect"]
