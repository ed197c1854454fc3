"""Render the worked examples of ``tests/data/examples.json`` into ``docs/RULES.md``.

``docs/RULES.md`` holds a generated block between the markers
``<!-- examples:start -->`` and ``<!-- examples:end -->``: for every example
its name, a short description derived from the record and its expected
result, the record and the expected replay result as JSON blocks.

    python -m tools.rules_examples            # rewrite the block in docs/RULES.md
    python -m tools.rules_examples --check    # exit 1 if docs/RULES.md is stale

Standard library plus :mod:`lama_env` only.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from lama_env.rules import RulesConfig

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "tests" / "data" / "examples.json"
RULES_MD = ROOT / "docs" / "RULES.md"
START = "<!-- examples:start -->"
END = "<!-- examples:end -->"
#: Lines of a JSON block are kept to this width where the data allow.
WIDTH = 110


class StaleError(ValueError):
    """The markers of the generated block are missing or out of order."""


# --------------------------------------------------------------------------- JSON layout
def dumps(obj: Any, width: int = WIDTH, indent: int = 2) -> str:
    """JSON text that puts a list or object on one line when it fits in ``width`` columns.

    Larger containers get one member per line, so a record shows one turn per
    line.  ``json.loads(dumps(x)) == x`` for every JSON value ``x``.
    """
    return _dumps(obj, width, indent, level=0, used=0)


def _dumps(obj: Any, width: int, indent: int, level: int, used: int) -> str:
    one = json.dumps(obj, ensure_ascii=False)
    if not isinstance(obj, (dict, list)) or not obj or used + len(one) + 1 <= width:
        return one
    inner = indent * (level + 1)
    pad = " " * inner
    if isinstance(obj, dict):
        items = []
        for k, v in obj.items():
            key = json.dumps(k, ensure_ascii=False) + ": "
            items.append(pad + key + _dumps(v, width, indent, level + 1, inner + len(key)))
        open_, close = "{", "}"
    else:
        items = [pad + _dumps(v, width, indent, level + 1, inner) for v in obj]
        open_, close = "[", "]"
    return open_ + "\n" + ",\n".join(items) + "\n" + " " * (indent * level) + close


# --------------------------------------------------------------------------- descriptions
def _plural(n: int, word: str, words: str | None = None) -> str:
    return f"{n} {word if n == 1 else (words or word + 's')}"


def _players(seats: Sequence[int]) -> str:
    names = [f"player {p}" for p in seats]
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def _rules_text(rec: dict) -> str:
    try:
        rules = RulesConfig.from_dict(rec.get("rules"))
    except (ValueError, TypeError):
        return "an invalid rules object"
    default = RulesConfig()
    diff = [(k, v) for k, v in rules.to_dict(include_dice=True).items()
            if v != default.to_dict(include_dice=True)[k]]
    if not diff:
        return "the default rules"
    return "the rules " + ", ".join(f"`{k}={json.dumps(v)}`" for k, v in diff)


def _turn_summary(turns: list, triple_llama: str) -> str:
    """``"9 rolls (5 discards, 2 takes, ...), 2 quits"`` for a round's turns (as recorded)."""
    kinds = {"discard": 0, "take": 0, "triple llama": 0, "bust": 0}
    rolls = quits = 0
    for t in turns:
        if not isinstance(t, dict):
            continue
        if t.get("action") == "quit":
            quits += 1
            continue
        rolls += 1
        llamas = t.get("dice") == ["L", "L", "L"]
        if llamas:
            kinds["triple llama"] += 1
        if "discard" in t:
            kinds["discard"] += 1
        elif "take" in t:
            kinds["take"] += 1
        elif not (llamas and triple_llama == "chip_only"):
            kinds["bust"] += 1
    parts = [_plural(n, k, "triple llamas" if k == "triple llama" else None) for k, n in kinds.items() if n]
    text = _plural(rolls, "roll")
    if parts:
        text += " (" + ", ".join(parts) + ")"
    return text + ", " + _plural(quits, "quit")


def _ending(res: dict, turns: list) -> str:
    if not res["finished"]:
        return f"unfinished so far (totals {res['totals']})"
    last = turns[-1].get("player") if turns and isinstance(turns[-1], dict) else None
    how = {
        "went_out": f"player {res['went_out']} went out",
        "row_empty": f"player {last} took the last llama-row card",
        "bust": f"player {last} busted",
        "all_quit": "every player quit",
        "turn_cap": "the round reached its turn cap",
    }[res["ended_by"]]
    return f"ended by `{res['ended_by']}` ({how}); points {res['points']}, totals {res['totals']}"


