"""Game records as animations: one picture per deal, roll and decision, written as a GIF or an MP4.

    from lama_dice.animation import record_frames, write_gif
    write_gif(record_frames(record), "game.gif", fps=2)

:func:`record_frames` replays a record into captioned :class:`Frame` pictures (deals and round ends marked
``hold``: shown longer); :func:`write_gif` needs Pillow only, :func:`write_mp4` an ffmpeg (imageio-ffmpeg's,
else on ``PATH``; without one it raises :class:`EncoderError` saying what to install).
(docs/environments.md, Pictures)
"""

from __future__ import annotations

import functools
import itertools
import os
import shutil
import subprocess
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import IO, Any, NamedTuple

import numpy as np

from lama_dice.atomic import atomic_path
from lama_env import actions as A
from lama_env.engine import LamaGame, Phase
from lama_env.errors import LamaDiceError
from lama_env.picture import TablePicture, frame_shape
from lama_env.record import RecordError, record_names, replay
from lama_env.roundend import RoundEnd, ended, step_with_round_end
from lama_env.rules import FACES, NUM_FACES, RulesConfig, is_triple_llama, score_display
from lama_env.safetext import safe_text

HOLD = 3  #: How many frames' time a ``hold`` frame lasts.
#: What to install for MP4 output.
MP4_HINT = "pip install imageio-ffmpeg (or \"lama-dice[render]\"), or put ffmpeg on PATH"


class EncoderError(LamaDiceError, RuntimeError):
    """No video encoder (ffmpeg) for MP4 output, or the encoder failed."""


class Frame(NamedTuple):
    """One picture of an animation."""

    image: np.ndarray  #: ``(H, W, 3)`` uint8
    hold: bool = False  #: show it longer (a deal, a round's end)
    caption: str = ""  #: what happened (the line drawn at the bottom of the picture)


# ------------------------------------------------------------------ records -> frames
def record_frames(record: Any, names: Sequence[str] | None = None) -> Iterator[Frame]:
    """The frames of a game record: after each deal, roll and decision (a roll then a decision: two frames).

    Args:
        record: a ``lama-dice-record/1`` (or ``/2``) object (parsed JSON).
        names: a name per seat (default: the record's own, ``about.names`` of a ``lama-dice-record/2``;
            else ``P0``, ``P1``, ...).

    Yields:
        :class:`Frame` objects, each a new array.

    Raises:
        lama_env.record.RecordError: the record breaks the rules (checked before the first frame).
    """
    result = replay(record)
    if not result["valid"]:
        raise RecordError(str(result["error"]), result.get("round"), result.get("turn"))
    n = record["players"]
    seat = [safe_text(x) for x in (names if names is not None else record_names(record) or
                                   [f"P{p}" for p in range(n)])]
    table = TablePicture(n, seat)

    def frame(shown: LamaGame | RoundEnd, caption: str, dice: Sequence[str] | None = None,
              hold: bool = False) -> Frame:
        return Frame(table(shown, dice, caption), hold, caption)

    rules = RulesConfig.from_dict(record.get("rules"))
    game: LamaGame | None = None
    for r, rnd in enumerate(record["rounds"]):
        if game is None:  # explicit chance: each round's deal from the record
            game = LamaGame(n, rules, start_points=record.get("start_points", [0] * n),
                            start_player=rnd["start_player"], hands=rnd["hands"], record=False, chance="explicit")
        else:  # the next deal's chance node, where the last round's end left the game: the record's cards
            for hand in rnd["hands"]:
                for card in hand:
                    game.apply_chance(card)
        yield frame(game, f"Round {r + 1} is dealt: {seat[game.start_player]} starts", hold=True)
        for turn in rnd["turns"]:
            p = turn["player"]
            who = seat[p]
            if turn["action"] == "quit":
                end = step_with_round_end(game, A.QUIT)
                shown = end or game  # a round's end: the table as it ended (the game has moved on)
                yield frame(shown, f"{who} quits (display scores {score_display(shown.displays[p])})",
                            hold=end is not None or game.game_over)
                continue
            dice = turn["dice"]
            chips = game.totals[p]
            row = game.row
            end = step_with_round_end(game, A.ROLL, dice)
            shown = end or game
            said = f"{who} rolls {' '.join(dice)}"
            if is_triple_llama([FACES.index(f) for f in dice]):
                said += (f": triple llama! returns a chip ({chips} → {shown.totals[p]})" if chips
                         else ": triple llama! no chip to return")
            if end is None and game.phase == Phase.DISCARD:
                yield frame(game, said + ": it matches, discard")
                shown_cards = sorted(turn["discard"], key=FACES.index)
                end = step_with_round_end(game, A.discard_action(tuple(shown_cards.count(f) for f in FACES)))
                shown = end or game
                out = " and goes out!" if (ended(shown) or {}).get("went_out") == p else ""
                yield frame(shown, f"{who} discards {' '.join(shown_cards)}{out}", dice,
                            end is not None or game.game_over)
            elif end is None and game.phase == Phase.TAKE:
                yield frame(game, said + ": it matches nothing, take a row card")
                end = step_with_round_end(game, A.take_action(FACES.index(turn["take"])))
                shown = end or game
                yield frame(shown, f"{who} takes {turn['take']} from the llama row", dice,
                            end is not None or game.game_over)
            else:
                if (ended(shown) or {}).get("busted") == p:
                    gained = " ".join(FACES[f] for f in range(NUM_FACES) if row[f] and not shown.row[f])
                    said += f": BUST! takes the rest of the llama row ({gained})"
                yield frame(shown, said, dice, end is not None or game.game_over)


