"""The package's optional parts (pip extras, :data:`EXTRA_MODULES`), and how to install one from where the user is.

Also :class:`AfterImport`, which acts once a module is first imported.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shlex
import shutil
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

from .errors import LamaDiceError

__all__ = ["EXTRA_MODULES", "TORCH_CPU_INDEX", "AfterImport", "MissingExtraError", "extra_packages",
           "install_command", "missing_extra", "require_extra"]

#: The distribution's name (``pip install NAME``).
DISTRIBUTION = "lama-dice"

#: The modules whose presence stands for each extra (the ones the code imports).
EXTRA_MODULES: dict[str, tuple[str, ...]] = {
    "train": ("torch", "stable_baselines3", "sb3_contrib", "tensorboard"),
    "web": ("fastapi", "uvicorn"),
    "rllib": ("ray",),
    "openspiel": ("pyspiel",),
    "render": ("pygame",),
    "bench": ("rlcard", "pygame"),
    "bench-pgx": ("jax", "pgx"),
    "docs": ("sphinx", "myst_parser"),
}

#: The extras that bring PyTorch (through the train extra).
TORCH_EXTRAS = ("train", "rllib")
#: PyTorch's package index of its CPU builds (on Linux, PyPI's torch is the multi-GB CUDA build).
TORCH_CPU_INDEX = "https://download.pytorch.org/whl/cpu"


class MissingExtraError(LamaDiceError, ImportError):
    """A feature that needs an extra which is not installed (the message says how to install it)."""


def missing_modules(extra: str) -> list[str]:
    """The modules of ``extra`` (:data:`EXTRA_MODULES`) that cannot be imported here."""
    return [mod for mod in EXTRA_MODULES[extra] if not _importable(mod)]


def _importable(mod: str) -> bool:
    try:
        return importlib.util.find_spec(mod) is not None
    except (ImportError, ValueError):  # a broken or half-installed package
        return False


def require_extra(extra: str, what: str) -> None:
    """Raise :class:`MissingExtraError` unless every module of ``extra`` imports (``what``: ``"lama-dice train"``)."""
    if missing := missing_modules(extra):
        raise missing_extra(extra, what, missing[0])


def missing_extra(extra: str, what: str, module: str | None = None,
                  error: type[MissingExtraError] = MissingExtraError) -> MissingExtraError:
    """The one-line error (of type ``error``) for ``what`` needing ``extra`` (``module``: the missing one, if known)."""
    gone = f" ({module} is not installed)" if module else ""
    return error(f"{what} needs the {extra} extra{gone}; install it with: {install_command(extra)}")


def _source_root() -> Path | None:
    """The checkout this package runs from (its ``pyproject.toml`` beside ``lama_env/``), or None."""
    root = Path(__file__).resolve().parent.parent
    try:
        text = (root / "pyproject.toml").read_text(encoding="utf-8")
    except OSError:
        return None
    return root if f'name = "{DISTRIBUTION}"' in text else None


def _distribution() -> Any:
    """The installed distribution holding this very package, else any or None."""
    from importlib.metadata import distributions

    here = Path(__file__).resolve()
    found = list(distributions(name=DISTRIBUTION))
    for dist in found:
        if any(f.name == "extras.py" and Path(str(dist.locate_file(f))).resolve() == here for f in dist.files or []):
            return dist
    root = here.parent.parent.as_uri()
    for dist in found:
        if root in (dist.read_text("direct_url.json") or ""):
            return dist
    return found[0] if found else None


def _direct_url() -> dict | None:
    """PEP 610's ``direct_url.json`` of the installed distribution (:func:`_distribution`), if any."""
    dist = _distribution()
    text = dist.read_text("direct_url.json") if dist is not None else None
    try:
        data = json.loads(text) if text else None
    except ValueError:
        return None
    return data if isinstance(data, dict) else None


