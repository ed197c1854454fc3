"""The architecture, checked from the source: data flows one way and no module imports in a circle.

* The rules engine (rules, transitions, actions, engine, odds, record, errors) is pure
  Python/NumPy: no gym, torch or other heavy import.
* ``lama_env`` imports nothing from ``lama_dice`` (agents, training, evaluation, CLI).
* The floors of the layout only look down: cli > bench > train > evaluation > agents > the modules of
  ``lama_dice/`` itself (atomic writes, the YAML reader, animations) and the shipped configs > lama_env
  (a ``__main__`` module is an entry point of the command line and may use it).
* There is no import cycle among the project's modules, counting imports inside functions
  and ``importlib.import_module("...")`` strings.
* Layers that show: the game's tables and constants are one bottom module (``lama_env.constants``,
  importing nothing of ``lama_env``); the compiled engine does not import the reference that tests it
  (``lama_env.transitions``); ``lama_env`` stands on a bounded number of import floors; and no module
  reaches a private name (a module or a name with a leading underscore) of another package.
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
#: Import name of each top-level folder of the repository.
PACKAGES = {"lama_env": "lama_env", "lama_dice": "lama_dice", "agents": "lama_dice.agents",
            "evaluation": "lama_dice.evaluation", "train": "lama_dice.train", "bench": "lama_dice.bench",
            "cli": "lama_dice.cli", "configs": "lama_dice.configs"}
ENGINE = ("rules", "transitions", "actions", "engine", "odds", "record", "errors", "snapshot")
#: The app's base: the modules of lama_dice/ itself (atomic writes, the YAML reader, animations) and the shipped
#: configs, on lama_env only.
BASE = {"lama_dice.configs", *(f"lama_dice.{f.stem}" for f in (ROOT / "lama_dice").glob("*.py")
                               if not f.name.startswith("__"))}
APP = {"lama_env", *BASE}
#: Each floor may import the floors listed for it (and itself); the rest of the project is off limits.
FLOORS = {
    "lama_env": {"lama_env"},
    **dict.fromkeys(BASE, APP),
    "lama_dice.agents": {*APP, "lama_dice.agents"},
    "lama_dice.evaluation": {*APP, "lama_dice.agents", "lama_dice.evaluation"},
    "lama_dice.train": {*APP, "lama_dice.agents", "lama_dice.evaluation", "lama_dice.train"},
    "lama_dice.bench": {*APP, "lama_dice.agents", "lama_dice.evaluation", "lama_dice.train", "lama_dice.bench"},
}


def _modules() -> dict[str, tuple[Path, bool]]:
    mods: dict[str, tuple[Path, bool]] = {}
    for folder, pkg in PACKAGES.items():
        for f in (ROOT / folder).rglob("*.py"):
            parts = [p for p in f.relative_to(ROOT / folder).with_suffix("").parts if p != "__init__"]
            mods[".".join([pkg, *parts])] = (f, f.name == "__init__.py")
    return mods


MODULES = _modules()


def _from(node: ast.ImportFrom, pkg: str) -> str:
    """The absolute module of ``from X import ...`` written in package ``pkg`` (relative imports resolved)."""
    if not node.level:
        return node.module or ""
    parent = pkg
    for _ in range(node.level - 1):
        parent = parent.rpartition(".")[0]
    return parent + ("." + node.module if node.module else "")


def _imports(name: str) -> set[str]:
    """Every module name ``name`` imports (absolute), anywhere in its source."""
    path, is_pkg = MODULES[name]
    pkg = name if is_pkg else name.rpartition(".")[0]
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            base = _from(node, pkg)
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


# ---------------------------------------------------------------- layers that show (issue 50 item 6)
#: The bottom module of lama_env: the game's tables and constants.
CONSTANTS = "lama_env.constants"
#: The compiled engine, which must not stand on the reference that tests it (lama_env.transitions).
COMPILED = ("lama_env._kernel", "lama_env._vector_kernel", "lama_env._game", "lama_env.compiled")
#: The most import floors lama_env stands on (12 before its constants had one home; 10 since).
MAX_FLOORS = 10


def test_the_constants_are_the_bottom_floor():
    """``lama_env.constants`` imports nothing of lama_env (nothing but the standard library), and the rules read it."""
    stdlib = set(sys.stdlib_module_names) | {"__future__"}
    assert not GRAPH[CONSTANTS], GRAPH[CONSTANTS]
    assert {t.split(".")[0] for t in _imports(CONSTANTS)} <= stdlib, _imports(CONSTANTS)
    assert CONSTANTS in GRAPH["lama_env.rules"] and CONSTANTS in GRAPH["lama_env._kernel"]


def below(modules: Sequence[str], graph: Mapping[str, set[str]]) -> set[str]:
    """Every module that ``modules`` import, directly or through others."""
    seen: set[str] = set()
    todo = list(modules)
    while todo:
        for d in graph.get(todo.pop(), ()):
            if d not in seen:
                seen.add(d)
                todo.append(d)
    return seen


def test_the_compiled_engine_does_not_import_the_reference():
    """The kernels (and their public face) import nothing of ``lama_env.transitions``, directly or not.

    The reference is the tests' oracle and the solvers' enumeration; the compiled engine reads its
    numbers from ``lama_env.constants`` and its odds from ``lama_env.odds``.
    """
    assert "lama_env.transitions" not in below(COMPILED, GRAPH), sorted(below(COMPILED, GRAPH))
    assert "lama_env.transitions" in below(["lama_env.engine"], GRAPH)  # the check sees the reference where it is


def floors(graph: Mapping[str, set[str]]) -> dict[str, int]:
    """Each module's import floor: 0 when it imports none of ``graph``'s modules, else one above its highest import."""
    out: dict[str, int] = {}

    def floor(m: str, path: frozenset[str]) -> int:
        if m not in out:
            out[m] = 1 + max((floor(d, path | {m}) for d in graph[m] if d in graph and d not in path), default=-1)
        return out[m]

    for m in graph:
        floor(m, frozenset())
    return out


def test_lama_env_stands_on_few_import_floors():
    """lama_env's modules (its ``__init__``, the front door, aside) stand on at most :data:`MAX_FLOORS` floors."""
    assert floors({"a": {"b"}, "b": {"c"}, "c": set(), "d": {"c"}}) == {"a": 2, "b": 1, "c": 0, "d": 1}
    graph = {m: {d for d in deps if d.startswith("lama_env.")} for m, deps in GRAPH.items()
             if m.startswith("lama_env.")}
    levels = floors(graph)
    assert levels[CONSTANTS] == 0
    by_floor = sorted((f, m) for m, f in levels.items())
    assert max(levels.values()) + 1 <= MAX_FLOORS, by_floor


