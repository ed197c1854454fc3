"""The third hardening pass (issue 52): bounded inputs, safe text, atomic writes, and the semantics around them.

Each class of fault has one home (lama_env.reader and lama_dice.yaml_reader, lama_env.safetext, lama_dice.atomic);
these tests feed each home the inputs the issue found, and a Hypothesis property test feeds records, configs and
``--rule`` values at random: every answer is a correct result or a one-line LamaDiceError, never another exception.
"""

from __future__ import annotations

import builtins
import errno
import json
import os
import signal
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from conftest import discarded, random_moves
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lama_dice.atomic import WriteError, atomic_path, write_text
from lama_dice.cli.main import main
from lama_dice.cli.options import parse_rules
from lama_dice.cli.recordfile import load_record_file, parse_record_bytes, write_json_file
from lama_dice.yaml_reader import read_yaml
from lama_env import actions as A
from lama_env.engine import GameSetupError, LamaGame, Phase
from lama_env.errors import LamaDiceError
from lama_env.reader import MAX_DEPTH, MAX_INT, MAX_SEED, MAX_START_POINTS, InputError, check_seed, read_json
from lama_env.record import replay, with_about
from lama_env.rules import RulesConfig
from lama_env.safetext import safe_text
from lama_env.snapshot import StateFormatError, from_state, to_state

ROOT = Path(__file__).resolve().parents[1]


def _played(seed: int = 4, n: int = 2) -> LamaGame:
    g = LamaGame(n, seed=seed, game_id=0)
    rng = np.random.default_rng(seed)
    while not g.game_over:  # rounds flow: the step that ends one deals the next
        g.step(int(rng.choice(g.legal_actions())))
    return g


def _one_line(e: BaseException) -> str:
    text = str(e)
    assert isinstance(e, LamaDiceError) and text and "\n" not in text and len(text) < 1100, repr(text)
    return text


# ------------------------------------------------------------------ 1. the bounded reader
@pytest.mark.parametrize(("text", "words"), [
    ("1" * 5000, "an integer of 5,000 digits"),
    (str(MAX_INT + 1), "is too large"),
    ("[" * 5000 + "]" * 5000, f"nested more than {MAX_DEPTH} levels deep"),
    ("[" * 5000, f"nested more than {MAX_DEPTH} levels deep"),
    ('{"a": 1, "a": 2}', "the key 'a' is given twice"),
    ("NaN", "NaN is not a JSON number"),
    ("1e999", "out of range"),
    ("{", "invalid JSON at line 1 column 2"),
])
def test_read_json_refuses_in_one_line(text, words):
    with pytest.raises(InputError) as info:
        read_json(text, "x")
    assert words in _one_line(info.value)


def test_read_json_reads_the_bounds_themselves():
    assert read_json(f"[{MAX_INT}, {-MAX_INT}, 1.5]") == [MAX_INT, -MAX_INT, 1.5]
    assert read_json("[" * MAX_DEPTH + "]" * MAX_DEPTH) is not None


@pytest.mark.parametrize(("text", "words"), [
    ("a: " + "1" * 5000, "an integer of 5,000 characters"),
    ("a: " + "[" * 5000 + "]" * 5000, f"nested more than {MAX_DEPTH} levels deep"),
    ("a: 1\na: 2\n", "duplicate key 'a'"),
    ("a: .nan", "is not a finite number"),
    ("a: &a [*a]", "contains itself"),
    ("a: &a [1,1,1,1,1,1,1,1,1,1]\nb: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a,*a]\nc: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b,*b]\n"
     "d: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c,*c]\ne: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d,*d]\nf: [*e,*e,*e,*e,*e,*e,*e,*e,*e,*e]",
     "expands to more than"),
    ("a: !!python/object:os.system {}", "could not determine a constructor"),
])
def test_read_yaml_refuses_in_one_line(text, words):
    with pytest.raises(InputError) as info:
        read_yaml(text, "c.yaml")
    assert words in _one_line(info.value)


def test_read_yaml_keeps_merges_and_1e6():
    assert read_yaml("b: &b {x: 1, y: 2}\nc: {<<: *b, x: 3}\nn: 1e6\n") == {
        "b": {"x": 1, "y": 2}, "c": {"x": 3, "y": 2}, "n": 1e6}