def extra_packages(extra: str) -> list[str]:
    """The requirements ``extra`` adds, as the installed metadata states them (``torch>=2.3``...)."""
    dist = _distribution()
    reqs = [req.partition(";") for req in ((dist.requires or []) if dist is not None else [])]
    return [spec.strip() for spec, _, mark in reqs if mark.replace("'", '"').replace(" ", "") == f'extra=="{extra}"']


def _pip() -> str:
    """How to run this interpreter's pip from this shell: ``pip`` where ``PATH`` finds it, else ``PYTHON -m pip``."""
    here, found = Path(os.path.abspath(sys.executable)).parent, shutil.which("pip")
    exes = [here / name for name in ("pip", "pip.exe") if (here / name).is_file()]
    if found is not None and any(os.path.samefile(found, exe) for exe in exes):
        return "pip"
    python = os.path.abspath(sys.executable)  # not resolved: a venv's python is a link that must stay in the venv
    try:
        rel = os.path.relpath(python)
    except ValueError:  # another drive (Windows)
        rel = python
    return f"{shlex.quote(python if rel.startswith('..') else rel)} -m pip"


def install_command(extra: str) -> str:
    """A command that installs ``extra`` here: a checkout editable, else the wheel, the index or the packages.

    On Linux without torch, the CPU build of torch first (PyPI's is the CUDA build).
    """
    command = _install_extra(extra)
    if extra in TORCH_EXTRAS and sys.platform.startswith("linux") and not _importable("torch"):
        torch = next((p for p in extra_packages("train") if p.lower().startswith("torch")), "torch")
        return f"{_pip()} install {shlex.quote(torch)} --index-url {TORCH_CPU_INDEX} && {command}"
    return command


def _install_extra(extra: str) -> str:
    """:func:`install_command` without the CPU build of torch."""
    pip = _pip()
    root = _source_root()
    if root is not None:  # a checkout: an editable install, or the sources on sys.path
        return f"{pip} install -e {shlex.quote(f'{root}[{extra}]')}"
    direct = _direct_url()
    if direct is None:  # from a package index
        return f"{pip} install {shlex.quote(f'{DISTRIBUTION}[{extra}]')}"
    url = urlparse(str(direct.get("url", "")))
    path = Path(unquote(url.path)) if url.scheme == "file" else None
    if path is not None and path.exists():  # the wheel file or the folder it was installed from
        return f"{pip} install {shlex.quote(f'{path}[{extra}]')}"
    packages = extra_packages(extra) or EXTRA_MODULES[extra]  # as the metadata states them, else the modules
    return f"{pip} install {' '.join(shlex.quote(p) for p in packages)}"


class AfterImport:
    """A one-shot ``sys.meta_path`` hook: ``callback()`` once module ``name`` is first imported."""

    lama_env_hook = True  # marks the hooks of ``import lama_env`` (one at a time)

    def __init__(self, name: str, callback: Callable[[], None]) -> None:
        """Call ``callback()`` once module ``name`` is first imported (insert the hook in ``sys.meta_path``)."""
        self.name = name
        self.callback = callback

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> Any:
        """The spec the other finders give for ``name``, with a loader that calls ``callback`` after loading."""
        if fullname != self.name:
            return None
        if self in sys.meta_path:
            sys.meta_path.remove(self)  # one shot; and the look-up below asks the other finders
        spec: Any = importlib.util.find_spec(fullname)
        if spec is not None and spec.loader is not None and hasattr(spec.loader, "exec_module"):
            spec.loader = _CallbackLoader(spec.loader, self.callback)
        return spec


class _CallbackLoader:
    """Loads a module with ``loader``, gives the module that loader back, then calls ``callback()``."""

    def __init__(self, loader: Any, callback: Callable[[], None]) -> None:
        self.loader = loader
        self.callback = callback

    def create_module(self, spec: Any) -> Any:
        """The module the wrapped loader creates (None: the default)."""
        return self.loader.create_module(spec)

    def exec_module(self, module: Any) -> None:
        """Run the module with the wrapped loader (restored as its loader), then the callback."""
        module.__spec__.loader = module.__loader__ = self.loader
        self.loader.exec_module(module)
        self.callback()
