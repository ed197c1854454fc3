"""docs/RULES.md, the project's rules document, agrees with the code and the examples.

* its generated examples block is what ``tools.rules_examples`` renders from
  tests/data/examples.json;
* every field of ``RulesConfig`` is documented, with its default and allowed values;
* every JSON record shown replays (``lama_env.record.replay``) to the result shown
  right after it.
"""

from __future__ import annotations

import dataclasses
import json
import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # tools/ is a folder of the repository, not an installed package
    sys.path.insert(0, str(ROOT))

from lama_env.record import replay  # noqa: E402
from lama_env.rules import TRIPLE_LLAMA_MODES, RulesConfig  # noqa: E402
from tools import rules_examples as rx  # noqa: E402

RULES_MD = ROOT / "docs" / "RULES.md"
TEXT = RULES_MD.read_text(encoding="utf-8")
JSON_BLOCK = re.compile(r"^```json\n(.*?)^```", re.S | re.M)
FIELDS = [f for f in dataclasses.fields(RulesConfig) if f.init]


def json_blocks(text: str) -> list:
    """Every fenced ```json block of ``text``, parsed, in order."""
    return [json.loads(m.group(1)) for m in JSON_BLOCK.finditer(text)]


def is_record(block) -> bool:
    return isinstance(block, dict) and "format" in block


def is_result(block) -> bool:
    return isinstance(block, dict) and "valid" in block


def section(text: str, heading: str) -> str:
    """The text of the section under ``heading`` (up to the next heading of the same or a higher level)."""
    level = len(heading) - len(heading.lstrip("#"))
    start = text.index(heading + "\n")
    nxt = re.compile(rf"^#{{1,{level}}} ", re.M).search(text, start + len(heading) + 1)
    return text[start:nxt.start() if nxt else len(text)]


# --------------------------------------------------------------------- the document is in the repository
def test_the_document_is_in_the_repository_and_self_contained():
    assert RULES_MD.is_file()
    assert "shared/" not in TEXT and "../" not in TEXT
    assert "lama-dice-record/1" in TEXT


# --------------------------------------------------------------------- the generated examples block
def test_examples_block_is_up_to_date():
    cases = rx.load_examples()
    _, block, _ = rx.split_block(TEXT)
    assert block.strip() == rx.render_examples(cases).strip(), "run `python -m tools.rules_examples`"
    assert rx.with_examples(TEXT, cases) == TEXT
    assert rx.main(["--check"]) == 0


def test_every_example_is_rendered_with_its_record_and_result():
    _, block, _ = rx.split_block(TEXT)
    cases = rx.load_examples()
    assert len(cases) >= 8
    blocks = json_blocks(block)
    assert len(blocks) == 2 * len(cases)
    for case, record, expect in zip(cases, blocks[0::2], blocks[1::2], strict=True):
        assert f"### Example `{case['name']}`" in block
        assert record == case["record"] and expect == case["expect"]


def test_check_mode_fails_on_a_stale_file_and_the_rewrite_fixes_it(tmp_path, capsys):
    stale = tmp_path / "RULES.md"
    stale.write_text(TEXT.replace("### Example `legal-2p`", "### Example `legal-two`"), encoding="utf-8")
    before = stale.read_text(encoding="utf-8")
    assert rx.main(["--check", "--rules", str(stale)]) == 1
    assert stale.read_text(encoding="utf-8") == before  # --check never writes
    assert rx.main(["--rules", str(stale)]) == 0
    assert stale.read_text(encoding="utf-8") == TEXT
    assert rx.main(["--check", "--rules", str(stale)]) == 0
    # an empty block is stale too, and the markers are required
    start, end = TEXT.index(rx.START) + len(rx.START), TEXT.index(rx.END)
    stale.write_text(TEXT[:start] + "\n" + TEXT[end:], encoding="utf-8")
    assert rx.main(["--check", "--rules", str(stale)]) == 1
    stale.write_text(TEXT.replace(rx.END, ""), encoding="utf-8")
    assert rx.main(["--check", "--rules", str(stale)]) == 1
    assert rx.main(["--rules", str(stale)]) == 1
    capsys.readouterr()


