"""Every ```python block of docs/using-with.md runs as shown.

A block is named by the section it sits in (the test id: ``sb3``, ``torchrl``,
``tianshou``, ``rllib``, ``cleanrl``, ``video``, ``openspiel``) and skipped, with the reason, when a
module it imports is not installed: ``make test`` runs the page in ``.venv-interop``
(every block but RLlib's) and the RLlib block in ``.venv-rllib`` (``-k rllib``). Each block
runs in a fresh namespace, in a temporary working directory.
"""

from __future__ import annotations

import ast
import importlib.util
import re
import sys
from pathlib import Path

import pytest

PAGE = Path(__file__).resolve().parents[2] / "docs" / "using-with.md"

#: Section heading (its start, lower case) -> test id.
SECTIONS = {"stable-baselines3": "sb3", "torchrl": "torchrl", "tianshou": "tianshou", "rllib": "rllib",
            "a cleanrl-style loop": "cleanrl", "recording a video": "video", "openspiel": "openspiel"}
#: What to install for a missing top-level module.
EXTRAS = {"torchrl": "the interop extra", "tianshou": "the interop extra", "moviepy": "the interop extra",
          "ray": "the rllib extra", "sb3_contrib": "sb3-contrib", "stable_baselines3": "stable-baselines3",
          "pyspiel": "the openspiel extra", "open_spiel": "the openspiel extra"}
#: Modules a block needs without importing them by name.
IMPLICIT = {"video": ["moviepy"]}


def blocks() -> list[tuple[str, str]]:
    """(id, code) of each ```python block, the id from the ## section it sits in."""
    out: list[tuple[str, str]] = []
    section = ""
    lines = PAGE.read_text(encoding="utf-8").splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("## "):
            title = line[3:].strip().lower()
            section = next((v for k, v in SECTIONS.items() if title.startswith(k)), re.sub(r"\W+", "-", title))
        if line.strip() == "```python":
            end = lines.index("```", i + 1)
            out.append((section, "\n".join(lines[i + 1:end]) + "\n"))
            i = end
        i += 1
    return out


BLOCKS = blocks()


def imported_modules(code: str) -> list[str]:
    """The top-level modules a block imports."""
    names = []
    for node in ast.walk(ast.parse(code)):
        if isinstance(node, ast.Import):
            names += [a.name.split(".")[0] for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.append(node.module.split(".")[0])
    return list(dict.fromkeys(names))


def test_the_page_has_a_snippet_per_library():
    ids = [name for name, _ in BLOCKS]
    assert ids == ["sb3", "torchrl", "tianshou", "rllib", "cleanrl", "video", "openspiel"]
    assert len(set(ids)) == len(ids), "one block per section: the ids must stay unique"


@pytest.mark.parametrize("code", [code for _, code in BLOCKS], ids=[name for name, _ in BLOCKS])
@pytest.mark.filterwarnings("error::lama_env.gym_env.IllegalMoveWarning")  # the snippets play legal moves only
@pytest.mark.filterwarnings("ignore:PettingZoo in TorchRL is tested using version:UserWarning")
def test_snippet_runs(code, request, tmp_path, monkeypatch, capsys):
    name = request.node.callspec.id
    for module in imported_modules(code) + IMPLICIT.get(name, []):
        if importlib.util.find_spec(module) is None:
            pytest.skip(f"{module} is not installed ({EXTRAS.get(module, 'pip install ' + module)})")
    monkeypatch.chdir(tmp_path)  # files a snippet writes (videos/) land here
    monkeypatch.setattr(sys, "argv", [str(PAGE)])
    namespace = {"__name__": "__main__"}
    exec(compile(code, f"{PAGE.name}[{name}]", "exec"), namespace)
    out = capsys.readouterr().out
    assert out.strip() or name == "video", "each snippet prints what it got"
    assert not re.search(r"\bnan\b", out, re.I), out
    if name == "video":
        assert [p.name for p in (tmp_path / "videos").glob("*.mp4")] == ["rl-video-episode-0.mp4"]
