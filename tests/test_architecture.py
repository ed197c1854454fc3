"""The architecture, checked from the source: data flows one way and no module imports in a circle.

* The rules engine (rules, transitions, actions, engine, odds, record, errors) is pure
  Python/NumPy: no gym, torch or other heavy import.
* ``lama_env`` imports nothing from ``lama_dice`` (agents, training, evaluation, CLI).
* The floors of the layout only look down: cli > bench > train > evaluation > agents > lama_env
  (a ``__main__`` module is an entry point of the command line and may use it).
* There is no import cycle among the project's modules, counting imports inside functions
  and ``importlib.import_module("...")`` strings.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
#: Import name of each top-level folder of the repository.
PACKAGES = {"lama_env": "lama_env", "agents": "lama_dice.agents", "evaluation": "lama_dice.evaluation",
            "train": "lama_dice.train", "bench": "lama_dice.bench", "cli": "lama_dice.cli"}
ENGINE = ("rules", "transitions", "actions", "engine", "odds", "record", "errors", "snapshot")
#: Each floor may import the floors listed for it (and itself); the rest of the project is off limits.
FLOORS = {
    "lama_env": {"lama_env"},
    "lama_dice.agents": {"lama_env", "lama_dice.agents"},
    "lama_dice.evaluation": {"lama_env", "lama_dice.agents", "lama_dice.evaluation"},
    "lama_dice.train": {"lama_env", "lama_dice.agents", "lama_dice.evaluation", "lama_dice.train"},
    "lama_dice.bench": {"lama_env", "lama_dice.agents", "lama_dice.evaluation", "lama_dice.train",
                        "lama_dice.bench"},
}


def _modules() -> dict[str, tuple[Path, bool]]:
    mods: dict[str, tuple[Path, bool]] = {}
    for folder, pkg in PACKAGES.items():
        for f in (ROOT / folder).rglob("*.py"):
            parts = [p for p in f.relative_to(ROOT / folder).with_suffix("").parts if p != "__init__"]
            mods[".".join([pkg, *parts])] = (f, f.name == "__init__.py")
    return mods


MODULES = _modules()


def _imports(name: str) -> set[str]:
    """Every module name ``name`` imports (absolute), anywhere in its source."""
    path, is_pkg = MODULES[name]
    pkg = name if is_pkg else name.rpartition(".")[0]
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parent = pkg
                for _ in range(node.level - 1):
                    parent = parent.rpartition(".")[0]
                base = parent + ("." + node.module if node.module else "")
            out.update(f"{base}.{a.name}" if f"{base}.{a.name}" in MODULES else base for a in node.names)
        elif isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
        elif (isinstance(node, ast.Call) and getattr(node.func, "attr", getattr(node.func, "id", "")) == "import_module"
              and node.args and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)):
            out.add(node.args[0].value)
    return out


def _project(target: str) -> str | None:
    """The project module ``target`` lands in (its longest known prefix), or None."""
    while target and target not in MODULES:
        target = target.rpartition(".")[0]
    return target or None


GRAPH = {m: {p for t in _imports(m) if (p := _project(t)) and p != m} for m in MODULES}


@pytest.mark.parametrize("module", [f"lama_env.{m}" for m in ENGINE])
def test_the_rules_engine_is_pure_python_and_numpy(module):
    stdlib = set(sys.stdlib_module_names) | {"__future__"}
    outside = {t.split(".")[0] for t in _imports(module)} - stdlib - {"numpy", "lama_env"}
    assert not outside, f"{module} imports {sorted(outside)}"


def test_lama_env_imports_nothing_of_lama_dice():
    leaks = sorted((m, t) for m in MODULES if m.startswith("lama_env") for t in _imports(m)
                   if t.split(".")[0] in ("lama_dice", "agents", "train", "evaluation", "cli", "bench"))
    assert not leaks


@pytest.mark.parametrize("floor", sorted(FLOORS))
def test_floors_only_import_the_floors_below(floor):
    allowed = FLOORS[floor]
    ups = sorted((m, d) for m, deps in GRAPH.items()
                 if (m == floor or m.startswith(floor + ".")) and not m.endswith(".__main__")  # entry points
                 for d in deps if not any(d == a or d.startswith(a + ".") for a in allowed))
    assert not ups


def test_no_import_cycles():
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(GRAPH[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                cycles.append(sorted(comp))

    for v in sorted(GRAPH):
        if v not in index:
            visit(v)
    assert not cycles


def test_the_checks_see_the_project():
    """The graph is not empty and a known edge is in it (so the checks above can fail)."""
    assert len(MODULES) > 50
    assert "lama_env.engine" in GRAPH["lama_dice.agents.base"]
    assert "lama_env.transitions" in GRAPH["lama_env.engine"]