def test_the_renderer_describes_each_example():
    for case in rx.load_examples():
        text = rx.describe(case)
        expect = case["expect"]
        if expect["valid"]:
            assert text.count("- Round ") == len(case["record"]["rounds"])
            for res in expect["rounds"]:
                assert f"`{res['ended_by']}`" in text
            assert ("is over" in text) == expect["game_over"]
        else:
            assert "Illegal" in text and expect["error"] in text


@pytest.mark.parametrize("value", [
    None, 0, -3, "lama", [], {}, [1, [2, [3, []]], {"a": None}],
    {"turns": [{"player": 0, "action": "roll", "dice": ["L", "L", "L"]}] * 4, "x": {"y": [1.5, True, "\u00e9"]}},
])
def test_the_json_layout_round_trips(value):
    assert json.loads(rx.dumps(value)) == value
    assert json.loads(rx.dumps(value, width=10)) == value


def test_the_json_layout_keeps_lines_short_where_it_can():
    for case in rx.load_examples():
        text = rx.dumps(case["record"])
        assert json.loads(text) == case["record"]
        for line in text.splitlines():
            # only a single turn or hand too long for a line of its own may overflow
            assert len(line) <= rx.WIDTH or line.strip().startswith(('{"player"', '["')), line


# --------------------------------------------------------------------- the rules configuration
def test_every_rules_config_field_is_named():
    for f in FIELDS:
        assert f"`{f.name}`" in TEXT, f.name


def test_the_rules_table_lists_exactly_the_fields_with_their_defaults():
    table = section(TEXT, "## Rules configuration")
    rows = {m.group(1): m.group(0) for m in re.finditer(r"^\| `(\w+)` \|.*$", table, re.M)}
    assert set(rows) >= {f.name for f in FIELDS}
    config_rows = {name for name in rows if name in {f.name for f in FIELDS}}
    assert config_rows == {f.name for f in FIELDS}
    defaults = {**RulesConfig().to_dict(include_dice=True), "max_round_turns": RulesConfig().max_round_turns}
    assert set(defaults) == {f.name for f in FIELDS}
    squash = lambda s: re.sub(r"\s", "", s)  # noqa: E731
    for name, default in defaults.items():
        assert squash(json.dumps(default)) in squash(rows[name]), (name, rows[name])
    for mode in TRIPLE_LLAMA_MODES:
        assert f'"{mode}"' in rows["triple_llama"]


def test_the_documented_defaults_are_the_code_defaults():
    # the defaults stated in the rules text and in the YAML example are accepted by the code
    assert RulesConfig.from_dict({}).to_dict() == {"triple_llama": "chip_only", "must_discard": True,
                                                  "end_threshold": 40}
    block = section(TEXT, "### Where to set them")
    dice = re.search(r"dice: (\[\[.*?\]\])`", block).group(1)
    assert RulesConfig(dice=json.loads(dice)) == RulesConfig()


# --------------------------------------------------------------------- records shown in the document
BLOCKS = json_blocks(TEXT)
PAIRS = [(i, BLOCKS[i], BLOCKS[i + 1] if i + 1 < len(BLOCKS) else None)
         for i in range(len(BLOCKS)) if is_record(BLOCKS[i])]


def test_every_json_block_is_a_record_or_the_result_right_after_one():
    assert len(PAIRS) >= len(rx.load_examples()) + 1
    for i, block in enumerate(BLOCKS):
        if is_result(block):
            assert i > 0 and is_record(BLOCKS[i - 1]), f"result block {i} does not follow a record"
        else:
            assert is_record(block), f"json block {i} is neither a record nor a replay result: {block!r}"


@pytest.mark.parametrize("i, record, shown", PAIRS, ids=[f"block{i}" for i, _, _ in PAIRS])
def test_every_record_block_replays_to_the_result_beside_it(i, record, shown):
    assert is_result(shown), f"record block {i} is not followed by its replay result"
    assert replay(record) == shown


def test_the_example_record_and_its_result_are_under_stable_headings():
    record = json_blocks(section(TEXT, "### Example record"))[0]
    result = json_blocks(section(TEXT, "### Example replay result"))[0]
    assert is_record(record) and is_result(result) and result["valid"]
    assert replay(record) == result
