"""Reading game-record files and writing JSON reports (the file I/O kept out of the pure engine)."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from lama_dice.atomic import write_text
from lama_env.errors import LamaDiceError
from lama_env.reader import InputError, read_file
from lama_env.record import MAX_RECORD_BYTES, RecordError, parse_record_json


def load_record_file(path: str, name: str | None = None) -> tuple[Any, dict | None]:
    """Read a JSON record file ('-' = stdin), at most :data:`~lama_env.record.MAX_RECORD_BYTES` bytes of it.

    Args:
        path: the file.
        name: how the messages call it (default ``path``; the web app passes the name under ``--records``,
            so that no message shows where the server's files are).

    Returns ``(record, None)``, or ``(None, fault)`` where ``fault`` is a
    ``{"valid": false, ...}`` result naming what is wrong with the file: it cannot be read, it is not a
    regular file (a FIFO or a device such as ``/dev/zero`` is refused before it is read: pipe it to ``-``),
    it is larger than the limit (reading stops there), it is not UTF-8 text, or
    :func:`~lama_env.record.parse_record_json` refuses it.
    """
    shown = path if name is None else name
    if path != "-":
        try:
            return parse_record_bytes(read_file(path, MAX_RECORD_BYTES, shown), shown)
        except InputError as e:
            return None, RecordError(str(e)).as_result()
    try:
        stdin: Any = sys.stdin
        buffer = getattr(stdin, "buffer", None)
        data = buffer.read(MAX_RECORD_BYTES + 1) if buffer is not None else stdin.read(MAX_RECORD_BYTES + 1)
    except OSError as e:
        return None, RecordError(f"cannot read {shown}: {e.strerror or type(e).__name__}").as_result()
    return parse_record_bytes(data, shown)


def parse_record_bytes(data: bytes | str, name: str) -> tuple[Any, dict | None]:
    """Parse a record's bytes (UTF-8 JSON; ``name`` says where they came from); as :func:`load_record_file`."""
    if len(data) > MAX_RECORD_BYTES:
        return None, RecordError(f"not a game record: {name} is larger than {MAX_RECORD_BYTES // 2**20} MiB "
                                 "(the size limit of a record)").as_result()
    return parse_record_text(data, name)


def parse_record_text(text: str | bytes, name: str) -> tuple[Any, dict | None]:
    """Parse a record's JSON text (``name`` says where it came from, for the message); as :func:`load_record_file`."""
    try:
        return parse_record_json(text, name), None
    except RecordError as e:
        return None, e.as_result()


def write_json_file(path: str, data: Any, error: type[LamaDiceError]) -> None:
    """Write ``data`` as indented JSON to ``path`` atomically; a failure raises ``error`` with one line.

    The old file, if any, is kept on a failure (:func:`lama_dice.atomic.write_text`), and the message says so.
    """
    write_text(path, json.dumps(data, indent=2) + "\n", error=error)


def emit_json_report(console: Any, path: str | None, data: Any, error: type[LamaDiceError],
                     render: Callable[[], None]) -> None:
    """Write a command's report: ``data`` to ``path`` (when given), ``render()``, then ``JSON: PATH``.

    With ``path == "-"`` the JSON goes to standard output after the table (the console then
    being on stderr); a failure to write raises ``error`` with one line.
    """
    to_stdout = path == "-"
    if path and not to_stdout:
        write_json_file(path, data, error)
    render()
    if path and not to_stdout:
        console.print(f"JSON: {path}")
    if to_stdout:
        json.dump(data, sys.stdout, indent=2)
        sys.stdout.write("\n")


def check_output_path(option: str, path: str | None, error: type[LamaDiceError], force: bool | None = None) -> None:
    """Refuse, before any work, an output file whose folder does not exist or cannot be written ('-': stdout).

    ``force=False``: refuse a file that exists too (the command's ``--force`` overwrites it).
    """
    if not path or path == "-":
        return
    if force is False and Path(path).exists():
        raise error(f"{option} {path}: the file exists; give another name, or --force to overwrite it")
    folder = Path(path).resolve().parent
    if not folder.is_dir():
        raise error(f"{option} {path}: the directory {Path(path).parent} does not exist")
    if not os.access(folder, os.W_OK):
        raise error(f"{option} {path}: the directory {Path(path).parent} is not writable")