@pytest.mark.parametrize("value", ["1" * 5000, "[" * 3000 + "]" * 3000, "[" * 3000, '{"a": 1, "a": 2}'])
def test_rule_values_the_reader_refuses_give_one_line_on_the_command_line(value, capsys):
    assert main(["play", "--rule", f"dice={value}", "--opponents", "random"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("lama-dice play: error: --rule 'dice': "), err
    assert "Traceback" not in err


def test_rule_values_still_read_plain_words_and_json():
    assert parse_rules(["triple_llama=also_match", "end_threshold=20", "must_discard=false"]) == RulesConfig(
        triple_llama="also_match", end_threshold=20, must_discard=False)


@pytest.mark.parametrize("text", ["seed: " + "9" * 5000 + "\n", "opponents: " + "[" * 3000 + "]" * 3000 + "\n",
                                  "seed: 1\nseed: 2\n"])
def test_a_config_the_reader_refuses_gives_one_line(tmp_path, text, capsys):
    pytest.importorskip("pydantic")
    path = tmp_path / "bad.yaml"
    path.write_text(text)
    assert main(["train", str(path), "--check"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"{path}: invalid YAML at line" in err and "Traceback" not in err, err


def test_a_config_fifo_is_refused_without_waiting(tmp_path, capsys):
    pytest.importorskip("pydantic")
    fifo = tmp_path / "config.yaml"
    os.mkfifo(fifo)
    assert main(["train", str(fifo), "--check"]) == 2
    assert "it is a FIFO, not a regular file" in capsys.readouterr().err


def test_a_record_repeating_a_key_is_refused():
    text = json.dumps(_played().to_record())
    assert load_record_file  # the file reader and the bytes reader give the same fault
    _, fault = parse_record_bytes(text[:-1].encode() + b', "players": 2}', "dup.json")
    assert fault == {"valid": False, "round": None, "turn": None,
                     "error": "not a game record: the key 'players' is given twice in one object"}


@pytest.mark.parametrize("points", [2_147_483_647, 2**31, 10**9 + 1])
def test_start_points_that_could_overflow_a_total_are_refused(points, tmp_path, capsys):
    rec = dict(_played().to_record(), start_points=[points, 0])
    result = replay(rec)
    assert not result["valid"] and result["error"].startswith("start_points must list 2 integers 0..1,000,000,000")
    path = tmp_path / "big.json"
    path.write_text(json.dumps(rec))
    assert main(["replay", str(path)]) == 1
    assert json.loads(capsys.readouterr().out) == result
    assert main(["show", str(path)]) == 1
    assert capsys.readouterr().err.count("\n") == 1


def test_start_points_at_the_bound_replay_with_totals_that_fit_32_bits():
    rec = _played().to_record()
    base = rec["start_points"]
    rec = dict(rec, start_points=[10**9, 0])
    result = replay(rec)
    # a start total at the threshold or above ends the game after its first round: the record may be longer
    assert result["valid"] or "round after the end of the game" in result["error"], result
    if result["valid"]:
        assert all(0 <= t < 2**31 for t in result["totals"]) and base == [0, 0]


@pytest.mark.parametrize("seed", [MAX_SEED + 1, -1])
def test_one_seed_bound_for_play_evaluate_the_engine_and_the_envs(seed, capsys):
    import gymnasium

    import lama_env  # noqa: F401  (registers LamaDice-v1)

    for argv in (["play", "--seed", str(seed)], ["evaluate", "--agents", "random", "random", "--seed", str(seed)]):
        with pytest.raises(SystemExit) as info:
            main(argv)
        assert info.value.code == 2 and "argument --seed: must be" in capsys.readouterr().err
    with pytest.raises(LamaDiceError, match=r"seed must be an integer 0\.\.2\*\*63 - 1"):
        LamaGame(2, seed=seed, game_id=0)
    env = gymnasium.make("LamaDice-v1", num_players=2, opponents=["random"])
    if seed > 0:  # (Gymnasium refuses a negative seed itself, before the env sees it)
        with pytest.raises(LamaDiceError, match=r"seed must be an integer 0\.\.2\*\*63 - 1"):
            env.reset(seed=seed)
    assert check_seed(MAX_SEED) == MAX_SEED
    env.reset(seed=MAX_SEED)
    LamaGame(2, seed=MAX_SEED, game_id=0)


# ------------------------------------------------------------------ 2. one safe-text function
@pytest.mark.parametrize(("raw", "shown"), [
    ("Ann", "Ann"), ("Zoë 😀", "Zoë 😀"), ("\x1b]0;title\x07\x1b[2J", "\\x1b]0;title\\x07\\x1b[2J"),
    ("a\nb\tc\rd", "a\\nb\\tc\\rd"), ("x\ud800y", "x\ufffdy"), ("\u202eevil", "\\u202eevil"),
    ("\x7f\x9b", "\\x7f\\x9b"),
    (17, "17"),
])
def test_safe_text(raw, shown):
    assert safe_text(raw) == shown
    safe_text(raw).encode("utf-8")  # always encodable


EVIL = ["\x1b]0;pwned\x07\x1b[2J[red]x[/]", "bad\nname\ud800"]


def _evil_record(tmp_path: Path) -> Path:
    rec = with_about(_played().to_record(), names=EVIL, version="1")
    path = tmp_path / "evil.json"
    path.write_text(json.dumps(rec))  # json escapes the lone surrogate: it reads back as one
    return path


def test_show_prints_no_control_code_of_a_record(tmp_path, capsys):
    path = _evil_record(tmp_path)
    assert main(["show", str(path)]) == 0
    out = capsys.readouterr().out
    assert "\x1b" not in out and "\x07" not in out and "\ud800" not in out
    assert "\\x1b]0;pwned\\x07\\x1b[2J[red]x[/]" in out and "bad\\nname\ufffd" in out


def test_show_gif_of_names_with_newlines_and_surrogates(tmp_path, capsys):
    pytest.importorskip("PIL")
    path = _evil_record(tmp_path)
    out = tmp_path / "evil.gif"
    assert main(["show", str(path), "--gif", str(out)]) == 0
    assert out.stat().st_size > 0 and "wrote" in capsys.readouterr().out


def test_the_web_app_shows_such_a_record(tmp_path):
    pytest.importorskip("fastapi")
    from fastapi.testclient import TestClient

    from lama_dice.cli.web.app import create_app

    with TestClient(create_app()) as c:
        r = c.post("/api/replay", content=_evil_record(tmp_path).read_bytes())
    assert r.status_code == 200, r.text
    assert r.json()["names"] == [safe_text(x) for x in EVIL]


# ------------------------------------------------------------------ 3. atomic writes
class _FullDisk:
    """``open`` for writing under ``folder`` that writes a few bytes, then fails as a full disk does."""

    def __init__(self, folder: Path) -> None:
        self.folder = str(folder)
        self.real = builtins.open

    def __call__(self, file, mode="r", *args, **kwargs):
        fh = self.real(file, mode, *args, **kwargs)
        if any(m in mode for m in "wax+") and str(file).startswith(self.folder):
            return _Failing(fh)
        return fh


class _Failing:
    def __init__(self, fh) -> None:
        self._fh = fh

    def write(self, data):
        self._fh.write(data[:3])
        self._fh.flush()
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    def __getattr__(self, name):
        return getattr(self._fh, name)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self._fh.close()


def _left(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir())


@pytest.mark.parametrize("old", [True, False])
def test_a_full_disk_leaves_the_old_file_and_no_partial_one(tmp_path, monkeypatch, old):
    target = tmp_path / "out.json"
    if old:
        target.write_text("old\n")
    monkeypatch.setattr(builtins, "open", _FullDisk(tmp_path))
    with pytest.raises(WriteError) as info:
        write_text(target, "new text\n")
    kept = "the old file was kept" if old else "nothing was written"
    assert _one_line(info.value) == f"cannot write {target}: No space left on device ({kept})"
    monkeypatch.undo()
    assert _left(tmp_path) == (["out.json"] if old else [])
    if old:
        assert target.read_text() == "old\n"


def test_atomic_path_keeps_the_suffix_and_cleans_up_after_any_error(tmp_path):
    with pytest.raises(KeyError), atomic_path(tmp_path / "plot.png") as tmp:
        assert tmp.suffix == ".png" and tmp.parent == tmp_path
        tmp.write_bytes(b"partial")
        raise KeyError("a bug half-way")
    assert _left(tmp_path) == []


def test_write_json_file_raises_the_commands_error(tmp_path, monkeypatch):
    class MyError(LamaDiceError):
        pass

    monkeypatch.setattr(builtins, "open", _FullDisk(tmp_path))
    with pytest.raises(MyError, match=r"\(nothing was written\)$"):
        write_json_file(str(tmp_path / "r.json"), {"a": 1}, MyError)
    monkeypatch.undo()
    assert _left(tmp_path) == []


def test_save_games_and_plot_on_a_full_disk(tmp_path, monkeypatch, capsys):
    pytest.importorskip("matplotlib")
    games, plot = tmp_path / "games", tmp_path / "plot.png"
    games.mkdir()
    plot.write_bytes(b"old plot")
    monkeypatch.setattr(builtins, "open", _FullDisk(tmp_path))
    assert main(["evaluate", "--agents", "random", "random", "--games", "4", "--save-games", str(games),
                 "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "No space left on device (nothing was written)" in err, err
    assert main(["evaluate", "--agents", "random", "random", "--games", "4", "--plot", str(plot),
                 "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert "No space left on device (the old file was kept)" in err, err
    monkeypatch.undo()
    assert _left(games) == [] and plot.read_bytes() == b"old plot" and _left(tmp_path) == ["games", "plot.png"]


def test_show_gif_on_a_full_disk_keeps_the_old_gif(tmp_path, monkeypatch, capsys):
    pytest.importorskip("PIL")
    record = tmp_path / "r.json"
    record.write_text(json.dumps(_played().to_record()))
    out = tmp_path / "o" / "game.gif"
    out.parent.mkdir()
    out.write_bytes(b"old gif")
    monkeypatch.setattr(builtins, "open", _FullDisk(out.parent))
    assert main(["show", str(record), "--gif", str(out)]) == 2
    err = capsys.readouterr().err
    assert err == f"lama-dice show: error: cannot write {out}: No space left on device (the old file was kept)\n"
    monkeypatch.undo()
    assert _left(out.parent) == ["game.gif"] and out.read_bytes() == b"old gif"


def test_a_checkpoint_save_that_fails_leaves_no_partial_zip(tmp_path):
    pytest.importorskip("torch")
    from lama_dice.train.callbacks import save_checkpoint

    class HalfSaved:
        num_timesteps = 7
        policy = None

        def save(self, path):
            Path(path).write_bytes(b"PK\x03\x04 half a zip")
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    (tmp_path / "best.zip").write_bytes(b"the old best")
    with pytest.raises(WriteError, match=r"best.zip: No space left on device \(the old file was kept\)$"):
        save_checkpoint(HalfSaved(), tmp_path / "best.zip", {"num_players": 2, "rules": {}, "config": "x"})
    assert _left(tmp_path) == ["best.zip"] and (tmp_path / "best.zip").read_bytes() == b"the old best"


# ------------------------------------------------------------------ 4. semantics
@pytest.mark.parametrize("value", [float("nan"), float("inf"), -float("inf"), "x"])
def test_a_reward_that_is_not_finite_is_refused(value):
    import gymnasium

    from lama_env.vector_env import LamaDiceVectorEnv

    with pytest.raises(LamaDiceError, match="illegal_reward must be a finite number"):
        gymnasium.make("LamaDice-v1", illegal_reward=value)
    with pytest.raises(LamaDiceError, match="illegal_reward must be a finite number"):
        LamaDiceVectorEnv(2, opponents=["random"], illegal_reward=value)


@pytest.mark.parametrize("value", [float("nan"), float("inf"), 0.0])
def test_a_reward_scale_that_is_not_finite_and_positive_is_refused(value):
    pytest.importorskip("stable_baselines3")
    from lama_dice.train.native_vec_env import NativeVecEnv

    with pytest.raises(LamaDiceError, match="reward_scale must be a finite number above 0"):
        NativeVecEnv(2, num_players=2, opponents=["random"], reward_scale=value)


def _web(tmp_path: Path, **kw):
    pytest.importorskip("fastapi")
    from fastapi.testclient import TestClient

    from lama_dice.cli.web.app import LOCAL_HOSTS, create_app

    return TestClient(create_app(allowed_hosts=LOCAL_HOSTS, **kw), base_url="http://127.0.0.1")


def test_records_and_results_with_names_that_are_not_utf8_are_skipped_with_the_reason(tmp_path):
    folder = os.fsencode(tmp_path)
    for name in (b"ok.json", b"bad\xff.json", b"line\n.json"):
        with open(os.path.join(folder, name), "w") as fh:
            fh.write(json.dumps(_played().to_record()))
    with _web(tmp_path, records=tmp_path, results=tmp_path) as c:
        listing = c.get("/api/records")
        results = c.get("/api/results")
        assert c.get("/api/records/ok.json").status_code == 200
    assert listing.status_code == 200 and results.status_code == 200
    reason = "the file name is not UTF-8 text or has control characters"
    assert listing.json()["files"] == ["ok.json"]
    assert listing.json()["skipped"] == [["bad\ufffd.json", reason], ["line\\n.json", reason]]
    assert [x for x in results.json()["skipped"] if x[1] == reason] == listing.json()["skipped"]


@pytest.mark.parametrize(("host", "status"), [
    ("evil.com@127.0.0.1", 400), ("user:pw@localhost:8000", 400), ("127.0.0.1/path", 400), ("localhost:99999", 400),
    ("127.0.0.1:8000", 200), ("[::1]:8000", 200), ("LOCALHOST", 200),
])
def test_host_values_with_userinfo_are_refused(tmp_path, host, status):
    with _web(tmp_path) as c:
        r = c.get("/api/info", headers={"Host": host})
    assert r.status_code == status, r.text


def test_sigterm_stops_training_as_ctrl_c_does(tmp_path):
    pytest.importorskip("sb3_contrib")
    import io

    from stable_baselines3.common.callbacks import BaseCallback

    from lama_dice.train.trainer import train

    class TermAt(BaseCallback):
        def _on_step(self) -> bool:
            if self.num_timesteps >= 600:
                os.kill(os.getpid(), signal.SIGTERM)  # as `kill PID` would
            return True

    before = signal.getsignal(signal.SIGTERM)
    out = io.StringIO()
    run = tmp_path / "run"
    result = train(ROOT / "configs" / "smoke.yaml", run_dir=run, total_timesteps=1200, progress_bar=False,
                   callbacks=[TermAt()], out=out)
    assert result.interrupted and result.checkpoint == run / "interrupted.zip" and result.checkpoint.is_file()
    assert "resume with: " in out.getvalue() and not (run / "final.zip").exists()
    assert signal.getsignal(signal.SIGTERM) == before  # the handler is the trainer's only while it learns
    assert not [p for p in run.rglob(".tmp*")]


# ------------------------------------------------------------------ 5. the property test
def _json_values() -> st.SearchStrategy:
    scalars = (st.none() | st.booleans() | st.integers(-(2**70), 2**70) | st.floats(allow_nan=False)
               | st.text(max_size=8))
    return st.recursive(scalars, lambda c: st.lists(c, max_size=4) | st.dictionaries(st.text(max_size=6), c,
                                                                                     max_size=4), max_leaves=12)


_RECORD_TEXT = json.dumps(_played(3).to_record())
_FRAGMENTS = ["[" * 3000, "]" * 3000, "9" * 5000, "NaN", '"players": 2, ', "\ud800", "\x00", "{", "}", ",", "1e999",
              '"start_points": [2147483647, 0], ', '"about": {"seed": 9223372036854775808}, ']


@st.composite
def _record_texts(draw) -> str:
    kind = draw(st.integers(0, 2))
    if kind == 0:  # a real record with text spliced in or cut out
        text = _RECORD_TEXT
        for _ in range(draw(st.integers(1, 3))):
            i = draw(st.integers(0, len(text)))
            j = draw(st.integers(i, min(len(text), i + 40)))
            text = text[:i] + draw(st.sampled_from(["", *_FRAGMENTS]) | st.text(max_size=6)) + text[j:]
        return text
    if kind == 1:  # a real record with one field replaced by any JSON value
        rec = json.loads(_RECORD_TEXT)
        key = draw(st.sampled_from(["players", "rules", "start_points", "rounds", "format", "about"]))
        rec[key] = draw(_json_values())
        return json.dumps(rec)
    return draw(st.sampled_from(_FRAGMENTS) | st.text(max_size=30))


_SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@_SETTINGS
@given(_record_texts())
def test_property_records_give_a_result_or_one_line(text):
    rec, fault = parse_record_bytes(text.encode("utf-8", "surrogatepass"), "r.json")
    result = fault if fault is not None else replay(rec)
    assert isinstance(result["valid"], bool)
    if result["valid"]:
        assert all(0 <= t < 2**31 for t in result["totals"])
    else:
        assert isinstance(result["error"], str) and "\n" not in result["error"] and len(result["error"]) <= 600


_CONFIG_LINES = ["seed: 3", "total_timesteps: 1e4", "opponents: [random]", "env: {num_players: 2}", "seed: 1",
                 "ppo: {learning_rate: .nan}", "policy: {net_arch: [64, 64]}", "x: " + "9" * 5000,
                 "opponents: " + "[" * 3000 + "]" * 3000, "a: &a [*a]", "eval: {seed: 9223372036854775808}",
                 "env: {rules: {end_threshold: 20}}", "\t", ":", "- 1", "'"]


@_SETTINGS
@given(st.lists(st.sampled_from(_CONFIG_LINES) | _json_values().map(lambda v: f"k: {json.dumps(v)}"), max_size=5))
def test_property_configs_give_a_config_or_one_line(tmp_path_factory, lines):
    pytest.importorskip("pydantic")
    from lama_dice.train.config import load_config

    path = tmp_path_factory.mktemp("cfg") / "c.yaml"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8", errors="surrogatepass")
    try:
        cfg = load_config(path, check_agents=False)
    except LamaDiceError as e:
        _one_line(e)
    else:
        assert 0 <= cfg.seed <= MAX_SEED


_RULE_KEYS = ["triple_llama", "must_discard", "end_threshold", "dice", "max_round_turns", "nope", ""]


@_SETTINGS
@given(st.lists(st.tuples(st.sampled_from(_RULE_KEYS),
                          st.sampled_from(["1" * 5000, "[" * 3000 + "]" * 3000, "also_match", "20", "true",
                                           "[[0,1,2,3,4,5],[0,1,2,3,4,5],[0,1,2,3,4,5]]", '{"a":1,"a":2}', "1e999"])
                          | _json_values().map(json.dumps) | st.text(max_size=12)),
                max_size=3))
def test_property_rule_values_give_rules_or_one_line(items):
    try:
        rules = parse_rules([f"{k}={v}" for k, v in items])
    except LamaDiceError as e:
        _one_line(e)
    else:
        assert isinstance(rules, RulesConfig)


# ------------------------------------------------------------------ 6. state strings and state records
def _random_play(g: LamaGame, seed: int, limit: int = 10_000) -> Iterator[LamaGame]:
    """:func:`conftest.random_moves` with uniformly random legal actions from NumPy's generator of ``seed``."""
    rng = np.random.default_rng(seed)
    return random_moves(g, lambda legal: int(rng.choice(legal)), limit)


def _played_states() -> list[str]:
    """Serialized states along a few played games: both chance modes, both triple-llama rules, with and without log."""
    out = []
    for seed in range(6):
        rules = {"triple_llama": "also_match"} if seed % 2 else None
        g = LamaGame(1 + seed % 4, rules, seed=seed, chance="explicit" if seed % 3 == 0 else "sampled",
                     record=seed != 4)
        out += [s.serialize() for k, s in enumerate(_random_play(g, seed)) if k % 7 == 0 or s.game_over]
    return out


_STATES = _played_states()


def _set_path(data: Any, path: tuple, value: Any) -> Any:
    node = data
    for k in path[:-1]:
        node = node[k]
    node[path[-1]] = value
    return data


def _a_turn_state() -> dict:
    """A two-player game under way, with its log: player 0 to roll or quit, cards discarded this round."""
    g = LamaGame(2, seed=5)
    rng = np.random.default_rng(5)
    while not (g.phase == Phase.TURN and g.current_player == 0 and any(discarded(g))):
        g.step(int(rng.choice(g.legal_actions())))
    return json.loads(g.serialize())


@pytest.mark.parametrize(("path", "value", "words"), [
    (("state", "tot", 0), 2**31, "state.tot must be an integer -2147483648..2147483647"),  # was OverflowError
    (("state", "tot", 0), 2**31 - 5, "state.tot must hold integers 0..2000000000"),
    (("log", -1), 7, "the log does not replay (action -1 is not an action"),  # a discard of no cards
    (("log", 0), 9, "bad log (corrupt trajectory log at 0: tag 9)"),
    (("log", 1), 2, "bad log (entry at 0 out of range"),  # a start player 0..1
    (("chance_node",), {"deal": 40}, "chance_node.deal must be an integer 0..11"),  # was accepted
    (("state", "row"), 0, "no decision to take: the row is empty"),  # was accepted, and every roll then busted
    (("state", "nturn"), 10**6, "state.nturn must hold integers 0..100"),
    (("state", "quit", 0), 1, "state.active must count the players who have not quit (1)"),
    (("state", "rstart", 0), 40, "state.rstart is not what the log replays to"),
    (("state", "stats", 0, 0), 99, "state.stats is not what the log replays to"),
    (("state", "nround"), 9, "state.nround is not what the log replays to"),
    (("over",), True, "over is not what the log replays to"),
    (("log",), None, "log must be a list"),
])
def test_deserialize_refuses_a_tampered_state_in_one_line(path, value, words):
    data = _a_turn_state()
    assert LamaGame.deserialize(json.dumps(data)).serialize() == json.dumps(data, sort_keys=True, separators=(",", ":"))
    with pytest.raises(StateFormatError) as info:
        LamaGame.deserialize(json.dumps(_set_path(data, path, value)))
    assert words in _one_line(info.value)


def test_deserialize_refuses_an_inconsistent_log():
    data = _a_turn_state()
    data["log"] += [1, "0"]
    with pytest.raises(StateFormatError) as info:
        LamaGame.deserialize(json.dumps(data))
    assert "log must be an integer -1..2000000000" in _one_line(info.value)
    data["log"][-1] = 0  # a quit of player 0 at player 0's turn: legal, but not the state's
    with pytest.raises(StateFormatError) as info:
        LamaGame.deserialize(json.dumps(data))
    assert "is not what the log replays to" in _one_line(info.value)
    data["log"][-2:] = [1, 1]  # a quit of player 1
    with pytest.raises(StateFormatError) as info:
        LamaGame.deserialize(json.dumps(data))
    assert "is not what the log replays to" in _one_line(info.value)


def test_from_state_refuses_totals_that_would_overflow_in_play():
    g = LamaGame(2, seed=1, record=False)
    rec = to_state(g)
    rec["tot"][0] = rec["rstart"][0] = 2**31 - 5  # would wrap to a negative total at the round's end
    with pytest.raises(StateFormatError) as info:
        from_state(rec, 2)
    assert "tot must hold integers 0..2000000000" in _one_line(info.value)


@pytest.mark.parametrize("points", [[MAX_START_POINTS + 1, 0], [2**31, 0], [-1, 0]])
def test_a_game_starts_within_the_start_points_bound(points):
    with pytest.raises(GameSetupError) as info:
        LamaGame(2, seed=0, start_points=points)
    assert f"start_points must list 2 integers 0..{MAX_START_POINTS:,}" in _one_line(info.value)
    g = LamaGame(2, seed=0, start_points=[MAX_START_POINTS, 0])
    assert g.totals == (MAX_START_POINTS, 0)


def _paths(d: Any, pre: tuple = ()) -> list[tuple]:
    items = d.items() if isinstance(d, dict) else enumerate(d) if isinstance(d, list) else ()
    out = []
    for k, v in items:
        out += [(*pre, k), *_paths(v, (*pre, k))]
    return out


_ANY = (st.none() | st.booleans() | st.integers(-(2**70), 2**70) | st.text(max_size=4)
        | st.sampled_from([2**31 - 1, 2**31, -1, 6, 7, 13, 36, 2**63, 1e308, "L", "roll", "quit", "deal"])
        | st.lists(st.integers(-3, 40), max_size=8))


@st.composite
def _state_texts(draw) -> str:
    text = draw(st.sampled_from(_STATES))
    kind = draw(st.integers(0, 3))
    if kind == 3:  # truncated
        return text[:draw(st.integers(0, len(text) - 1))]
    data = json.loads(text)
    for _ in range(draw(st.integers(1, 3))):
        path = draw(st.sampled_from(_paths(data)))
        node = data
        for k in path[:-1]:
            node = node[k]
        old = node[path[-1]]
        if kind == 0:  # any value
            node[path[-1]] = draw(_ANY)
        elif kind == 1 and type(old) is int:  # a number nudged
            node[path[-1]] = old + draw(st.integers(-3, 3).filter(bool))
        elif isinstance(node, dict):  # a field dropped
            del node[path[-1]]
        else:
            node.pop(path[-1])
    return json.dumps(data)


@_SETTINGS
@given(_state_texts(), st.integers(0, 2**32))
def test_property_state_strings_give_a_playable_game_or_one_line(text, seed):
    try:
        g = LamaGame.deserialize(text)
    except StateFormatError as e:
        _one_line(e)
        return
    for _ in _random_play(g, seed, 5000):  # the game plays on legally to its end, every reading working on the way
        g.result()
        g.observe(g.current_player)
    assert g.game_over and all(0 <= t < 2**31 for t in g.totals)
    assert LamaGame.deserialize(g.serialize()).serialize() == g.serialize()


def test_played_states_read_back_as_written():
    for text in _STATES:
        assert LamaGame.deserialize(text).serialize() == text


# ------------------------------------------------------------------ 7. result() where to_record ends
def test_a_pending_also_match_triple_llama_is_not_in_the_result():
    """The issue's case: the roll waits for its discard, its chip is returned, and the record ends before it."""
    g = LamaGame(1, {"triple_llama": "also_match"}, start_points=[14], hands=[["L", "3", "3", "5", "1", "6"]])
    g.step(A.ROLL, dice=["3", "3", "5"])
    g.step(A.discard_action((0, 0, 0, 2, 0, 0, 0)))
    g.step(A.ROLL, dice=["L", "L", "L"])
    assert g.phase == Phase.DISCARD and g.totals == (4,)  # the chip is returned at the roll
    assert g.result() == replay(g.to_record())
    assert g.result()["totals"] == [14]
    assert LamaGame.deserialize(g.serialize()).result() == g.result()
    g.step(A.discard_action((1, 0, 0, 0, 0, 0, 0)))
    assert g.result()["totals"] == [4] == replay(g.to_record())["totals"]


@_SETTINGS
@given(st.integers(1, 4), st.integers(0, 2**32), st.booleans(), st.booleans(), st.sampled_from(["sampled", "explicit"]))
def test_property_result_equals_the_replay_of_the_record_in_every_state(n, seed, llamas, must, chance):
    rules: dict[str, Any] = {"triple_llama": "also_match", "must_discard": must, "end_threshold": 25}
    if llamas:  # dice of mostly llamas: a triple llama every few rolls
        rules["dice"] = [["L", "L", "L", "1", "2", "3"]] * 3
    g = LamaGame(n, rules, seed=seed, start_points=[seed % 30] * n, chance=chance)
    for _ in _random_play(g, seed, 2000):
        rec = g.to_record()
        if rec["rounds"]:  # (a first deal under way has no record yet)
            assert g.result() == replay(rec)


# ------------------------------------------------------------------ 8. the envs' first decision
@pytest.mark.parametrize(("kw", "words"), [
    ({"episode": "round", "max_round_turns": 1}, "seats 1..2 never get a decision"),
    ({"episode": "round", "max_round_turns": 2, "learner_seat": 2}, "seat 2 never gets a decision"),
    ({"max_rounds": 1, "max_round_turns": 2}, "seat 2 never gets a decision"),
])
@pytest.mark.parametrize("vector", [False, True])
def test_an_env_whose_learner_could_never_act_is_refused_at_construction(kw, words, vector):
    import gymnasium

    from lama_env.options import LamaEnvError

    with pytest.raises(LamaEnvError) as info:
        if vector:
            gymnasium.make_vec("LamaDice-v1", num_envs=2, num_players=3, **kw)
        else:
            gymnasium.make("LamaDice-v1", num_players=3, **kw)
    assert words in _one_line(info.value)


def test_an_env_resets_in_every_setting_it_accepts():
    import gymnasium

    from lama_env.options import LamaEnvError

    for n in range(2, 5):
        for cap in range(1, n + 1):
            for seat in range(n):
                try:
                    env = gymnasium.make("LamaDice-v1", num_players=n, episode="round", max_round_turns=cap,
                                         learner_seat=seat)
                except LamaEnvError:
                    assert seat >= cap
                    continue
                _, info = env.reset(seed=seat)
                assert info["action_mask"].any() and env.unwrapped.game.current_player == seat
                if cap < n:
                    with pytest.raises(LamaEnvError, match="options\\['learner_seat'\\] below"):
                        env.reset(options={"learner_seat": n - 1})


def test_reset_plays_the_next_game_on_the_streams_when_the_learner_has_no_decision_in_game_0():
    """Seed 157: game 0's round busts before seat 2's first turn; the episode is the next game on the streams."""
    import gymnasium

    from lama_env.streams import Streams

    rules = {"dice": [["6"] * 6] * 3}  # every roll 6 6 6: a seat that neither holds nor can take a 6 busts
    env = gymnasium.make("LamaDice-v1", num_players=3, opponents=["random"], episode="round", learner_seat=2, **rules)
    env.reset(seed=157)
    streams = Streams.of_game(157, 0)
    games = []
    for _ in range(2):  # game 0 and the game after it, on the same streams, the opponents playing as the env's do
        g = LamaGame(3, rules, rng=streams, record=False, max_rounds=1)
        while not g.game_over and g.current_player != 2:
            g.step(g.sample_action())
        games.append(g)
    assert games[0].game_over and not games[1].game_over  # game 0: no decision for seat 2
    assert to_state(env.unwrapped.game).tobytes() == to_state(games[1]).tobytes()


@pytest.mark.parametrize("seed", [MAX_SEED + 1, -1, 1.5, True])
def test_the_vector_env_takes_the_one_seed_bound(seed):
    from lama_env.options import LamaEnvError
    from lama_env.vector_env import LamaDiceVectorEnv

    envs = LamaDiceVectorEnv(2)
    with pytest.raises(LamaEnvError) as info:
        envs.reset(seed=seed)
    assert "seed must be an integer 0..2**63 - 1" in _one_line(info.value)
    envs.reset(seed=MAX_SEED)  # the bound itself is a seed
