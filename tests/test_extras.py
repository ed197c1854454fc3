"""The missing-extra message: one line naming the extra, with a command that works where the package is installed."""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

import pytest

from lama_env import extras
from lama_env.extras import EXTRA_MODULES, MissingExtraError, install_command, missing_extra, require_extra

ROOT = Path(__file__).resolve().parents[1]


def test_a_checkout_gets_an_editable_install_of_itself():
    cmd = install_command("web")
    assert cmd.endswith(f"pip install -e {shlex.quote(f'{ROOT}[web]')}"), cmd


def test_this_interpreters_pip(monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PATH", "/nonexistent")  # no pip on PATH: this interpreter's, by its path
    assert extras._pip() == f"{shlex.quote(str(Path(sys.executable).absolute()))} -m pip"


@pytest.fixture
def installed(monkeypatch):
    """As if installed in site-packages (not a checkout), with PEP 610's direct_url.json set by the test."""
    monkeypatch.setattr(extras, "_source_root", lambda: None)
    monkeypatch.setattr(extras, "_pip", lambda: "pip")
    url: dict = {}
    monkeypatch.setattr(extras, "_direct_url", lambda: url.get("data"))
    return url


def test_a_wheel_install_names_the_wheel_while_it_is_there(installed, tmp_path):
    wheel = tmp_path / "lama_dice-0.1.0-py3-none-any.whl"
    wheel.write_bytes(b"")
    installed["data"] = {"url": wheel.as_uri(), "archive_info": {}}
    assert install_command("train") == f"pip install '{wheel}[train]'"
    wheel.unlink()  # gone: the extra's packages by name, as the metadata states them
    cmd = install_command("web")
    assert cmd.startswith("pip install ") and "fastapi" in cmd and "uvicorn" in cmd and "lama-dice" not in cmd
    assert install_command("train") == ("pip install 'torch>=2.3' 'stable-baselines3>=2.3' 'sb3-contrib>=2.3' "
                                        "'tensorboard>=2.14'")


def test_an_install_from_a_folder_or_an_index(installed, tmp_path):
    installed["data"] = {"url": tmp_path.as_uri(), "dir_info": {}}
    assert install_command("web") == f"pip install '{tmp_path}[web]'"
    installed["data"] = None  # no direct_url.json: installed from a package index
    assert install_command("web") == "pip install 'lama-dice[web]'"


def test_the_train_extra_is_what_the_metadata_declares():
    import tomllib

    declared = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert extras.extra_packages("train") == declared["optional-dependencies"]["train"]  # the installed metadata's
    core = " ".join(declared["dependencies"])
    assert not [n for n in ("torch", "stable-baselines3", "sb3-contrib", "tensorboard") if n in core]


def test_require_extra_raises_one_line(monkeypatch):
    monkeypatch.setitem(EXTRA_MODULES, "train", ("lama_dice_no_such_module",))
    with pytest.raises(MissingExtraError) as e:
        require_extra("train", "lama-dice train")
    text = str(e.value)
    assert text.startswith("lama-dice train needs the train extra (lama_dice_no_such_module is not installed); "
                           "install it with: ") and text.endswith("[train]'") and "\n" not in text
    require_extra("web", "lama-dice serve")  # installed here: nothing raised
    assert isinstance(missing_extra("web", "x"), ImportError)  # code that catches ImportError still does


@pytest.mark.parametrize(("argv", "extra"), [(["train", "default"], "train"), (["curves", "runs/x"], "train"),
                                             (["exploit", "random", "--steps", "1"], "train"), (["serve"], "web")])
def test_commands_that_need_an_extra_say_which(monkeypatch, capsys, argv, extra):
    from lama_dice.cli.main import main

    monkeypatch.setitem(EXTRA_MODULES, extra, ("lama_dice_no_such_module",))
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1, err
    assert err.startswith(f"lama-dice {argv[0]}: error: lama-dice {argv[0]} needs the {extra} extra"), err
    assert f"install -e {shlex.quote(f'{ROOT}[{extra}]')}" in err


def test_a_trainer_checkpoint_without_torch_says_which_extra(monkeypatch, tmp_path):
    import zipfile

    from lama_dice.agents.registry import make_agent

    ckpt = tmp_path / "best.zip"
    with zipfile.ZipFile(ckpt, "w") as z:
        z.writestr("policy.pth", b"")
    (tmp_path / "best.json").write_text('{"format": "lama-dice-checkpoint/1", "network": {"kind": "mlp", '
                                        '"inputs": 52, "hidden": [8], "activation": "tanh", "outputs": 129}}')
    monkeypatch.setitem(EXTRA_MODULES, "train", ("lama_dice_no_such_module",))
    with pytest.raises(MissingExtraError, match=r"reading the trainer checkpoint .*best.zip needs the train extra"):
        make_agent(f"ppo:{ckpt}")
    make_agent("ppo:2p")  # an agent file needs no extra


def test_serve_help_says_how_to_install_the_web_extra_where_it_is_missing(monkeypatch, capsys):
    from lama_dice.cli.main import main

    monkeypatch.setitem(EXTRA_MODULES, "web", ("lama_dice_no_such_module",))
    with pytest.raises(SystemExit):
        main(["serve", "--help"])
    out = capsys.readouterr().out
    assert "The web extra is not installed; install it with: " in out and "[web]'" in out
    assert "pip install 'lama-dice[web]'" not in out


@pytest.mark.parametrize("platform", ["linux", "darwin"])
def test_the_train_hint_installs_the_cpu_build_of_torch_first_on_linux(installed, monkeypatch, platform):
    """Without torch, pip would resolve PyPI's multi-GB CUDA build on Linux: the hint installs the CPU build first."""
    import importlib.util

    find_spec = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "torch" else find_spec(name, *a))
    monkeypatch.setattr(sys, "platform", platform)
    installed["data"] = None
    cmd = install_command("train")
    if platform == "linux":
        assert cmd == (f"pip install 'torch>=2.3' --index-url {extras.TORCH_CPU_INDEX} && "
                       "pip install 'lama-dice[train]'")
        assert install_command("rllib").startswith("pip install 'torch>=2.3' --index-url ")
    else:  # elsewhere PyPI's torch is the CPU build
        assert cmd == "pip install 'lama-dice[train]'"
    assert install_command("web") == "pip install 'lama-dice[web]'"  # no torch in it
    monkeypatch.setattr(importlib.util, "find_spec", find_spec)  # torch installed: the extra alone
    assert install_command("train") == "pip install 'lama-dice[train]'"