# ------------------------------------------------------------------ GIF
@functools.lru_cache(maxsize=8)
def _palette(num_players: int) -> Any:
    """A 256-colour Pillow palette for ``num_players`` pictures, from a fixed sample showing every sprite and state."""
    import random

    from PIL import Image

    rnd = random.Random(0)
    draw = TablePicture(num_players)
    game = LamaGame(num_players, seed=0, record=False)
    frames: list[np.ndarray] = []
    seen: set[tuple[int, bool, bool]] = set()
    end: RoundEnd | None = None  # the round the last step ended (its picture too)
    while len(frames) < 24:
        if game.game_over:
            frames.append(draw(game, caption="Game over"))
            game = LamaGame(num_players, seed=len(frames), record=False)
        if end is not None:
            frames.append(draw(end, caption="Round over"))
        key = (int(game.phase), any(game.quit), game.quit.count(False) == 1)
        if key not in seen or rnd.random() < 0.05:
            seen.add(key)
            frames.append(draw(game, caption="P0 rolls 1 2 L: it matches, discard"))
        legal = game.legal_actions()
        end = step_with_round_end(game, A.ROLL if A.ROLL in legal and rnd.random() < 0.8 else rnd.choice(legal))
    return Image.fromarray(np.vstack(frames)).quantize(255, method=Image.Quantize.MEDIANCUT)


def _frames(frames: Iterable[Frame | np.ndarray]) -> Iterator[Frame]:
    for f in frames:
        yield f if isinstance(f, Frame) else Frame(np.asarray(f))


def _check(image: np.ndarray, shape: tuple[int, ...] | None) -> tuple[int, ...]:
    if image.dtype != np.uint8 or image.ndim != 3 or image.shape[2] != 3:
        raise ValueError(f"a frame must be an (H, W, 3) uint8 array, got {image.dtype} {image.shape}")
    if shape is not None and image.shape != shape:
        raise ValueError(f"every frame must have the shape of the first, {shape}; got {image.shape}")
    return image.shape


def write_gif(frames: Iterable[Frame | np.ndarray], out: str | os.PathLike | IO[bytes], fps: float = 2.0,
              hold: float = HOLD) -> int:
    """Write frames (:class:`Frame` objects or ``(H, W, 3)`` uint8 arrays, all of one size) as a looping GIF.

    Args:
        frames: the pictures, in order.
        out: a path or a binary file.
        fps: frames per second (a GIF counts in hundredths of a second; at most 50).
        hold: how many frames' time a ``hold`` frame lasts.

    Returns:
        The number of frames written.
    """
    from PIL import Image

    if not 0 < fps <= 50:
        raise ValueError(f"fps must be in (0, 50] for a GIF, got {fps}")
    images: list[Any] = []
    durations: list[int] = []
    shape: tuple[int, ...] | None = None
    pal = None
    step = 1000.0 / fps
    for f in _frames(frames):
        shape = _check(f.image, shape)
        if pal is None:  # the player count whose pictures have this shape (1 if none: any palette does)
            pal = _palette(next((n for n in range(1, 7) if frame_shape(n)[:2] == shape[:2]), 1))
        images.append(Image.fromarray(f.image).quantize(palette=pal, dither=Image.Dither.NONE))
        durations.append(max(20, round(step * (hold if f.hold else 1) / 10) * 10))
    if not images:
        raise ValueError("no frames to write")
    options = dict(format="GIF", save_all=True, append_images=images[1:], duration=durations, loop=0, optimize=True)
    if isinstance(out, str | os.PathLike):
        with atomic_path(out) as tmp:  # a full disk leaves the old file, not half a GIF
            images[0].save(tmp, **options)
    else:
        images[0].save(out, **options)
    return len(images)