def _package(module: str) -> str | None:
    """The package of the layout (a value of :data:`PACKAGES`) that ``module`` belongs to, or None."""
    return max((p for p in PACKAGES.values() if module == p or module.startswith(p + ".")), key=len, default=None)


def _private(name: str, package: str) -> bool:
    """Whether a dotted name inside ``package`` has a private part (a leading underscore, not a dunder)."""
    return any(p.startswith("_") and not p.startswith("__") for p in name[len(package):].split(".") if p)


def private_reaches(module: str, tree: ast.AST, is_pkg: bool = False) -> list[str]:
    """Where ``module`` reaches a private module or name of another package of the layout.

    ``from lama_env import _kernel``, ``from lama_env._vector_kernel import encode``,
    ``import lama_env._kernel``, ``from lama_env.batched import _TABLES``,
    ``importlib.import_module("lama_env._kernel")``, and ``E._load`` for a name ``E`` bound to
    another package's module.
    """
    own = _package(module)
    pkg = module if is_pkg else module.rpartition(".")[0]
    bound: dict[str, str] = {}  # names bound to another package's modules or names
    hits: list[str] = []
    for node in ast.walk(tree):
        targets: list[tuple[str, str]] = []  # (the full name reached, the name it is bound to)
        if isinstance(node, ast.ImportFrom):
            base = _from(node, pkg)
            targets = [(f"{base}.{a.name}", a.asname or a.name) for a in node.names]
        elif isinstance(node, ast.Import):
            targets = [(a.name, a.asname or a.name.split(".")[0]) for a in node.names]
        elif (isinstance(node, ast.Call) and getattr(node.func, "attr", getattr(node.func, "id", "")) == "import_module"
              and node.args and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)):
            targets = [(node.args[0].value, "")]
        for full, name in targets:
            other = _package(full)
            if other is None or other == own:
                continue
            if _private(full, other):
                hits.append(f"{module}:{node.lineno} {full}")
            if name:
                bound[name] = full if isinstance(node, ast.ImportFrom) or name != full.split(".")[0] else name
    for node in ast.walk(tree):
        if (isinstance(node, ast.Attribute) and node.attr.startswith("_") and not node.attr.startswith("__")
                and isinstance(node.value, ast.Name) and node.value.id in bound):
            hits.append(f"{module}:{node.lineno} {bound[node.value.id]}.{node.attr}")
    return hits


def test_no_module_reaches_a_private_name_of_another_package():
    """A package uses another only through its public modules and names (what is needed is made public)."""
    bad = [hit for m, (_, is_pkg) in MODULES.items() for hit in private_reaches(m, TREES[m], is_pkg)]
    assert not bad, f"private names of another package reached: {bad}"


