"""Pictures of the table: ``render_mode="rgb_array"`` / ``"human"``, record animations, ``show --gif``.

Correctness only (shapes, dtypes, determinism, that states differ, what the writers write);
never timing: ``lama-dice bench --only render`` measures speed.
"""

from __future__ import annotations

import io
import json
import os
import random
import stat
import sys
from pathlib import Path

import gymnasium
import numpy as np
import pytest

import lama_env
from lama_dice.animation import EncoderError, Frame, record_frames, write_gif, write_mp4
from lama_dice.cli.main import main
from lama_env import actions as A
from lama_env import lama_dice_v1
from lama_env.engine import LamaGame
from lama_env.picture import TablePicture, frame_shape, picture
from lama_env.record import RecordError
from lama_env.roundend import turns

EXAMPLES = json.loads((Path(__file__).resolve().parent / "data" / "examples.json").read_text())
LEGAL = [c for c in EXAMPLES if c["expect"]["valid"]]
ILLEGAL = [c for c in EXAMPLES if not c["expect"]["valid"]]


def random_states(n: int, count: int, seed: int = 0) -> list[LamaGame]:
    rng = random.Random(seed)
    g = LamaGame(n, seed=seed)
    out = []
    while len(out) < count:
        out.append(g.clone())
        if g.game_over:
            g = LamaGame(n, seed=seed + len(out))
        else:
            g.step(rng.choice(g.legal_actions()))
    return out


# ------------------------------------------------------------------ the picture
@pytest.mark.parametrize("n", range(1, 7))
def test_shape_and_dtype_are_fixed_per_player_count(n):
    shapes = {picture(g).shape for g in random_states(n, 60, seed=n)}
    assert shapes == {frame_shape(n)}
    assert frame_shape(n)[1] == 640 and frame_shape(n)[0] % 2 == 0  # even: MP4 (yuv420p) needs it
    assert picture(LamaGame(n, seed=0)).dtype == np.uint8
    assert frame_shape(2) == (360, 640, 3)


def test_deterministic_and_a_pure_function_of_the_state():
    states = random_states(3, 80, seed=4)
    first = [picture(g) for g in states]
    fresh = TablePicture(3)  # another instance: the same pictures
    for g, im in zip(states, first, strict=True):
        assert np.array_equal(im, fresh(g.clone()))
        assert np.array_equal(im, picture(g))
    again = picture(states[10])
    again[:] = 0  # the caller owns the array: changing it changes no later picture
    assert np.array_equal(picture(states[10]), first[10])


def test_different_states_give_different_pictures():
    g = LamaGame(2, hands=[["1", "1", "2", "2", "3", "L"], ["4", "4", "5", "5", "6", "6"]])
    before = picture(g)
    g.step(A.ROLL, dice=["1", "4", "5"])  # a pending discard: dice shown, matching cards outlined
    rolled = picture(g)
    g.step(A.discard_action((0, 1, 0, 0, 0, 0, 0)))
    after = picture(g)
    assert not np.array_equal(before, rolled) and not np.array_equal(rolled, after)
    assert not np.array_equal(after, picture(g, dice=["1", "4", "5"]))  # the dice just rolled
    assert not np.array_equal(after, picture(g, caption="P0 discards 1"))
    assert not np.array_equal(after, picture(g, ["ann", "bob"]))
    assert not np.array_equal(after, picture(g, highlight=1))
    states = random_states(2, 200, seed=1)
    distinct = {picture(s).tobytes() for s in states}
    keys = {(s.round_index, s.phase, s.current_player, s.displays, s.row, s.dice, s.quit, s.totals,
             turns(s)) for s in states}
    assert len(distinct) == len(keys)  # different states, different pictures


def test_a_picture_is_for_one_player_count_and_names_fit():
    with pytest.raises(ValueError, match="for 2 players"):
        TablePicture(2)(LamaGame(3, seed=0))
    with pytest.raises(ValueError, match="2 names"):
        TablePicture(2, ["only one"])
    long = picture(LamaGame(2, seed=0), ["x" * 200, "y" * 200])  # cut short, still the same size
    assert long.shape == frame_shape(2)


def test_game_over_and_quit_states_draw():
    g = LamaGame(3, seed=2)
    g.step(A.QUIT)
    quit_pic = picture(g)
    while not g.game_over:
        g.step(A.QUIT if A.QUIT in g.legal_actions() else g.legal_actions()[0])
    assert picture(g).shape == quit_pic.shape == frame_shape(3)


