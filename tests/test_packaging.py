"""The package builds the same on every checkout: no symlinks, every package folder mapped, a complete wheel.

``pyproject.toml`` maps the top-level folders (``agents/``, ``train/``...) into ``lama_dice`` with
setuptools' ``package-dir``.  The slow test builds the wheel from a fresh clone made with
``core.symlinks=false`` (what Windows and some CI caches give), installs it into a new venv and
runs ``lama-dice`` from another folder.  In an sdist (no git history) the git-based tests skip.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
SETUPTOOLS = PYPROJECT["tool"]["setuptools"]


def _git(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess:
    return subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, timeout=120, check=False)


def _in_git_checkout() -> bool:
    return shutil.which("git") is not None and _git("rev-parse", "--show-toplevel").returncode == 0


needs_git = pytest.mark.skipif(not _in_git_checkout(), reason="not a git checkout (an sdist)")


def _folder_of(package: str) -> Path:
    """The repository folder of ``package`` under the package-dir mapping."""
    mapping = SETUPTOOLS.get("package-dir", {})
    parts = package.split(".")
    for i in range(len(parts), 0, -1):
        head = ".".join(parts[:i])
        if head in mapping:
            return ROOT / mapping[head] / Path(*parts[i:])
    return ROOT / Path(*parts)


def test_every_package_folder_is_listed_and_mapped():
    packages = set(SETUPTOOLS["packages"])
    for package in packages:
        folder = _folder_of(package)
        assert folder.is_dir() and not folder.is_symlink(), f"{package}: {folder} is not a folder"
    # every folder of Python code under a mapped root is a listed package (else the wheel lacks it)
    for package in packages:
        for init in _folder_of(package).rglob("__init__.py"):
            rel = init.parent.relative_to(_folder_of(package))
            if "__pycache__" in rel.parts:
                continue
            sub = ".".join([package, *rel.parts]) if rel.parts else package
            assert sub in packages, f"{init.parent} is a package folder but {sub} is not in [tool.setuptools] packages"


@needs_git
def test_no_symlinks_in_the_repository():
    links = [line.split("\t", 1)[1] for line in _git("ls-files", "-s").stdout.splitlines()
             if line.startswith("120000 ")]
    assert links == []


@needs_git
@pytest.mark.packaging
def test_wheel_from_a_clone_without_symlinks_installs_and_runs(tmp_path):
    """Clone (core.symlinks=false), build the wheel, install it in a fresh venv, run lama-dice from elsewhere.

    The clone is of the last commit: uncommitted changes are not in it.
    """
    clone = tmp_path / "clone"
    proc = _git("clone", "-q", "-c", "core.symlinks=false", str(ROOT), str(clone), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    dist = tmp_path / "dist"
    # the test venv's setuptools builds it (no build isolation: nothing to download)
    proc = subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation",
                           "-w", str(dist), str(clone)], capture_output=True, text=True, timeout=600, check=False)
    assert proc.returncode == 0, proc.stderr[-2000:]
    (wheel,) = dist.glob("lama_dice-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    for must in ("lama_dice/agents/ppo.py", "lama_dice/cli/main.py", "lama_dice/train/rllib/trainer.py",
                 "lama_dice/evaluation/evaluate.py", "lama_dice/bench/suite.py", "lama_dice/configs/default.yaml",
                 "lama_dice/agents/pretrained/ppo_2p.safetensors", "lama_env/engine.py"):
        assert must in names, f"the wheel lacks {must}"
    assert any(n.endswith(".dist-info/licenses/LICENSE") for n in names)
    assert not [n for n in names if n.split("/")[0] in ("agents", "train", "evaluation", "cli", "bench", "configs")]

    _check_core_metadata(wheel)

    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
    bindir = venv / ("Scripts" if os.name == "nt" else "bin")
    py, exe = bindir / "python", bindir / "lama-dice"
    # the core: the wheel alone, with its dependencies (--no-compile: faster)
    (site,) = (venv / "lib").glob("python3*/site-packages") if os.name != "nt" else [venv / "Lib" / "site-packages"]
    empty = _tree_bytes(site)
    _ok(subprocess.run([str(py), "-m", "pip", "install", "-q", "--no-compile", str(wheel)],
                       capture_output=True, text=True, timeout=900, check=False))
    _check_documented_sizes(wheel.stat().st_size, _tree_bytes(site) - empty)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "LAMA_DICE_ALLOW_PICKLE")}

    def run(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess:
        return subprocess.run([str(a) for a in args], cwd=elsewhere, capture_output=True, text=True, timeout=600,
                              env=env, input=stdin, check=False)

    proc = _ok(run(py, "-c", "import importlib.util as u; print([m for m in ('torch', 'stable_baselines3', "
                             "'sb3_contrib', 'tensorboard') if u.find_spec(m)])"))
    assert proc.stdout.strip() == "[]", f"the core install brought {proc.stdout}"
    proc = _ok(run(exe, "--help"))
    assert "export" in proc.stdout
    proc = _ok(run(exe, "evaluate", "--agents", "ppo:2p", "random", "--games", "4", "--no-progress"))
    assert "ppo:2p" in proc.stdout
    proc = _ok(run(exe, "score", "threshold:0.2", "--games", "20", "--no-progress"))
    assert "solo" in proc.stdout and "duel" in proc.stdout
    proc = _ok(run(exe, "play", "--opponents", "ppo:2p", "--seed", "3", "--save", "game.json", stdin="q\n" * 400))
    assert (elsewhere / "game.json").is_file()
    proc = _ok(run(exe, "replay", "game.json"))
    assert '"valid": true' in proc.stdout
    _ok(run(exe, "show", "game.json"))
    for i, snippet in enumerate(_readme_env_snippets()):
        assert _ok(run(py, "-c", snippet)).returncode == 0, f"README env snippet {i}"
    proc = _ok(run(py, "-c", "import lama_dice.agents.ppo as m; print(m.__file__)"))
    assert str(venv) in proc.stdout, proc.stdout + proc.stderr
    # what needs the train extra says so in one line, with a command that works here (the wheel's path)
    proc = run(exe, "train", "default", "--check")
    err = proc.stderr.strip()
    assert proc.returncode == 2 and len(err.splitlines()) == 1, err
    assert "lama-dice train needs the train extra" in err and f"{wheel}[train]" in err, err
    # [train] brings training back (torch pinned first, as the Makefile does: never a multi-GB CUDA build)
    _ok(subprocess.run([str(py), "-m", "pip", "install", "-q", "--no-compile", f"{wheel}[train]", "torch==2.13.0"],
                       capture_output=True, text=True, timeout=900, check=False))
    proc = _ok(run(exe, "train", "default", "--check"))
    assert "total_timesteps" in proc.stdout


def _tree_bytes(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file() and not p.is_symlink())


#: How far a documented size may be from the one measured here (the dependencies' versions move).
SIZE_SLACK = 0.25


def _check_documented_sizes(wheel_bytes: int, core_bytes: int) -> None:
    """docs/performance.md's wheel and core install sizes (generated blocks) are those of the package now.

    The wheel's is exact but for what changed since (within :data:`SIZE_SLACK`); the core's (no bytecode)
    also depends on the dependencies' versions that pip resolved here.  Off by more: regenerate
    (``python -m tools.regen_docs --only wheel-size`` / ``--only install-size``).
    """
    text = (ROOT / "docs" / "performance.md").read_text(encoding="utf-8")
    wheel = re.search(r"^The wheel \(`[^`]+`\): ([\d.,]+) MB", text, re.M)
    core = re.search(r"^\| core \(the wheel alone\) \| ([\d.,]+) MB \|", text, re.M)
    assert wheel and core, "docs/performance.md lacks the wheel-size or install-size figures"
    for what, stated, actual, block in (("wheel", wheel, wheel_bytes, "wheel-size"),
                                        ("core install", core, core_bytes, "install-size")):
        mb = float(stated.group(1).replace(",", "")) * 1e6
        assert abs(mb - actual) <= SIZE_SLACK * actual, \
            f"docs/performance.md states the {what} at {stated.group(1)} MB, it is {actual / 1e6:.1f} MB here: " \
            f"python -m tools.regen_docs --only {block}"


def _ok(proc: subprocess.CompletedProcess) -> subprocess.CompletedProcess:
    assert proc.returncode == 0, (proc.stdout[-1500:], proc.stderr[-2000:])
    return proc


#: The learning stack, which only the train extra may require.
TRAIN_STACK = ("torch", "stable-baselines3", "sb3-contrib", "tensorboard")


def _check_core_metadata(wheel: Path) -> None:
    """The wheel's core requirements have none of the train stack; the train extra has all of it."""
    with zipfile.ZipFile(wheel) as z:
        (meta,) = [n for n in z.namelist() if n.endswith(".dist-info/METADATA")]
        lines = z.read(meta).decode().splitlines()
    reqs = [line.split(":", 1)[1].strip() for line in lines if line.startswith("Requires-Dist:")]

    def name(req: str) -> str:
        return re.split(r"[\s<>=!~;\[]", req, maxsplit=1)[0].lower().replace("_", "-")

    core = [r for r in reqs if "extra ==" not in r]
    train = [name(r) for r in reqs if re.search(r"extra\s*==\s*[\"']train[\"']", r)]
    assert core and not [r for r in core if name(r) in TRAIN_STACK], f"core requirements: {core}"
    assert sorted(train) == sorted(TRAIN_STACK), train