def test_the_private_reach_check_sees_a_reach():
    """Each way of reaching another package's private name is found; public names and one's own privates are not."""
    cases = {
        "from lama_env import _kernel as K\n": ["lama_env._kernel"],
        "from lama_env._vector_kernel import encode\n": ["lama_env._vector_kernel.encode"],
        "import lama_env._kernel\n": ["lama_env._kernel"],
        "from lama_env.batched import _TABLES, iter_log\n": ["lama_env.batched._TABLES"],
        "import importlib\nK = importlib.import_module('lama_env._kernel')\n": ["lama_env._kernel"],
        "import lama_env.engine as E\nE._load()\n": ["lama_env.engine._load"],
        "from lama_env import engine\nx = engine._G\n": ["lama_env.engine._G"],
        "import lama_env\nlama_env._register_envs()\n": ["lama_env._register_envs"],
        "from lama_env.engine import LamaGame\nfrom lama_env import __version__, constants\nconstants.__name__\n": [],
        "from . import _rollout_kernel as RK\nfrom ._mlp_kernel import affine\nRK._apply\n": [],
        "from lama_dice.agents import _rollout_kernel\n": [],
    }
    for src, reached in cases.items():
        found = [h.split(" ", 1)[1] for h in private_reaches("lama_dice.agents.fake", ast.parse(src))]
        assert found == reached, (src, found)
    found = private_reaches("lama_env.fake", ast.parse("from lama_dice.agents import _rollout_kernel\n"))
    assert [h.split(" ", 1)[1] for h in found] == ["lama_dice.agents._rollout_kernel"]


#: The learning stack: the ``train`` extra, which the core install lacks.
TRAIN_STACK = ("torch", "stable_baselines3", "sb3_contrib", "tensorboard")
#: The core's modules: whatever the core install runs (the env, the engine, evaluation, the agents that play
#: agent files, the command line); training, the RLlib agent and export live on the train extra.
CORE_FLOORS = ("lama_env", *sorted(BASE), "lama_dice.agents", "lama_dice.evaluation", "lama_dice.cli")
TRAIN_ONLY = ("lama_dice.agents.rllib_agent", "lama_dice.cli.curves")


def _top_level_imports(name: str) -> set[str]:
    """The modules ``name`` imports at its top level (not inside functions): what importing it costs."""
    path, _ = MODULES[name]
    out: set[str] = set()
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
            out.add(node.module)
    return out


def test_no_core_module_imports_the_learning_stack_on_import():
    heavy = sorted((m, t) for m in MODULES if m.startswith(CORE_FLOORS) and m not in TRAIN_ONLY
                   for t in _top_level_imports(m) if t.split(".")[0] in TRAIN_STACK)
    assert not heavy, f"core modules import the train extra at their top level: {heavy}"
    # the check sees torch where it is imported at the top (training modules do)
    assert "torch" in {t.split(".")[0] for t in _top_level_imports("lama_dice.train.trainer")}


def test_the_core_runs_without_importing_torch_or_sb3(tmp_path):
    """Import the core, build the CLI, play ppo:2p (an agent file, on NumPy): no module of the train extra loads."""
    import subprocess

    code = (
        "import sys\n"
        "import lama_env, lama_dice.agents, lama_dice.evaluation\n"
        "from lama_env import lama_dice_v1\n"
        "from lama_dice.cli.main import build_parser\n"
        "build_parser()\n"
        "from lama_dice.agents.registry import make_agent, registered\n"
        "registered()\n"
        "from lama_dice.evaluation import evaluate\n"
        "evaluate(['ppo:2p', 'lookahead'], num_players=2, games=4, seed=0)\n"
        "env = lama_dice_v1.env(num_players=2); env.reset(seed=0); env.close()\n"
        f"print(sorted(m for m in sys.modules if m.split('.')[0] in {TRAIN_STACK!r}))\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=600,
                          check=False)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.strip().splitlines()[-1] == "[]", proc.stdout


# ---------------------------------------------------------------- each consequence has one home (issue 31 item 7)
#: The compiled kernels: the compiled side's own homes (the one compiled step, its mask writer, its logs' writer).
KERNELS = ("lama_env._kernel", "lama_env._vector_kernel")


def _trees() -> dict[str, ast.Module]:
    return {m: ast.parse(p.read_text(encoding="utf-8")) for m, (p, _) in MODULES.items()}


TREES = _trees()


def _functions(tree: ast.AST) -> list[ast.FunctionDef | ast.AsyncFunctionDef]:
    return [f for f in ast.walk(tree) if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef))]


def _names(node: ast.AST) -> set[str]:
    """Every name and attribute name used in ``node``."""
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)} | {
        n.attr for n in ast.walk(node) if isinstance(n, ast.Attribute)}


def _private_members(module: str, cls: str) -> set[str]:
    """The private methods and attributes of class ``cls`` of ``module`` (``self._x = ...`` included)."""
    node = next(c for c in ast.walk(TREES[module]) if isinstance(c, ast.ClassDef) and c.name == cls)
    out = {f.name for f in node.body if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef))}
    out |= {t.attr for t in ast.walk(node) if isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name)
            and t.value.id == "self" and isinstance(t.ctx, ast.Store)}
    return {m for m in out if m.startswith("_") and not m.startswith("__")}


