"""Agent files are data: a tampered checkpoint runs no code through any entry point that takes an agent spec.

A trainer checkpoint ``X.zip`` holds SB3's ``data`` JSON, whose ``:serialized:`` entries are
cloudpickles, and ``policy.pth``, a torch pickle.  Each test here plants, in every one of those
places, a pickle that creates a marker when it is unpickled, checks (the control) that
the plain unpickling loaders really do create the markers, and then loads the file through
``lama-dice evaluate``, ``gymnasium.make(..., opponents=[...])``, ``lama-dice play``,
``lama-dice solve --agents``, ``lama-dice train CONFIG --check`` with a ``ppo:`` opponent in
the YAML and ``lama-dice score``: no marker may appear, and an error, if any, is one line.
"""

from __future__ import annotations

import base64
import io
import json
import os
import pickle
import zipfile
from pathlib import Path

import pytest

gym = pytest.importorskip("gymnasium")
pytest.importorskip("sb3_contrib")

import lama_env  # noqa: E402  (registers LamaDice-v1)
from lama_dice.agents.ppo import write_sidecar  # noqa: E402
from lama_dice.agents.trust import ENV_VAR  # noqa: E402
from lama_dice.cli.main import main  # noqa: E402


class _Payload:
    """Unpickling this creates the folder ``path`` (``os.mkdir(path)``): proof that code ran."""

    def __init__(self, path: Path) -> None:
        self.path = str(path)

    def __reduce__(self):
        return (os.mkdir, (self.path,))


def _checkpoint(path: Path, num_players: int) -> Path:
    from sb3_contrib import MaskablePPO

    env = gym.make("LamaDice-v1", num_players=num_players, opponents=["random"] * (num_players - 1),
                   reward="points" if num_players == 1 else "win")
    model = MaskablePPO("MlpPolicy", env, n_steps=64, batch_size=32, seed=0, policy_kwargs={"net_arch": [8]},
                        device="cpu")
    model.save(path)
    write_sidecar(path, num_players=num_players, rules=lama_env.RulesConfig().to_dict(), config="test",
                  timesteps=0, policy=model.policy)
    return path


def _rewrite(src: Path, dst: Path, members: dict[str, bytes]) -> None:
    """Copy the archive ``src`` to ``dst`` with ``members`` replaced, and its sidecar alongside."""
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(dst, "w") as zout:
        for info in zin.infolist():
            zout.writestr(info, members.get(info.filename, zin.read(info)))
    dst.with_suffix(".json").write_bytes(src.with_suffix(".json").read_bytes())


def _tamper_data(src: Path, dst: Path, markers: Path) -> list[Path]:
    """Every ``:serialized:`` entry of ``data`` becomes a payload with its own marker; return the markers."""
    with zipfile.ZipFile(src) as z:
        data = json.loads(z.read("data"))
    planted = []
    for key, value in data.items():
        if isinstance(value, dict) and ":serialized:" in value:
            marker = markers / f"data-{key}"
            value[":serialized:"] = base64.b64encode(pickle.dumps(_Payload(marker))).decode()
            planted.append(marker)
    assert len(planted) >= 5  # policy_class, spaces, schedules...: SB3 serializes many entries
    _rewrite(src, dst, {"data": json.dumps(data).encode()})
    return planted


def _tamper_policy(src: Path, dst: Path, markers: Path) -> list[Path]:
    """``policy.pth`` becomes a torch file whose pickle opens the marker."""
    import torch

    marker = markers / "policy.pth"
    buf = io.BytesIO()
    torch.save({"mlp_extractor.policy_net.0.weight": _Payload(marker)}, buf)
    _rewrite(src, dst, {"policy.pth": buf.getvalue()})
    return [marker]


@pytest.fixture(scope="module")
def evil(tmp_path_factory) -> dict:
    """Tampered solo and two-player checkpoints (``data`` entries; ``policy.pth``) and their markers."""
    root = tmp_path_factory.mktemp("evil")
    markers = root / "markers"
    markers.mkdir()
    out: dict = {}
    for n in (1, 2):
        clean = _checkpoint(root / f"clean{n}.zip", n)
        out[n, "data"] = (root / f"data{n}.zip", _tamper_data(clean, root / f"data{n}.zip", markers))
        out[n, "policy"] = (root / f"policy{n}.zip", _tamper_policy(clean, root / f"policy{n}.zip", markers))
    return out


def test_the_payloads_do_run_when_unpickled(evil, tmp_path):
    """The control: SB3's loader and a plain torch.load run every planted payload (so the tests below can fail)."""
    import torch
    from stable_baselines3.common.save_util import load_from_zip_file

    path, planted = evil[2, "data"]
    load_from_zip_file(path, device="cpu")
    assert all(m.exists() for m in planted)
    path, planted = evil[2, "policy"]
    with zipfile.ZipFile(path) as z:
        torch.load(io.BytesIO(z.read("policy.pth")), weights_only=False)
    assert all(m.exists() for m in planted)
    for m in [*evil[2, "data"][1], *evil[2, "policy"][1]]:
        m.rmdir()


def _evaluate(path: Path, tmp: Path) -> int:
    return main(["evaluate", "--agents", f"ppo:{path}", "random", "--games", "2", "--no-progress"])


def _gym(path: Path, tmp: Path) -> int:
    import sys

    import numpy as np

    from lama_env.errors import LamaDiceError

    try:
        env = gym.make("LamaDice-v1", num_players=2, opponents=[f"ppo:{path}"])
        env.reset(seed=0)
        for _ in range(5):
            action = int(np.flatnonzero(env.unwrapped.action_masks())[0])
            _, _, terminated, truncated, _ = env.step(action)
            if terminated or truncated:
                break
        env.close()
    except LamaDiceError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    return 0


def _play(path: Path, tmp: Path) -> int:
    return main(["play", "--opponents", f"ppo:{path}", "--seed", "1"])


def _train_check(path: Path, tmp: Path) -> int:
    cfg = tmp / "cfg.yaml"
    cfg.write_text(f"name: t\nenv: {{num_players: 2}}\nopponents: ['ppo:{path}']\n", encoding="utf-8")
    return main(["train", str(cfg), "--check"])


def _score(path: Path, tmp: Path) -> int:
    return main(["score", f"ppo:{path}", "--tasks", "duel", "--games", "2", "--no-progress"])


def _solve(path: Path, tmp: Path) -> int:
    return main(["solve", "--agents", f"ppo:{path}", "--json"])


ENTRY_POINTS = {"evaluate": (_evaluate, 2), "gym.make": (_gym, 2), "play": (_play, 2),
                "train --check": (_train_check, 2), "score": (_score, 2), "solve --agents": (_solve, 1)}


@pytest.mark.parametrize("where", ["data", "policy"])
@pytest.mark.parametrize("entry", list(ENTRY_POINTS))
def test_tampered_checkpoint_runs_no_code(evil, entry, where, tmp_path, capsys, monkeypatch):
    monkeypatch.delenv(ENV_VAR, raising=False)
    monkeypatch.setattr("sys.stdin", io.StringIO("q\n" * 50))  # lama-dice play: the human quits at once
    run, players = ENTRY_POINTS[entry]
    path, planted = evil[players, where]
    rc = run(path, tmp_path)
    err = capsys.readouterr().err.strip()
    assert not [m.name for m in planted if m.exists()], "code in the checkpoint ran"
    if where == "data":  # the data entries are never read: the weights and the sidecar suffice
        assert rc == 0, err
    else:  # policy.pth is refused by torch's weights-only loader
        assert rc == 2
        assert "weights-only" in err and len(err.splitlines()) == 1
