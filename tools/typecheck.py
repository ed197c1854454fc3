"""Run mypy on the package as it installs: ``python -m tools.typecheck`` (what ``make lint`` runs).

The repository keeps ``agents/``, ``train/``... at its top and ``pyproject.toml``'s
``[tool.setuptools.package-dir]`` maps them to ``lama_dice.agents``, ``lama_dice.train``...
mypy finds modules by folder, not by that mapping, so this copies the Python sources into
``build/typecheck/`` laid out as installed (``lama_dice/agents/...``), runs mypy there with the
project's configuration, and prints its messages with the repository's paths
(``agents/ppo.py:12: error: ...``).  The exit status is mypy's.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TREE = ROOT / "build" / "typecheck"
#: What is copied of each package folder (sources and the typing marker; no data).
PATTERNS = ("*.py", "*.pyi", "py.typed")


def package_dirs() -> dict[str, str]:
    """Installed folder (``lama_dice/agents``) -> repository folder (``agents``), from pyproject.toml."""
    conf = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]
    mapping = {name.replace(".", "/"): folder for name, folder in conf.get("package-dir", {}).items()}
    for name in conf["packages"]:  # the packages that are not mapped live at their own path
        top = name.split(".")[0]
        if top == name and name.replace(".", "/") not in mapping:
            mapping[name] = name
    return mapping


def build_tree() -> dict[str, str]:
    """Fill :data:`TREE` with the sources laid out as installed; return the folder mapping."""
    mapping = package_dirs()
    if TREE.exists():
        shutil.rmtree(TREE)
    for installed, folder in mapping.items():
        src = ROOT / folder
        for pattern in PATTERNS:
            for f in src.rglob(pattern):
                rel = f.relative_to(src)
                if "__pycache__" in rel.parts:
                    continue
                dst = TREE / installed / rel
                dst.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(f, dst)
    return mapping


def main() -> int:
    """Build the tree, run mypy in it, print its output with repository paths; return mypy's status."""
    mapping = build_tree()
    proc = subprocess.run([sys.executable, "-m", "mypy", "--config-file", str(ROOT / "pyproject.toml"),
                           "--cache-dir", str(ROOT / "build" / "mypy_cache")],
                          cwd=TREE, capture_output=True, text=True, check=False)
    # longest installed prefix first, so that lama_dice/agents/ wins over lama_dice/
    prefixes = sorted(mapping.items(), key=lambda kv: -len(kv[0]))
    pattern = re.compile("|".join(re.escape(k + "/") for k, _ in prefixes))
    repo = dict((k + "/", v + "/") for k, v in prefixes)
    for line in (proc.stdout + proc.stderr).splitlines():
        print(pattern.sub(lambda m: repo[m.group(0)], line, count=1) if pattern.match(line) else line)
    return proc.returncode


if __name__ == "__main__":
    sys.exit(main())