def reaches_into(module: str, members: set[str]) -> list[str]:
    """Where ``module`` uses one of ``members`` on an object other than ``self``/``cls`` (``vg._s``, ``a._vg._k``)."""
    return [f"{module}:{n.lineno} .{n.attr}" for n in ast.walk(TREES[module])
            if isinstance(n, ast.Attribute) and n.attr in members
            and not (isinstance(n.value, ast.Name) and n.value.id in ("self", "cls"))]


def test_no_module_reaches_into_the_private_members_of_vector_game():
    """VectorGame's driver API (reset_slots, play, the output views) is all other modules use of it."""
    members = _private_members("lama_env.vector", "VectorGame")
    assert {"_s", "_out", "_log", "_harvest", "_grow_log"} <= members  # the check knows what to look for
    bad = [hit for m in MODULES if m != "lama_env.vector" for hit in reaches_into(m, members)]
    assert not bad, f"private members of VectorGame used outside lama_env.vector: {bad}"


def builds_a_mask(call: ast.AST) -> bool:
    """A call ``np.zeros/ones/full/empty(NUM_ACTIONS, ...)``: a one-game action mask made by hand."""
    return (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute)
            and call.func.attr in ("zeros", "ones", "full", "empty") and bool(call.args)
            and (getattr(call.args[0], "id", None) == "NUM_ACTIONS"
                 or getattr(call.args[0], "attr", None) == "NUM_ACTIONS"))


def test_one_function_builds_an_action_mask():
    """On the Python side only ``actions.legal_mask`` turns legal actions into a mask (the kernels: write_mask)."""
    bad = [f"{m}:{n.lineno}" for m, tree in TREES.items() if m != "lama_env.actions" and m not in KERNELS
           for n in ast.walk(tree) if builds_a_mask(n)]
    assert not bad, f"action masks built outside lama_env.actions.legal_mask: {bad}"
    assert any(builds_a_mask(n) for n in ast.walk(TREES["lama_env.actions"]))  # the check sees the one home


def parses_a_log(fn: ast.AST) -> bool:
    """A function that reads a log's tags (a ``LOG_*`` name) and indexes a ``log`` array with arithmetic."""
    tags = {t for t in _names(fn) if t.lstrip("_") in ("LOG_ROUND", "LOG_QUIT", "LOG_ROLL", "LOG_END")}
    offsets = any(isinstance(s, ast.Subscript) and "log" in (getattr(s.value, "id", "") or getattr(s.value, "attr", ""))
                  and any(isinstance(b, ast.BinOp) for b in ast.walk(s.slice)) for s in ast.walk(fn))
    return bool(tags) and offsets


def test_one_function_parses_the_kernels_logs():
    """``gamelog.iter_log`` is the one reader of the compiled logs' layout; the others read its entries."""
    parsers = sorted(f"{m}.{f.name}" for m, tree in TREES.items() if m not in KERNELS for f in _functions(tree)
                     if parses_a_log(f))
    assert parsers == ["lama_env.gamelog.iter_log"], parsers


def test_one_function_turns_an_agent_into_its_native_description():
    """Only ``batched.native_description`` calls an agent's ``native(rules)`` (or looks the method up)."""
    hits = []
    for m, tree in TREES.items():
        for f in _functions(tree):
            for n in ast.walk(f):
                call_native = (isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
                               and n.func.attr == "native")
                lookup = (isinstance(n, ast.Call) and getattr(n.func, "id", None) == "getattr" and len(n.args) > 1
                          and getattr(n.args[1], "value", None) == "native")
                if call_native or lookup:
                    hits.append(f"{m}.{f.name}")
    assert sorted(set(hits)) == ["lama_env.batched.native_description"], hits


def shares_a_win(node: ast.AST) -> bool:
    """``x / len(won)`` or ``x / len(winners(...))``: a win share computed by hand."""
    if not (isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div) and isinstance(node.right, ast.Call)
            and getattr(node.right.func, "id", None) == "len" and node.right.args):
        return False
    arg = node.right.args[0]
    return getattr(arg, "id", None) in ("won", "winners") or getattr(getattr(arg, "func", None), "id", "") == "winners"


def shares_by_hand(node: ast.AST) -> bool:
    """``best / best.sum(...)`` or ``won / np.maximum(k, 1)``: win shares of a table of games computed by hand."""
    if not (isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div) and isinstance(node.left, ast.Name)
            and isinstance(node.right, ast.Call)):
        return False
    f = node.right.func
    return node.left.id in ("won", "best", "winners") and getattr(f, "attr", "") in ("maximum", "sum")


