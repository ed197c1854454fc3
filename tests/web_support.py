"""A real ``lama-dice serve`` in a subprocess, for the load and browser tests."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


@contextmanager
def live_server(*args: str, timeout: float = 60.0) -> Iterator[tuple[str, subprocess.Popen]]:
    """Start ``python -m lama_dice serve --port 0 ARGS`` on 127.0.0.1; yield its URL and process; then Ctrl-C."""
    cmd: Sequence[str] = [sys.executable, "-m", "lama_dice", "serve", "--port", "0", *args]
    proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "PYTHONUNBUFFERED": "1"})
    try:
        deadline = time.monotonic() + timeout
        url = None
        assert proc.stdout is not None
        while time.monotonic() < deadline:
            line = proc.stdout.readline()
            if not line:
                break
            m = re.search(r"open (http://\S+?)/ ", line)
            if m:
                url = m.group(1)
                break
        if url is None:
            proc.kill()
            raise RuntimeError(f"the server did not start: {proc.communicate(timeout=10)}")
        yield url, proc
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGINT)
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
