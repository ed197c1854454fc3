"""The Results page's data: score cards and league / evaluate reports found under ``--results DIR``.

* A score card (``lama-dice score --json``, ``"suite"`` key) gives per task a
  headline number with its 95% interval; the cards of several agents become
  one ranking per task and suite version (best first: highest, or lowest where
  the task says "lower is better", as the ``exploit`` task does).
* A league or evaluate report (``lama-dice evaluate --json``, with or without
  ``--league``: an ``"agents"`` list with win rates) becomes a table of its
  agents with their win rates and intervals, ranked as ``lama-dice evaluate``
  ranks them: a league by its rating (OpenSkill's ``mu - 3 sigma``, which weighs
  every game by the opponents', not only the wins), an evaluation by win rate
  (``ranked_by`` says which).

Files are read as data (JSON only, at most :data:`MAX_FILES` files of at most
:data:`MAX_BYTES` each); a file that is neither is listed as skipped with why.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from lama_env.reader import InputError, read_file, read_json
from lama_env.safetext import safe_text

#: At most this many JSON files are read under --results, each at most this many bytes.
MAX_FILES, MAX_BYTES = 500, 20 * 1024 * 1024


def _num(x: Any) -> float | None:
    """``x`` as a finite float, or None (not a number, NaN, infinite, or an integer beyond a float's range)."""
    if not isinstance(x, (int, float)) or isinstance(x, bool):
        return None
    try:
        return float(x) if math.isfinite(x) else None
    except OverflowError:
        return None


def _ci(x: Any) -> list[float | None]:
    if isinstance(x, (list, tuple)) and len(x) == 2:
        return [_num(x[0]), _num(x[1])]
    return [None, None]


def _card_rows(card: dict, name: str, tasks: dict[tuple[str, str], dict[str, Any]]) -> None:
    agent = str(card.get("agent", "?"))
    suite = str(card.get("suite"))
    for task in card.get("tasks") or []:
        head = task.get("headline") or {}
        about = str(task.get("about", ""))
        t = tasks.setdefault((suite, str(task.get("name"))), {
            "suite": suite, "task": str(task.get("name")), "kind": task.get("kind"), "players": task.get("players"),
            "about": about, "measure": head.get("name", "value"), "percent": bool(head.get("percent")),
            "lower_is_better": "lower is better" in about, "rows": []})
        lo, hi = _ci(head.get("ci95"))
        t["rows"].append({"agent": agent, "value": _num(head.get("value")), "lo": lo, "hi": hi,
                          "games": head.get("games"), "official": bool(card.get("official")), "file": name})


def _report(data: dict, name: str) -> dict[str, Any]:
    rows = []
    for a in data.get("agents") or []:
        lo, hi = _ci(a.get("win_rate_ci95"))
        rows.append({"agent": str(a.get("spec", "?")), "value": _num(a.get("win_rate")), "lo": lo, "hi": hi,
                     "games": a.get("games"), "points_per_round": _num(a.get("mean_points_per_round")),
                     "ordinal": _num(a.get("ordinal"))})
    league = bool(data.get("league"))
    by = "ordinal" if league and all(r["ordinal"] is not None for r in rows) else "value"
    rows.sort(key=lambda r: -(r[by] if r[by] is not None else -math.inf))
    ranked_by = ("rating (OpenSkill mu - 3 sigma), as lama-dice evaluate --league ranks it: it weighs each game by "
                 "the opponents' strength, so the order can differ from the win rates'") if by == "ordinal" \
        else "win rate"
    return {"file": name, "kind": "league" if league else "evaluate", "players": data.get("players"),
            "games": data.get("games"), "seed": data.get("seed"), "measure": "win rate", "percent": True,
            "ranked_by": ranked_by, "rows": rows}


def classify(data: Any) -> str | None:
    """``"card"``, ``"report"`` (league or evaluate) or None for JSON that is neither."""
    if not isinstance(data, dict):
        return None
    if isinstance(data.get("suite"), str) and isinstance(data.get("tasks"), list):
        return "card"
    agents = data.get("agents")
    if isinstance(agents, list) and agents and all(isinstance(a, dict) and "win_rate" in a for a in agents):
        return "report"
    return None


def load_results(folder: str | Path | None) -> dict[str, Any]:
    """Read every score card and report under ``folder`` (recursively, sorted by path).

    Returns:
        ``folder``, ``tasks`` (per suite version and task of the cards: ``suite``, ``task``, ``measure``,
        ``percent``, ``lower_is_better`` and ``rows`` of ``agent``, ``value``, ``lo``, ``hi``, ``games``,
        ``file``, best first), ``reports`` (per league or
        evaluate file: its ``rows`` best first) and ``skipped`` (``[file, why]`` pairs).
    """
    out: dict[str, Any] = {"folder": None if folder is None else str(folder), "tasks": [], "reports": [],
                           "skipped": []}
    if folder is None:
        return out
    root = Path(folder)
    tasks: dict[tuple[str, str], dict[str, Any]] = {}
    files = sorted(p for p in root.rglob("*.json") if p.is_file())
    if len(files) > MAX_FILES:
        out["skipped"].append([f"{len(files) - MAX_FILES} more files", f"only the first {MAX_FILES} are read"])
    for path in files[:MAX_FILES]:
        name = path.relative_to(root).as_posix()
        if safe_text(name) != name:  # not UTF-8 (or control characters): no JSON answer could carry it
            out["skipped"].append([safe_text(name), "the file name is not UTF-8 text or has control characters"])
            continue
        try:
            if path.stat().st_size > MAX_BYTES:
                out["skipped"].append([name, f"larger than {MAX_BYTES // 2**20} MiB"])
                continue
            data = read_json(read_file(path, MAX_BYTES), "", allow_nan=True)  # the bounded reader
        except InputError as e:
            out["skipped"].append([name, f"not readable JSON ({e})"])
            continue
        kind = classify(data)
        if kind == "card":
            _card_rows(data, name, tasks)
        elif kind == "report":
            out["reports"].append(_report(data, name))
        elif (not (isinstance(data, dict) and str(data.get("format")).startswith("lama-dice-record/"))
              and path.name != "index.json"):
            out["skipped"].append([name, "neither a score card nor a league / evaluate report"])
    for t in tasks.values():  # best first; an agent without a number last
        sign = 1.0 if t["lower_is_better"] else -1.0
        t["rows"].sort(key=lambda r: sign * r["value"] if r["value"] is not None else math.inf)
    out["tasks"] = list(tasks.values())
    return out