def test_win_shares_have_one_home_in_every_package():
    """No package defines a function of its own for win shares, or computes them over a table by hand."""
    assert shares_by_hand(ast.parse("best / best.sum(axis=1)", mode="eval").body)  # the check sees the old ones
    assert shares_by_hand(ast.parse("won / np.maximum(k, 1)", mode="eval").body)
    bad = [f"{m}:{n.lineno}" for m, tree in TREES.items() if m != "lama_env.rules" and m not in KERNELS
           for n in ast.walk(tree) if shares_by_hand(n)]
    bad += [f"{m}:{f.lineno} {f.name}" for m, tree in TREES.items() if m != "lama_env.rules"
            for f in _functions(tree) if f.name in ("win_shares", "win_shares_of_games", "winners")
            and not _names(f) - {f.name} & {"win_shares", "win_shares_of_games", "winners", "_winners", "win_result"}]
    assert not bad, f"win shares computed outside lama_env.rules: {bad}"


def test_one_entry_point_normalises_rules():
    """``RulesConfig.from_dict`` (keywords: ``from_keywords``, on top of it) turns a dict or None into rules."""
    bad = []
    for m, tree in TREES.items():
        if m == "lama_env.rules":
            continue
        for n in ast.walk(tree):
            if isinstance(n, ast.IfExp) and "RulesConfig" in _names(n.test) and "from_dict" in _names(n):
                bad.append(f"{m}:{n.lineno}")
    assert not bad, f"rules normalised by hand beside RulesConfig.from_dict: {bad}"


def test_one_function_computes_win_shares():
    """``rules.win_shares`` (and ``rules.win_rewards``) are the Python side's win shares, both from ``win_result``."""
    bad = [f"{m}:{n.lineno}" for m, tree in TREES.items() if m != "lama_env.rules" and m not in KERNELS
           for n in ast.walk(tree) if shares_a_win(n)]
    assert not bad, f"win shares computed outside lama_env.rules: {bad}"
    rules = {f.name: f for f in _functions(TREES["lama_env.rules"])}
    assert all("win_result" in _names(rules[f]) for f in ("winners", "win_shares", "win_rewards"))


def _kernel_functions() -> dict[str, ast.FunctionDef | ast.AsyncFunctionDef]:
    return {f"{m}.{f.name}": f for m in KERNELS for f in _functions(TREES[m])}


def derives_legal_discards(fn: ast.AST) -> bool:
    """Whether ``fn`` derives the legal discards.

    It does when it reads a roll's discard limits (``lim``) together with what makes a discard legal
    or names it (``must``, the discard tables ``dact``/``disc``).
    """
    names = _names(fn)
    return "lim" in names and bool(names & {"must", "dact", "disc"})


def derives_legal_takes(fn: ast.AST) -> bool:
    """Reads the dice and the llama row together (the row cards the dice show): the legal takes derived."""
    names = _names(fn)
    return "dice" in names and "row" in names


def test_one_compiled_function_derives_the_legal_actions():
    """``_kernel.legal`` is the compiled engines' one derivation of the legal actions.

    The mask (``write_mask``), the check (``_legal``), the forced action (``_next_decision``) and the native agents
    (random and table) enumerate them through it; a second function that reads the discard limits
    with the discard rules, or the dice with the row, derives them again.
    """
    funcs = _kernel_functions()
    found = {name: (derives_legal_discards(f), derives_legal_takes(f)) for name, f in funcs.items()
             if derives_legal_discards(f) or derives_legal_takes(f)}
    assert found == {"lama_env._kernel.legal": (True, True)}, f"legal actions derived outside _kernel.legal: {found}"
    users = {name.rsplit(".", 1)[1] for name, f in funcs.items() if "legal" in _names(f)}
    assert {"write_mask", "_legal", "_next_decision", "native_action"} <= users, users  # the forced action


#: Names of the arrays of final totals (the kernels' ``gs.tot``, ``fin``; the rules' ``totals``).
TOTALS = {"tot", "fin", "totals"}


def finds_the_fewest_points(fn: ast.AST) -> bool:
    """Whether ``fn`` finds the winners (and so the win shares).

    It does with a running minimum over totals (``if t < low: low = t``, ``t`` reading
    :data:`TOTALS`) or with ``min(totals)``.
    """
    for n in ast.walk(fn):
        if isinstance(n, ast.Call) and getattr(n.func, "id", None) == "min" and n.args and _names(n.args[0]) & TOTALS:
            return True
        if not (isinstance(n, ast.If) and isinstance(n.test, ast.Compare) and len(n.test.ops) == 1
                and isinstance(n.test.ops[0], (ast.Lt, ast.Gt))):
            continue
        small, big = n.test.left, n.test.comparators[0]
        if isinstance(n.test.ops[0], ast.Gt):
            small, big = big, small
        if not _names(small) & TOTALS:
            continue
        if any(isinstance(b, ast.Assign) and ast.unparse(b.value) == ast.unparse(small)
               and any(ast.unparse(t) == ast.unparse(big) for t in b.targets) for b in n.body):
            return True
    return False