def describe(case: dict) -> str:
    """A short Markdown description of an example, derived from its record and expected result."""
    rec, expect = case["record"], case["expect"]
    if not isinstance(rec, dict):
        return f"Not a game record: `{expect.get('error')}`."
    n = rec.get("players")
    rounds = rec.get("rounds") if isinstance(rec.get("rounds"), list) else []
    who = "Solo game (1 player)" if n == 1 else f"{n} players"
    lines = [f"{who}, {_rules_text(rec)}, {_plural(len(rounds), 'round')}"
             + (f", starting from the totals {rec['start_points']}" if any(rec.get("start_points") or []) else "")
             + "."]
    try:
        mode = RulesConfig.from_dict(rec.get("rules")).triple_llama
    except (ValueError, TypeError):
        mode = "chip_only"
    results = expect["rounds"] if expect.get("valid") else []
    lines.append("")
    for r, rnd in enumerate(rounds):
        if not isinstance(rnd, dict):
            continue
        turns = rnd.get("turns") if isinstance(rnd.get("turns"), list) else []
        text = f"- Round {r}: player {rnd.get('start_player')} starts; {_plural(len(turns), 'turn')}: " \
               + _turn_summary(turns, mode)
        if r < len(results):
            text += "; " + _ending(results[r], turns)
        lines.append(text + ".")
    lines.append("")
    if expect.get("valid"):
        if expect["game_over"] and n == 1:
            lines.append(f"The game is over with the total {expect['totals'][0]} (the solo player's score; "
                         "lower is better).")
        elif expect["game_over"]:
            w = expect["winners"]
            low = expect["totals"][w[0]]
            verb = "wins" if len(w) == 1 else "share the win"
            lines.append(f"The game is over with totals {expect['totals']}: {_players(w)} {verb} "
                         f"with {_plural(low, 'point')}.")
        else:
            lines.append(f"The game is not over; totals {expect['totals']}.")
    else:
        r, t = expect.get("round"), expect.get("turn")
        where = "the record as a whole" if r is None else (f"round {r}" if t is None else f"round {r}, turn {t}")
        lines.append(f"**Illegal.** The first fault is in {where}: {expect.get('error')}.")
        if r is not None and t is not None:
            try:
                bad = rounds[r]["turns"][t]
            except (IndexError, KeyError, TypeError):
                bad = None
            if bad is not None:
                lines.append("")
                lines.append(f"The faulty turn: `{json.dumps(bad)}`.")
    return "\n".join(lines)


# --------------------------------------------------------------------------- rendering
def load_examples(path: Path = EXAMPLES) -> list[dict]:
    """The worked examples: a list of ``{"name", "record", "expect"}``."""
    return json.loads(Path(path).read_text(encoding="utf-8"))


def render_examples(cases: Sequence[dict]) -> str:
    """The Markdown of every example (what goes between the markers, without them)."""
    out = [
        "<!-- generated by `python -m tools.rules_examples` from tests/data/examples.json; do not edit -->",
        "",
    ]
    for case in cases:
        out += [
            f"### Example `{case['name']}`",
            "",
            describe(case),
            "",
            "<details><summary>Record</summary>",
            "",
            "```json",
            dumps(case["record"]),
            "```",
            "",
            "</details>",
            "",
            "Replay result:",
            "",
            "```json",
            dumps(case["expect"]),
            "```",
            "",
        ]
    return "\n".join(out)


def split_block(text: str) -> tuple[str, str, str]:
    """``(before, block, after)`` of ``text`` around the generated block (markers stay in before / after)."""
    i = text.find(START)
    j = text.find(END)
    if i < 0 or j < 0 or j < i or text.count(START) != 1 or text.count(END) != 1:
        raise StaleError(f"expected one {START} and, after it, one {END}")
    i += len(START)
    return text[:i], text[i:j], text[j:]


def with_examples(text: str, cases: Sequence[dict]) -> str:
    """``text`` with its generated block replaced by the rendering of ``cases``."""
    before, _, after = split_block(text)
    return before + "\n" + render_examples(cases) + "\n" + after


def main(argv: Sequence[str] | None = None) -> int:
    """Rewrite (or with ``--check`` verify) the examples block; return the exit status."""
    p = argparse.ArgumentParser(prog="python -m tools.rules_examples", description=__doc__.splitlines()[0])
    p.add_argument("--check", action="store_true", help="exit 1 if the file is stale instead of rewriting it")
    p.add_argument("--rules", type=Path, default=RULES_MD, help="the Markdown file (default: docs/RULES.md)")
    p.add_argument("--examples", type=Path, default=EXAMPLES, help="the examples (default: tests/data/examples.json)")
    args = p.parse_args(argv)
    text = args.rules.read_text(encoding="utf-8")
    try:
        new = with_examples(text, load_examples(args.examples))
    except StaleError as e:
        print(f"{args.rules}: {e}", file=sys.stderr)
        return 1
    if args.check:
        if new != text:
            print(f"{args.rules} is stale: run `python -m tools.rules_examples`", file=sys.stderr)
            return 1
        print(f"{args.rules} is up to date")
        return 0
    if new != text:
        args.rules.write_text(new, encoding="utf-8")
        print(f"rewrote the examples of {args.rules}")
    else:
        print(f"{args.rules} is already up to date")
    return 0


if __name__ == "__main__":
    sys.exit(main())
