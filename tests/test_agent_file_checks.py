"""Agent files that are not what they claim: non-finite weights, zips and pickles renamed, sizes past the limits.

Each is refused in one line naming the problem, on load (``ppo:FILE``) and by ``lama-dice export``, which
then writes nothing.
"""

from __future__ import annotations

import json
import pickle
import zipfile
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("safetensors")

from safetensors.torch import load_file, save_file  # noqa: E402

from lama_dice.agents import agentfile  # noqa: E402
from lama_dice.agents.agentfile import (  # noqa: E402
    MAX_LAYER_SIZE,
    MAX_PARAMETERS,
    CheckpointError,
    read_description,
    write_agent_file,
)
from lama_dice.agents.ppo import PRETRAINED_DIR  # noqa: E402
from lama_dice.agents.registry import make_agent  # noqa: E402
from lama_dice.cli.main import main  # noqa: E402

SHIPPED = PRETRAINED_DIR / "ppo_2p.safetensors"


def _refused(path: Path, *phrases: str) -> str:
    """The one-line refusal of ``ppo:PATH``, which must hold every phrase."""
    with pytest.raises(CheckpointError) as info:
        make_agent(f"ppo:{path}")
    msg = str(info.value)
    assert "\n" not in msg and all(p in msg for p in phrases), msg
    return msg


def _copy_with(tmp_path: Path, name: str, change_tensors=None, change_description=None) -> Path:
    """The shipped ppo:2p file written again with its tensors and/or description changed."""
    tensors = load_file(str(SHIPPED))
    desc = read_description(SHIPPED)
    if change_tensors:
        change_tensors(tensors)
    if change_description:
        change_description(desc)
    out = tmp_path / name
    save_file(tensors, str(out), metadata={"lama_dice": json.dumps(desc)})
    return out


@pytest.mark.parametrize("value, word", [(float("nan"), "NaN"), (float("inf"), "infinite"),
                                         (float("-inf"), "infinite")])
def test_non_finite_weights_are_refused_on_load_and_by_export(tmp_path, capsys, value, word):
    def poison(t):
        t["hidden.1.weight"][3, :5] = value

    bad = _copy_with(tmp_path, "bad.safetensors", change_tensors=poison)
    msg = _refused(bad, "weights are not all finite", "tensor hidden.1.weight", "plays nonsense")
    assert ("holds 5 NaN" if word == "NaN" else "0 NaN and 5 infinite") in msg
    out = tmp_path / "out.safetensors"
    assert main(["export", f"ppo:{bad}", str(out)]) == 2
    err = capsys.readouterr().err
    assert "not all finite" in err and len(err.strip().splitlines()) == 1, err
    assert "does not reproduce" not in err and not out.exists()
    out.write_text("mine")  # a file the user has is never replaced by a refused export, --force or not
    assert main(["export", f"ppo:{bad}", str(out), "--force"]) == 2
    assert "not all finite" in capsys.readouterr().err and out.read_text() == "mine"


def test_writing_a_network_with_non_finite_weights_is_refused(tmp_path):
    """write_agent_file (what export writes with, from any source: SB3, RLlib) refuses them too; nothing written."""
    tensors = load_file(str(SHIPPED))
    tensors["logits.bias"][0] = float("nan")
    out = tmp_path / "w.safetensors"
    with pytest.raises(CheckpointError, match=r"tensor logits.bias holds 1 NaN"):
        write_agent_file(out, read_description(SHIPPED), tensors)
    assert not out.exists() and not list(tmp_path.iterdir())


def test_a_checkpoint_with_non_finite_weights_is_refused_and_does_not_export(tmp_path, capsys):
    gym = pytest.importorskip("gymnasium")
    sb3 = pytest.importorskip("sb3_contrib")

    import lama_env
    from lama_dice.agents.ppo import write_sidecar

    env = gym.make("LamaDice-v1", num_players=2, opponents=["random"])
    model = sb3.MaskablePPO("MlpPolicy", env, n_steps=32, batch_size=32, policy_kwargs={"net_arch": [8]})
    with torch.no_grad():
        model.policy.action_net.weight[0, 0] = float("inf")
    ckpt = tmp_path / "inf.zip"
    model.save(ckpt)
    write_sidecar(ckpt, num_players=2, rules=lama_env.RulesConfig().to_dict(), config="t", timesteps=0,
                  policy=model.policy)
    _refused(ckpt, f"checkpoint {ckpt}", "not all finite", "logits.weight")
    out = tmp_path / "inf.safetensors"
    assert main(["export", f"ppo:{ckpt}", str(out)]) == 2
    err = capsys.readouterr().err
    assert "not all finite" in err and len(err.strip().splitlines()) == 1 and not out.exists()


def test_a_zip_or_a_pickle_renamed_is_named_as_such(tmp_path):
    z = tmp_path / "checkpoint.safetensors"
    with zipfile.ZipFile(z, "w") as f:  # what an SB3 checkpoint is
        f.writestr("data", "{}")
        f.writestr("policy.pth", b"")
    _refused(z, "is a zip archive, not a safetensors file", "trainer checkpoint renamed?", "ppo:X.zip")
    p = tmp_path / "policy.safetensors"
    p.write_bytes(pickle.dumps({"weights": [1.0, 2.0]}, protocol=4))
    _refused(p, "is a Python pickle, not a safetensors file", "nothing of it ran")
    legacy = tmp_path / "legacy.safetensors"  # torch.save's legacy (non-zip) format is a pickle too
    torch.save({"w": torch.zeros(2)}, legacy, _use_new_zipfile_serialization=False)
    _refused(legacy, "is a Python pickle")
    modern = tmp_path / "modern.safetensors"  # and its default format a zip
    torch.save({"w": torch.zeros(2)}, modern)
    _refused(modern, "is a zip archive")
    for name, data in (("empty.safetensors", b""), ("text.safetensors", b"hello, I am not an agent file")):
        (tmp_path / name).write_bytes(data)
        _refused(tmp_path / name, "is not a safetensors file")
    # the refusals happen before anything is read as safetensors: the shipped file still loads
    assert make_agent(f"ppo:{SHIPPED}").num_players == 2


@pytest.mark.parametrize("hidden, phrase", [
    ([1e9, 1e9], "1000000000.0 is not an integer"),
    ([100_000, 100_000], f"100,000 is not from 1 to {MAX_LAYER_SIZE:,}"),
    ([60_000, 60_000], f"parameters, more than {MAX_PARAMETERS:,}"),
    ([8] * 65, "65 hidden layers, more than 64"),
    ([0, 128], "0 is not from 1 to"),
    ("128", "not a list of layer sizes"),
])
def test_size_limits_of_the_description_are_said_with_their_reason(tmp_path, hidden, phrase):
    def describe(d):
        d["network"]["hidden"] = hidden

    bad = _copy_with(tmp_path, "big.safetensors", change_description=describe)
    _refused(bad, "network hidden sizes", phrase, "at most 64 hidden layers of 1 to 65,536 units",
             f"{MAX_PARAMETERS:,} parameters", "so that no config or agent file can make lama-dice allocate more")


def test_a_file_larger_than_any_agent_file_is_refused_before_reading(tmp_path, monkeypatch):
    copy = tmp_path / "copy.safetensors"
    copy.write_bytes(SHIPPED.read_bytes())
    monkeypatch.setattr(agentfile, "MAX_FILE_BYTES", copy.stat().st_size - 1)
    _refused(copy, f"is {copy.stat().st_size:,} bytes, more than any agent file holds")