# ------------------------------------------------------------------ the environments
def test_a_rounds_end_draws_as_the_table_stood():
    """Rounds flow on: a step that ends a round deals the next; the pictures draw the ended round's table."""
    from lama_env.picture import render_text, seat_tag, status_text
    from lama_env.roundend import step_with_round_end

    g = LamaGame(2, hands=[list("111222"), list("333444")], seed=0)
    g.step(A.QUIT)  # seat 0 quits: seat 1 is the last one in
    before = picture(g)
    end = step_with_round_end(g, A.ROLL, ["1", "5", "1"])  # no 3 or 4: a bust
    assert end is not None and g.round_index == 1 and g.rounds_finished == 1  # the game has dealt round 2
    names = ["P0", "P1"]
    assert status_text(end, names) == "Round over: P1 went bust" and seat_tag(end, 1) == "bust"
    assert "round over (bust)" in render_text(end, names) and "[bust]" in render_text(end, names)
    drawn = picture(end)
    assert drawn.shape == before.shape and not np.array_equal(drawn, before)
    assert not np.array_equal(drawn, picture(g))  # not the next round's deal
    assert end.row == (0,) * 7 and end.displays[1] == (1, 1, 1, 4, 4, 1, 1)  # 333444 and the whole row
    assert step_with_round_end(g, A.QUIT) is None  # a step that ends no round


def test_gym_rgb_array_and_check_env():
    from gymnasium.utils.env_checker import check_env

    env = gymnasium.make("LamaDice-v1", num_players=3, render_mode="rgb_array")
    assert env.metadata["render_modes"] == ["human", "ansi", "rgb_array"] and env.metadata["render_fps"] > 0
    assert env.render_mode == "rgb_array"
    _obs, info = env.reset(seed=0)
    frame = env.render()
    assert isinstance(frame, np.ndarray) and frame.shape == frame_shape(3) and frame.dtype == np.uint8
    env.step(int(np.flatnonzero(info["action_mask"])[0]))
    assert env.render().shape == frame_shape(3)
    env.close()
    with pytest.warns() as caught:
        check_env(gymnasium.make("LamaDice-v1", render_mode="rgb_array").unwrapped)
    assert not [w for w in caught if "render" in str(w.message).lower()]


def test_sb3_make_vec_env_gets_rgb_array_frames():
    from stable_baselines3.common.env_util import make_vec_env

    vec = make_vec_env("LamaDice-v1", n_envs=2, seed=0)
    assert vec.render_mode == "rgb_array"
    vec.reset()
    images = vec.get_images()
    assert len(images) == 2 and all(im.shape == frame_shape(2) for im in images)
    vec.close()


def test_pettingzoo_rgb_array_and_render_test(capsys):
    from pettingzoo.test import render_test

    env = lama_dice_v1.env(num_players=4, render_mode="rgb_array")
    env.reset(seed=0)
    assert env.render().shape == frame_shape(4)
    env.close()
    render_test(lambda render_mode=None: lama_dice_v1.env(num_players=2, render_mode=render_mode))


def test_record_video_accepts_the_env(tmp_path):
    pytest.importorskip("moviepy")
    from gymnasium.wrappers import RecordVideo

    env = RecordVideo(gymnasium.make("LamaDice-v1", episode="round", render_mode="rgb_array"), str(tmp_path),
                      episode_trigger=lambda _: True, disable_logger=True)
    _obs, info = env.reset(seed=0)
    done = False
    while not done:
        _obs, _r, term, trunc, info = env.step(int(np.flatnonzero(info["action_mask"])[0]))
        done = term or trunc
    env.close()
    assert list(tmp_path.glob("*.mp4"))