def _readme_env_snippets() -> list[str]:
    """The Python blocks of the README's environment quick start (its section:envs)."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split("<!-- section:envs -->", 1)[1].split("<!-- /section:envs -->", 1)[0]
    blocks = re.findall(r"^```python\n(.*?)^```", section, re.S | re.M)
    assert len(blocks) >= 2, "the README's section:envs has no Python blocks"
    return blocks


def test_the_build_is_quiet(tmp_path):
    """No setuptools warning about package data (``Package would be ignored``) while building the wheel."""
    proc = subprocess.run([sys.executable, "-m", "pip", "wheel", "-v", "--no-deps", "--no-build-isolation",
                           "-w", str(tmp_path), str(ROOT)], capture_output=True, text=True, timeout=600, check=False)
    assert proc.returncode == 0, proc.stderr[-2000:]
    out = proc.stdout + proc.stderr
    for bad in ("would be ignored", "BuildBackendWarning", "SetuptoolsDeprecationWarning"):
        assert bad not in out, f"the build printed {bad!r}"
    (wheel,) = tmp_path.glob("lama_dice-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    static = ROOT / "cli" / "web" / "static"
    for f in static.iterdir():
        assert f"lama_dice/cli/web/static/{f.name}" in names, f"the wheel lacks the web app's {f.name}"
    _check_core_metadata(wheel)


@needs_git
def test_sdist_holds_every_file_of_the_repository(tmp_path):
    """The sdist is the repository (what its tests read ships with them), built from a no-symlink clone."""
    clone = tmp_path / "clone"
    proc = _git("clone", "-q", "-c", "core.symlinks=false", str(ROOT), str(clone), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    proc = subprocess.run([sys.executable, "-c", "import sys; from setuptools import build_meta as b; "
                           "print(b.build_sdist(sys.argv[1]))", str(tmp_path / "dist")],
                          cwd=clone, capture_output=True, text=True, timeout=600, check=False)
    assert proc.returncode == 0, proc.stderr[-2000:]
    import tarfile

    (sdist,) = (tmp_path / "dist").glob("lama_dice-*.tar.gz")
    with tarfile.open(sdist) as tar:
        shipped = {m.name.split("/", 1)[1] for m in tar.getmembers() if m.isfile()}
    tracked = set(_git("ls-files", cwd=clone).stdout.splitlines())
    generated = {"PKG-INFO", "setup.cfg"}
    assert tracked - shipped == set(), "files of the repository missing from the sdist"
    assert {f for f in shipped - tracked if f not in generated and ".egg-info/" not in f} == set()
