"""Show a game record turn by turn: the table after every turn, round and game summaries.

Records come from `lama-dice play --save`, `lama-dice evaluate --save-games`
or any lama-dice-record/1 or /2 file.  Round and turn numbers are 1-based.  An
illegal record prints its first fault on one line and exits 1.

With --gif OUT.gif (and/or --mp4 OUT.mp4) the record becomes an animation
instead: one picture of the table per deal, roll and decision, captioned with
what happened; deals and round ends are held three times as long.  A GIF needs
only Pillow; an MP4 needs ffmpeg (pip install imageio-ffmpeg, or ffmpeg on PATH).

  lama-dice evaluate --agents ppo:runs/x/final.zip threshold:0.2 --games 10 --save-games games/
  lama-dice show games/game_000000.json --gif game.gif --fps 3
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from lama_env.errors import LamaDiceError

HELP = "show a game record turn by turn (or write it as a GIF / MP4 animation)"


class ShowError(LamaDiceError, ValueError):
    """A bad ``lama-dice show`` option (frame rate, output path)."""


def add_arguments(p: argparse.ArgumentParser) -> None:
    """Add the ``show`` arguments to ``p``."""
    p.add_argument("record", help="path to a lama-dice-record/1 or /2 JSON file ('-' for standard input)")
    p.add_argument("--step", action="store_true", help="wait for Enter between turns (q + Enter stops)")
    p.add_argument("--gif", metavar="OUT", default=None,
                   help="write the game as an animated GIF to OUT (one frame per deal, roll and decision)")
    p.add_argument("--mp4", metavar="OUT", default=None,
                   help="write the game as an MP4 video to OUT (needs ffmpeg: pip install imageio-ffmpeg)")
    p.add_argument("--fps", type=float, default=2.0, metavar="N",
                   help="frames per second of --gif / --mp4 (default 2; at most 50 for a GIF)")


def run(args: argparse.Namespace, stdin=None, console=None) -> int:
    """Show a record file turn by turn (``stdin``, ``console``: for tests); return 0, or 1 for an illegal record."""
    from rich.console import Console

    from lama_dice.cli.recordfile import load_record_file
    from lama_dice.cli.tui import show_record
    from lama_env.record import replay

    rec, fault = load_record_file(args.record)
    result = fault if fault is not None else replay(rec)
    if not result["valid"]:
        print(f"lama-dice show: invalid record: {fault_line(result)}", file=sys.stderr)
        return 1
    if getattr(args, "gif", None) or getattr(args, "mp4", None):
        return write_animations(rec, args)
    names = record_seat_names(rec, args.record)
    tty = None
    if stdin is None:
        stdin = sys.stdin
        if args.step and args.record == "-":  # the record came on stdin: read the keys from the terminal
            try:
                stdin = tty = open("/dev/tty", encoding="utf-8")
            except OSError:
                pass
    try:
        show_record(rec, console or Console(highlight=False), step=args.step, stdin=stdin,
                    names=dict(enumerate(names)) if names else None)
    finally:
        if tty is not None:
            tty.close()
    return 0


def write_animations(rec: dict, args: argparse.Namespace) -> int:
    """Write the ``--gif`` / ``--mp4`` animations of a legal record; print one line per file; return 0.

    Raises:
        ShowError: a bad ``--fps`` or an output folder that does not exist.
        lama_dice.animation.EncoderError: ``--mp4`` without ffmpeg (the message says what to install).
    """
    from lama_dice.animation import MP4_HINT, EncoderError, find_ffmpeg, record_frames, write_gif, write_mp4
    from lama_dice.atomic import WriteError
    from lama_dice.cli.tui import seat_names
    from lama_env.picture import frame_shape

    fps = args.fps
    outs = [(kind, out) for kind, out in (("gif", args.gif), ("mp4", args.mp4)) if out]
    if not fps > 0 or (args.gif and fps > 50):
        raise ShowError(f"--fps must be above 0{' and at most 50 for a GIF' if args.gif else ''}, got {fps:g}")
    for kind, out in outs:
        if not Path(out).resolve().parent.is_dir():
            raise ShowError(f"--{kind} {out}: the folder {Path(out).parent} does not exist")
    ffmpeg = find_ffmpeg() if args.mp4 else None
    if args.mp4 and ffmpeg is None:
        raise EncoderError(f"--mp4 needs ffmpeg: {MP4_HINT}")
    n = rec["players"]
    h, w, _ = frame_shape(n)
    names = record_seat_names(rec, args.record) or seat_names(n)
    for kind, out in outs:
        frames = record_frames(rec, names)
        try:
            count = write_gif(frames, out, fps) if kind == "gif" else write_mp4(frames, out, fps, ffmpeg=ffmpeg)
        except WriteError as e:  # the atomic write's own line: "cannot write OUT: ... (the old file was kept)"
            raise ShowError(str(e)) from None
        except OSError as e:
            raise ShowError(f"cannot write {out}: {e.strerror or e}") from None
        size = Path(out).stat().st_size
        print(f"wrote {out}: {count} frames of {w}x{h} at {fps:g} fps, {size / 1024:,.0f} KiB")
    return 0


def record_seat_names(rec: dict, record_path: str) -> list[str] | None:
    """The seat names of a record: its own (``about.names`` of a ``lama-dice-record/2``), else :func:`index_names`."""
    from lama_env.record import record_names

    return record_names(rec) or index_names(record_path, rec["players"])


def index_names(record_path: str, num_players: int) -> list[str] | None:
    """Seat names from the ``index.json`` next to a record saved by ``evaluate --save-games``, if any.

    ``P0 threshold:0.2``, ``P1 ppo:best.zip``: the seat and its agent spec (a file path shortened
    to the file's name); None when there is no index or it does not list this record.
    """
    from lama_env.reader import read_file, read_json

    if record_path == "-":
        return None
    path = Path(record_path)
    try:
        index = read_json(read_file(path.parent / "index.json", 64 * 2**20), "", allow_nan=True)
        entry = next(e for e in index["saved"] if e["file"] == path.name)
        seats = [str(s) for s in entry["seats"]]
    except (OSError, ValueError, KeyError, TypeError, StopIteration):
        return None
    if len(seats) != num_players:
        return None
    out = []
    for p, spec in enumerate(seats):
        kind, sep, rest = spec.partition(":")
        if sep and ("/" in rest or "\\" in rest):
            spec = f"{kind}:{Path(rest).name}"
        out.append(f"P{p} {spec}")
    return out


def fault_line(result: dict) -> str:
    """A replay fault as one line: ``round 2, turn 5 (1-based): <error>`` (numbered as `show` displays them)."""
    where = []
    if result.get("round") is not None:
        where.append(f"round {result['round'] + 1}")
    if result.get("turn") is not None:
        where.append(f"turn {result['turn'] + 1}")
    return (", ".join(where) + " (1-based): " if where else "") + str(result["error"])