def test_one_function_finds_the_winners_python_and_compiled():
    """``rules.win_result`` is the one text of the winners' shares and rewards: the kernels compile it.

    The vector env's win statistic (``stats_kernel``) calls its compiled form
    (``_kernel.win_result = njit(...)(rules.win_result)``), and the vector game's win rewards come
    from the episode step's ``episode.round_reward``, which calls it by name (``_kernel`` registers
    it as compilable, ``register_jitable``); a second running minimum of totals (or
    ``min(totals)``) in the engines finds the winners again.
    """
    scanned = [*KERNELS, "lama_env.rules", "lama_env.engine", "lama_env.batched", "lama_env.vector",
               "lama_env.vector_env", "lama_env.transitions"]
    found = sorted(f"{m}.{f.name}" for m in scanned for f in _functions(TREES[m]) if finds_the_fewest_points(f))
    assert found == ["lama_env.rules.win_result"], found
    compiled = [a for a in ast.walk(TREES["lama_env._kernel"]) if isinstance(a, ast.Assign)
                and isinstance(a.value, ast.Call) and isinstance(a.value.func, ast.Call)
                and getattr(a.value.func.func, "id", None) == "njit"]
    imported = {al.asname or al.name for i in ast.walk(TREES["lama_env._kernel"]) if isinstance(i, ast.ImportFrom)
                and i.module == "rules" for al in i.names if al.name == "win_result"}
    assert any(getattr(a.value.args[0], "id", None) in imported and getattr(a.targets[0], "id", None) == "win_result"
               for a in compiled), "lama_env._kernel does not compile rules.win_result as win_result"
    users = {name.rsplit(".", 1)[1] for name, f in _kernel_functions().items() if "win_result" in _names(f)}
    assert "stats_kernel" in users, users
    # the win rewards: the episode step's round_reward calls rules.win_result, compiled as itself (register_jitable)
    episode = {f.name: f for f in _functions(TREES["lama_env.episode"])}
    assert "win_result" in _names(episode["round_reward"])
    assert any(isinstance(c, ast.Call) and getattr(c.func, "id", None) == "register_jitable"
               and getattr(c.args[0], "id", None) in imported for c in ast.walk(TREES["lama_env._kernel"]))


# ---------------------------------------------------------------- one episode step (issue 31 item 2)
#: What an episode's end is decided from: the game's end, the ``episode`` setting, the ``max_rounds`` cut.
GAME_END = {"game_over", "GAME_OVER"}
EPISODE_SETTING = {"episode", "episode_round"}
#: Where an env keeps that its episode ended (the kernels' ``o.term``/``o.trunc``, the envs' flags and dicts).
EPISODE_FLAGS = {"term", "trunc", "terminated", "truncated", "_terminated", "_truncated", "terminations",
                 "truncations"}
#: The one function that decides it (and its compiled form, ``_vector_kernel.episode_end``).
EPISODE_STEP = "lama_env.episode.episode_end"
#: The one episode loop of the scalar envs (issue 50 item 3; the vector env's is its compiled ``_end_round``).
EPISODE_DRIVER = "lama_env.episode.advance"


def _flag(target: ast.AST) -> bool:
    """Whether an assignment target is an episode flag (``o.term[g]``, ``self._terminated``, ``terminations``)."""
    while isinstance(target, ast.Subscript):
        target = target.value
    return getattr(target, "id", getattr(target, "attr", None)) in EPISODE_FLAGS


def decides_an_episode_end(fn: ast.AST) -> list[int]:
    """The lines where ``fn`` decides an episode's end itself.

    * a comparison of ``max_rounds`` with something other than a constant (``rounds >= max_rounds``:
      the truncation; ``max_rounds < 1`` checks an option);
    * an ``or``/``and`` of the game's end with the ``episode`` setting (``game_over or episode == "round"``:
      the termination);
    * an episode flag set from the game's end, the setting or the cut: in its value, or under an ``if`` that
      reads them (``if g.game_over: terminated = True``).
    """
    hits: list[int] = []

    def visit(node: ast.AST, tests: set[str]) -> None:
        if isinstance(node, ast.Compare) and len(node.ops) == 1 and isinstance(
                node.ops[0], (ast.Lt, ast.LtE, ast.Gt, ast.GtE)):
            sides = [node.left, node.comparators[0]]
            if any("max_rounds" in _names(s) for s in sides) and not any(isinstance(s, ast.Constant) for s in sides):
                hits.append(node.lineno)
        if isinstance(node, ast.BoolOp) and _names(node) & GAME_END and _names(node) & EPISODE_SETTING:
            hits.append(node.lineno)
        if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            reads = tests | (_names(node.value) if node.value is not None else set())
            if any(_flag(t) for t in targets) and reads & (GAME_END | EPISODE_SETTING | {"max_rounds"}):
                hits.append(node.lineno)
        if isinstance(node, (ast.If, ast.While)):
            visit(node.test, tests)
            inner = tests | _names(node.test)
            for child in [*node.body, *node.orelse]:
                visit(child, inner)
            return
        for child in ast.iter_child_nodes(node):
            visit(child, tests)

    visit(fn, set())
    return sorted(set(hits))