# ------------------------------------------------------------------ MP4
def find_ffmpeg() -> str | None:
    """The ffmpeg to encode MP4 with: imageio-ffmpeg's, else ``ffmpeg`` on ``PATH``; None if neither."""
    try:
        import imageio_ffmpeg  # type: ignore[import-not-found,unused-ignore]

        exe = imageio_ffmpeg.get_ffmpeg_exe()
        if exe and Path(exe).is_file():
            return str(exe)
    except (ImportError, RuntimeError, OSError):
        pass
    return shutil.which("ffmpeg")


def write_mp4(frames: Iterable[Frame | np.ndarray], path: str | os.PathLike, fps: float = 2.0,
              hold: float = HOLD, ffmpeg: str | None = None) -> int:
    """Write frames as an H.264 MP4 (yuv420p: plays everywhere) through ffmpeg.

    Args:
        frames: the pictures, in order (all of one size, even width and height).
        path: the output file.
        fps: frames per second.
        hold: how many frames' time a ``hold`` frame lasts (it is repeated).
        ffmpeg: the ffmpeg executable (default :func:`find_ffmpeg`).

    Returns:
        The number of pictures written (repeats of held frames not counted).

    Raises:
        EncoderError: no ffmpeg (the message says what to install), or ffmpeg failed.
    """
    if fps <= 0:
        raise ValueError(f"fps must be positive, got {fps}")
    exe = ffmpeg or find_ffmpeg()
    if exe is None:
        raise EncoderError(f"MP4 output needs ffmpeg: {MP4_HINT}")
    it = _frames(frames)
    first = next(it, None)
    if first is None:
        raise ValueError("no frames to write")
    shape = _check(first.image, None)
    h, w = shape[:2]
    cmd = [exe, "-hide_banner", "-loglevel", "error", "-y", "-f", "rawvideo", "-pix_fmt", "rgb24",
           "-s", f"{w}x{h}", "-r", f"{fps:g}", "-i", "-", "-an", "-c:v", "libx264", "-pix_fmt", "yuv420p",
           "-movflags", "+faststart"]
    with atomic_path(path) as tmp:  # ffmpeg writes beside the target; a failure leaves the old file
        return _encode_mp4([*cmd, os.fspath(tmp)], exe, first, it, shape, hold)


def _encode_mp4(cmd: list[str], exe: str, first: Frame, it: Iterator[Frame], shape: tuple[int, ...],
                hold: float) -> int:
    try:
        proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    except OSError as e:
        raise EncoderError(f"cannot run {exe}: {e.strerror or e}") from None
    assert proc.stdin is not None and proc.stderr is not None
    count = 0
    repeat = max(1, round(hold))
    try:
        for f in itertools.chain([first], it):
            _check(f.image, shape)
            data = np.ascontiguousarray(f.image).tobytes()
            for _ in range(repeat if f.hold else 1):
                proc.stdin.write(data)
            count += 1
        proc.stdin.close()
    except BrokenPipeError:  # ffmpeg stopped early: its message says why
        pass
    except BaseException:
        proc.kill()
        proc.wait()
        raise
    err = proc.stderr.read()
    proc.wait()
    if proc.returncode != 0:
        lines = err.decode("utf-8", "replace").strip().splitlines()
        raise EncoderError(f"ffmpeg failed (exit {proc.returncode}): {lines[-1] if lines else 'no message'}")
    return count


def write_animation(frames: Iterable[Frame | np.ndarray], path: str | os.PathLike, fps: float = 2.0,
                    hold: float = HOLD) -> int:
    """:func:`write_gif` or :func:`write_mp4`, by the file name's ending (``.gif``; anything else: MP4)."""
    if Path(path).suffix.lower() == ".gif":
        return write_gif(frames, path, fps, hold)
    return write_mp4(frames, path, fps, hold)


__all__ = ["HOLD", "MP4_HINT", "EncoderError", "Frame", "find_ffmpeg", "record_frames", "write_animation",
           "write_gif", "write_mp4"]