def _no_display(monkeypatch):
    for var in ("DISPLAY", "WAYLAND_DISPLAY", "SDL_VIDEODRIVER"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setattr(sys, "platform", "linux")


def test_human_mode_without_a_display_prints_the_text_table(monkeypatch, capsys):
    _no_display(monkeypatch)
    env = gymnasium.make("LamaDice-v1", render_mode="human")
    env.reset(seed=0)
    assert "learner*" in capsys.readouterr().out
    assert env.render() is None and "llama row" in capsys.readouterr().out
    env.close()
    aec = lama_dice_v1.env(num_players=2, render_mode="human")
    aec.reset(seed=0)
    aec.step(A.ROLL)
    assert "player_0" in capsys.readouterr().out
    aec.close()


def test_human_mode_opens_a_pygame_window_with_a_video_driver(monkeypatch, capsys):
    pytest.importorskip("pygame")
    monkeypatch.setenv("SDL_VIDEODRIVER", "dummy")
    monkeypatch.setenv("PYGAME_HIDE_SUPPORT_PROMPT", "1")
    for make in (lambda: gymnasium.make("LamaDice-v1", render_mode="human").unwrapped,
                 lambda: lama_dice_v1.raw_env(num_players=2, render_mode="human")):
        env = make()
        env.metadata = {**env.metadata, "render_fps": 1000}  # no waiting between frames in a test
        env.reset(seed=0)
        assert env.render() is None
        assert env._view is not None and env._view.is_open
        assert capsys.readouterr().out == ""  # the picture went to the window, not the terminal
        env.close()
        assert not env._view.is_open


# ------------------------------------------------------------------ animations
def _frame_count(rec: dict) -> int:
    """One frame per deal, quit and roll, and one more per roll that asked a discard or take."""
    return sum(1 + sum(1 + ("discard" in t or "take" in t) for t in r["turns"]) for r in rec["rounds"])


@pytest.mark.parametrize("case", LEGAL, ids=[c["name"] for c in LEGAL])
def test_record_frames_one_per_deal_roll_and_decision(case):
    rec = case["record"]
    frames = list(record_frames(rec))
    assert len(frames) == _frame_count(rec)
    shape = frame_shape(rec["players"])
    assert all(isinstance(f, Frame) and f.image.shape == shape and f.image.dtype == np.uint8 for f in frames)
    assert frames[0].hold  # the deal
    assert sum(f.hold for f in frames) >= len(rec["rounds"])
    assert all(np.array_equal(a.image, b.image) for a, b in zip(frames, record_frames(rec), strict=True))


@pytest.mark.parametrize("case", ILLEGAL, ids=[c["name"] for c in ILLEGAL])
def test_record_frames_refuse_illegal_records(case):
    with pytest.raises(RecordError):
        next(record_frames(case["record"]))


def test_write_gif(tmp_path):
    from PIL import Image

    rec = LEGAL[1]["record"]
    out = tmp_path / "game.gif"
    n = write_gif(record_frames(rec), out, fps=4)
    assert n == _frame_count(rec)
    with Image.open(out) as im:
        assert im.format == "GIF" and im.size == (640, 360) and im.n_frames >= 2
        assert im.info.get("loop") == 0
    buf = io.BytesIO()
    write_gif(record_frames(rec), buf, fps=4)
    assert buf.getvalue() == out.read_bytes()  # deterministic
    with pytest.raises(ValueError, match="fps"):
        write_gif([np.zeros((4, 4, 3), np.uint8)], buf, fps=60)
    with pytest.raises(ValueError, match="shape"):
        write_gif([np.zeros((4, 4, 3), np.uint8), np.zeros((6, 4, 3), np.uint8)], io.BytesIO())


def test_mp4_without_ffmpeg_is_one_clear_error(tmp_path, monkeypatch, capsys):
    from lama_dice import animation

    monkeypatch.setattr(animation, "find_ffmpeg", lambda: None)
    with pytest.raises(EncoderError, match="imageio-ffmpeg"):
        write_mp4(record_frames(LEGAL[1]["record"]), tmp_path / "x.mp4")
    path = tmp_path / "rec.json"
    path.write_text(json.dumps(LEGAL[1]["record"]))
    assert main(["show", str(path), "--mp4", str(tmp_path / "x.mp4")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "pip install imageio-ffmpeg" in err[0] and "ffmpeg on PATH" in err[0]
    assert not (tmp_path / "x.mp4").exists()


@pytest.mark.skipif(sys.platform == "win32", reason="a shell script stands in for ffmpeg")
def test_mp4_pipes_raw_frames_to_ffmpeg(tmp_path):
    fake = tmp_path / "ffmpeg"
    fake.write_text('#!/bin/sh\nfor last; do :; done\ncat > "$last"\n')  # writes its stdin to the last argument
    fake.chmod(fake.stat().st_mode | stat.S_IEXEC)
    rec = LEGAL[1]["record"]
    frames = list(record_frames(rec))
    out = tmp_path / "out.mp4"
    assert write_mp4(frames, out, fps=3, ffmpeg=str(fake)) == len(frames)
    h, w, _ = frame_shape(rec["players"])
    held = sum(f.hold for f in frames)
    assert out.stat().st_size == h * w * 3 * (len(frames) + 2 * held)  # a held frame is written three times
    failing = tmp_path / "ffmpeg-fails"
    failing.write_text("#!/bin/sh\necho 'Unknown encoder libx264' >&2\nexit 1\n")
    failing.chmod(failing.stat().st_mode | stat.S_IEXEC)
    with pytest.raises(EncoderError, match="Unknown encoder libx264"):
        write_mp4(frames, out, ffmpeg=str(failing))


def test_cli_show_gif(tmp_path, capsys):
    path = tmp_path / "rec.json"
    rec = LEGAL[2]["record"]
    path.write_text(json.dumps(rec))
    out = tmp_path / "game.gif"
    assert main(["show", str(path), "--gif", str(out), "--fps", "5"]) == 0
    line = capsys.readouterr().out.strip()
    assert line.startswith(f"wrote {out}: {_frame_count(rec)} frames of 640x460 at 5 fps")
    assert out.stat().st_size > 0
    assert main(["show", str(path), "--gif", str(out), "--fps", "0"]) == 2
    assert "--fps" in capsys.readouterr().err
    assert main(["show", str(path), "--gif", str(tmp_path / "no" / "x.gif")]) == 2
    assert "does not exist" in capsys.readouterr().err


def test_show_names_seats_from_an_evaluate_index(tmp_path):
    from lama_dice.cli.commands.show import index_names

    (tmp_path / "game_000000.json").write_text(json.dumps(LEGAL[1]["record"]))
    (tmp_path / "index.json").write_text(json.dumps({"saved": [
        {"file": "game_000000.json", "seats": ["ppo:runs/x/best.zip", "threshold:0.2"]}]}))
    assert index_names(str(tmp_path / "game_000000.json"), 2) == ["P0 ppo:best.zip", "P1 threshold:0.2"]
    assert index_names(str(tmp_path / "game_000000.json"), 3) is None
    assert index_names(str(tmp_path / "other.json"), 2) is None
    assert index_names("-", 2) is None


def test_render_bench_section_structure():
    from lama_dice.bench import render_speed

    r = render_speed.run(frames=20, gif_frames=4, repeats=1, seed=0)
    assert {"picture_2p", "picture_4p", "picture_6p", "env_rgb_array", "env_no_render", "gif"} <= set(r["results"])
    assert r["results"]["picture_2p"]["frame_shape"] == [360, 640, 3]
    assert all(v["per_s"] > 0 for v in r["results"].values())
    assert r["results"]["gif"]["bytes_per_frame"] > 0


def test_lama_env_import_does_not_import_pillow_or_pygame():
    import subprocess

    code = "import sys, lama_env; from lama_env import gym_env, lama_dice_v1; " \
           "print('PIL' in sys.modules, 'pygame' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}).stdout.split()
    assert out == ["False", "False"]
    assert lama_env.__version__



def test_the_start_line_is_never_cut_mid_name(monkeypatch):
    """Six players named by their specs: the header's "start:" line shows the whole name or the seat, not "thres…"."""
    import lama_env.picture as pic
    from lama_env.engine import LamaGame

    assert pic.start_line("P5 threshold:0.35", 400) == "start: P5 threshold:0.35"
    assert pic.start_line("P5 threshold:0.35", 120) == "start: P5"  # no room: the seat, whole
    names = ["P0 threshold:0.35", "P1 threshold:0.35", "P2 lookahead", "P3 points:10", "P4 always-roll", "You"]
    real, shown = pic.start_line, []
    monkeypatch.setattr(pic, "start_line", lambda name, width: shown.append(real(name, width)) or shown[-1])
    for seed in range(6):
        game = LamaGame(6, seed=seed, game_id=0)
        pic.picture(game, names)
    assert shown and not [s for s in shown if "…" in s]
    assert any(s.startswith("start: P") and " " in s[len("start: "):] for s in shown)  # a whole long name fits