def test_one_function_decides_an_episode_end():
    """``episode.episode_end`` is the one place where a round's end becomes the episode's end.

    Whether the episode is over (the game's end, ``episode="round"``) or cut (``max_rounds`` rounds) is
    decided by :func:`lama_env.episode.episode_end`; the Gymnasium env, the AEC env and the vector
    kernel's round end call it (the kernel its compiled form). A second function that compares a count
    with ``max_rounds``, combines the game's end with the ``episode`` setting, or sets a termination
    flag from them, decides it again.
    """
    found = {f"{m}.{f.name}": lines for m, tree in TREES.items() for f in _functions(tree)
             if (lines := decides_an_episode_end(f))}
    assert list(found) == [EPISODE_STEP], f"episode ends decided outside {EPISODE_STEP}: {found}"
    kernel = {f.name: f for f in _functions(TREES["lama_env._vector_kernel"])}
    assert {"episode_end", "round_reward"} <= _names(kernel["_end_round"])
    compiled = {a.targets[0].id: ast.unparse(a.value) for a in TREES["lama_env._vector_kernel"].body
                if isinstance(a, ast.Assign) and isinstance(a.targets[0], ast.Name)}
    assert compiled.get("episode_end") == "njit(cache=True)(_episode.episode_end)", compiled
    assert compiled.get("round_reward") == "njit(cache=True)(_episode.round_reward)", compiled
    # the scalar envs: through the one episode driver, which calls the episode step
    driver = {f.name: f for f in _functions(TREES["lama_env.episode"])}
    assert {"episode_end", "round_reward"} <= _names(driver[EPISODE_DRIVER.rsplit(".", 1)[1]])
    for env in ("lama_env.gym_env", "lama_env.lama_dice_v1"):
        names = _names(TREES[env])
        assert "advance" in names and not names & {"episode_end", "round_reward"}, env


def test_the_episode_check_sees_a_second_home():
    """The check finds each way of deciding an episode's end by hand (so the test above can fail)."""
    cases = {
        "def f(g, s):\n    if g.game_over or s.episode == 'round':\n        s.done = True\n": [2],
        "def f(g, s):\n    if g.round_index + 1 >= s.max_rounds:\n        s.done = True\n": [2],
        "def f(g, o):\n    if g.game_over:\n        o.term[0] = True\n": [3],
        "def f(g, s):\n    s._terminated = g.game_over\n": [2],
        "def f(x):\n    if x.max_rounds is not None and x.max_rounds < 1:\n        raise ValueError(x)\n": [],
        "def f(g):\n    while not g.game_over:\n        g.step(0)\n": [],
    }
    for src, lines in cases.items():
        assert decides_an_episode_end(ast.parse(src).body[0]) == lines, src


def loops_over_round_ends(fn: ast.AST) -> list[int]:
    """The lines of the loops in ``fn`` that watch a game's round ends: an episode loop.

    A ``while``/``for`` loop in which ``rounds_finished`` is compared with something (``g.rounds_finished
    != self._rounds_seen``: a round ended since the loop last looked; ``rounds_finished < rounds``).
    A comparison outside a loop (an env's fast path asking whether to call the driver, a step that reports
    the round it ended) is no loop.
    """
    return sorted({loop.lineno for loop in ast.walk(fn) if isinstance(loop, (ast.While, ast.For))
                   and any(isinstance(n, ast.Compare) and "rounds_finished" in _names(n) for n in ast.walk(loop))})


def calls_the_episode_step(fn: ast.AST) -> bool:
    """Whether ``fn`` calls the episode step (``episode_end``, ``round_reward``): it settles a round's end."""
    return any(isinstance(c, ast.Call) and getattr(c.func, "id", getattr(c.func, "attr", None))
               in ("episode_end", "round_reward") for c in ast.walk(fn))


def test_one_episode_driver():
    """The scalar envs advance an episode (round ends, rewards, the episode's end, forced decisions) in one loop.

    :func:`lama_env.episode.advance` is the one loop of ``lama_env`` over a game's round ends, and
    with the vector game's compiled round end (``_vector_kernel._end_round``, called by its step at each
    round's end) the one caller of the episode step; the Gymnasium env and the AEC env call the driver
    (their opponents and forced decisions through its ``act``).
    """
    found = {f"{m}.{f.name}": lines for m, tree in TREES.items() if m.startswith("lama_env")
             for f in _functions(tree) if (lines := loops_over_round_ends(f))}
    assert list(found) == [EPISODE_DRIVER], f"episode loops outside {EPISODE_DRIVER}: {found}"
    callers = sorted(f"{m}.{f.name}" for m, tree in TREES.items() for f in _functions(tree)
                     if calls_the_episode_step(f))
    assert callers == ["lama_env._vector_kernel._end_round", EPISODE_DRIVER], callers


def test_the_episode_driver_check_sees_a_second_loop():
    """The check finds the loops the envs had before the driver (so the test above can fail)."""
    gym_advance = (  # LamaDiceEnv._advance before issue 50 item 3
        "def _advance(self, g):\n"
        "    reward = 0.0\n"
        "    while True:\n"
        "        if g.rounds_finished != self._rounds_seen:\n"
        "            self._rounds_seen += 1\n"
        "            reward += self._round_end(g)\n"
        "            if self._done:\n"
        "                return reward\n"
        "            continue\n"
        "        legal = g.legal_actions()\n"
        "        g.step(self._policies[g.current_player].act(g, legal))\n")
    aec_settle = (  # raw_env._settle with _round_end inlined
        "def _settle(self, g):\n"
        "    while True:\n"
        "        if self._rounds_seen < g.rounds_finished:\n"
        "            self._rounds_seen += 1\n"
        "            end = episode_end(game_over(g.totals, self.rules), g.rounds_finished, False, 0)\n"
        "            continue\n"
        "        return\n")
    a_for_loop = ("def f(g, seen):\n    for a in g.legal_actions():\n"
                  "        if g.rounds_finished > seen:\n            break\n")
    fast_path = ("def _play(self, g, a):\n    g.step(a)\n"
                 "    if g.rounds_finished != self._book.rounds:\n        self._settle(g)\n")
    cases = {gym_advance: [3], aec_settle: [2], a_for_loop: [2], fast_path: [],
             "def f(g):\n    while not g.game_over:\n        g.step(0)\n": []}
    for src, lines in cases.items():
        assert loops_over_round_ends(ast.parse(src).body[0]) == lines, src
    round_end = (  # raw_env._round_end before issue 50 item 3: the episode step called beside the driver
        "def _round_end(self, g):\n"
        "    end = episode_end(game_over(g.totals, self.rules), g.rounds_finished, False, 0)\n"
        "    for p, a in enumerate(self._names):\n"
        "        self.rewards[a] += round_reward(True, False, g.totals, self._round_start, 2, p)\n")
    assert calls_the_episode_step(ast.parse(round_end).body[0])
    assert not calls_the_episode_step(ast.parse(fast_path).body[0])


#: The rules' step written as pure functions (lama_env.transitions): the reference every engine is
#: tested against, and the enumeration of the solvers (lama_dice.agents); never a game's step.
STEP_FUNCTIONS = {"apply_roll", "apply_discard", "apply_take", "apply_quit", "apply_bust", "score_round",
                  "cut_round", "next_player"}


def steps_a_game_in_python(tree: ast.AST) -> list[int]:
    """The lines where ``tree`` calls one of the reference's step functions."""
    return [n.lineno for n in ast.walk(tree) if isinstance(n, ast.Call)
            and getattr(n.func, "id", getattr(n.func, "attr", None)) in STEP_FUNCTIONS]


def test_one_step_plays_every_game():
    """One game state and one step: every game of lama_env is a record stepped by ``_kernel.transition_roll``.

    ``LamaGame`` (through ``lama_env._game``) and the vector game's kernels (the batched engine's too) call
    the compiled step; no module of lama_env steps a game with the reference's pure functions (only
    ``transitions`` itself defines them, for the tests and the solvers).
    """
    bad = [f"{m}:{line}" for m, tree in TREES.items() if m.startswith("lama_env") and m != "lama_env.transitions"
           for line in steps_a_game_in_python(tree)]
    assert not bad, f"a game stepped outside the compiled step: {bad}"
    callers = {m for m in TREES if m.startswith("lama_env") and any(
        isinstance(n, ast.Call) and getattr(n.func, "attr", None) in ("transition", "transition_roll")
        for n in ast.walk(TREES[m]))}
    assert callers == {"lama_env._game", "lama_env._vector_kernel"}, callers  # batched: _vector_kernel.batch_kernel
    engine = _names(TREES["lama_env.engine"])
    assert "_step" in engine and not engine & STEP_FUNCTIONS  # LamaGame: the compiled step, nothing else


def test_the_step_check_sees_a_python_step():
    """The detector flags a game stepped with the reference (the engine before its state was a record did)."""
    old = ast.parse("def step(self, a):\n    self._displays[p], ended = apply_discard(self._displays[p], a)\n"
                    "    pts, totals, over = score_round(self._displays, self._totals, None, self._rules)\n")
    assert steps_a_game_in_python(old) == [2, 3]
    assert not steps_a_game_in_python(ast.parse("x = transitions.chance_outcomes(rules)"))
