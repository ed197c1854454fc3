"""Many games at once against a running ``lama-dice serve``: errors, requests per second, latency percentiles.

  python -m lama_dice.cli.web.loadtest                      # starts its own server on 127.0.0.1 (any free port)
  python -m lama_dice.cli.web.loadtest http://127.0.0.1:8000 --games 50 --opponents threshold:0.2

Each game runs in its own thread with its own keep-alive connection (standard
library only): it starts a game, picks among the offered choices at random
(seeded) until the game is over (rounds flow on: no call between rounds), then downloads the
record and checks it with :func:`lama_env.record.replay`.  The run is bounded:
``--games`` games, each at most ``max_requests`` requests, and a ``timeout``
per request.  ``tests/test_web_load.py`` runs it; docs/performance.md reports it.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import random
import re
import signal
import subprocess
import sys
import threading
import time
import urllib.parse
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any


@contextmanager
def spawn_server(*args: str, timeout: float = 60.0) -> Iterator[tuple[str, subprocess.Popen]]:
    """Run ``python -m lama_dice serve --port 0 ARGS`` (127.0.0.1); yield its URL and process; then stop it with Ctrl-C.

    Raises:
        RuntimeError: the server did not print its URL within ``timeout`` seconds.
    """
    cmd = [sys.executable, "-m", "lama_dice", "serve", "--port", "0", *args]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "PYTHONUNBUFFERED": "1"})
    try:
        url = None
        deadline = time.monotonic() + timeout
        assert proc.stdout is not None
        while url is None and time.monotonic() < deadline:
            line = proc.stdout.readline()
            if not line:
                break
            m = re.search(r"open (http://\S+?)/ ", line)
            url = m.group(1) if m else None
        if url is None:
            proc.kill()
            raise RuntimeError(f"the server did not start: {proc.communicate(timeout=10)[1].strip()[-500:]}")
        yield url, proc
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGINT)
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


@dataclass
class LoadResult:
    """What a load run measured.

    Attributes:
        games: games started; finished: games played to their end.
        requests: HTTP requests made; errors: failed requests or games, one line each.
        latencies_s: the seconds each request took.
        elapsed_s: wall-clock seconds of the whole run.
        valid_records: records that replayed valid (and matched the server's final totals).
    """

    games: int
    finished: int = 0
    requests: int = 0
    errors: list[str] = field(default_factory=list)
    latencies_s: list[float] = field(default_factory=list)
    elapsed_s: float = 0.0
    valid_records: int = 0

    def percentile(self, q: float) -> float:
        """The ``q``-th percentile (0..100) of the latencies, in seconds (nearest rank)."""
        xs = sorted(self.latencies_s)
        if not xs:
            return float("nan")
        k = min(len(xs) - 1, max(0, round(q / 100 * len(xs) + 0.5) - 1))
        return xs[k]

    def summary(self) -> dict[str, Any]:
        """The numbers as a JSON-ready dict (latencies in milliseconds)."""
        return {"games": self.games, "finished": self.finished, "valid_records": self.valid_records,
                "requests": self.requests, "errors": len(self.errors), "elapsed_s": round(self.elapsed_s, 3),
                "requests_per_s": round(self.requests / self.elapsed_s, 1) if self.elapsed_s else None,
                **{f"p{q}_ms": round(1000 * self.percentile(q), 2) for q in (50, 90, 99)},
                "max_ms": round(1000 * max(self.latencies_s), 2) if self.latencies_s else None}


class _Client:
    """One keep-alive connection that times each request."""

    def __init__(self, url: str, timeout: float, result: LoadResult, lock: threading.Lock) -> None:
        u = urllib.parse.urlsplit(url)
        self.conn = http.client.HTTPConnection(u.hostname or "127.0.0.1", u.port or 80, timeout=timeout)
        self.result = result
        self.lock = lock

    def call(self, method: str, path: str, body: Any = None) -> Any:
        data = None if body is None else json.dumps(body).encode()
        headers = {"Content-Type": "application/json"} if data is not None else {}
        t0 = time.perf_counter()
        self.conn.request(method, path, body=data, headers=headers)
        resp = self.conn.getresponse()
        raw = resp.read()
        dt = time.perf_counter() - t0
        with self.lock:
            self.result.requests += 1
            self.result.latencies_s.append(dt)
        out = json.loads(raw)
        if resp.status >= 400:
            raise RuntimeError(f"{method} {path}: {resp.status} {out.get('error') if isinstance(out, dict) else out}")
        return out


def play_one(url: str, players: int, opponents: list[str], seed: int, result: LoadResult, lock: threading.Lock,
             timeout: float = 60.0, max_requests: int = 2000) -> None:
    """Play one game through the API with random choices; record its outcome in ``result``."""
    from lama_env.record import replay

    client = _Client(url, timeout, result, lock)
    pick = random.Random(seed)
    try:
        state = client.call("POST", "/api/games", {"players": players, "seat": seed % players,
                                                   "opponents": opponents, "seed": seed})
        gid = state["id"]
        for _ in range(max_requests):
            if state["game_over"]:
                break
            choice = pick.choice(state["choices"])
            state = client.call("POST", f"/api/games/{gid}/act", {"action": choice["action"], "seq": state["seq"]})
        else:
            raise RuntimeError(f"game {gid} not over after {max_requests} requests")
        record = client.call("GET", f"/api/games/{gid}/record")
        res = replay(record)
        ok = res["valid"] and res["game_over"] and res["totals"] == state["result"]["totals"]
        with lock:
            result.finished += 1
            result.valid_records += bool(ok)
            if not ok:
                result.errors.append(f"game {gid}: record does not replay to the server's result: {res}")
    except Exception as e:
        with lock:
            result.errors.append(f"{type(e).__name__}: {e}".splitlines()[0])
    finally:
        client.conn.close()


def run_load(url: str, games: int = 50, players: int = 2, opponents: list[str] | None = None,
             seed: int = 0, timeout: float = 60.0) -> LoadResult:
    """Play ``games`` games at once (one thread each) against the server at ``url``."""
    result = LoadResult(games=games)
    lock = threading.Lock()
    opp = opponents or ["threshold:0.2"]
    threads = [threading.Thread(target=play_one, args=(url, players, opp, seed + i, result, lock, timeout),
                                daemon=True) for i in range(games)]
    t0 = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=timeout * 20)
    result.elapsed_s = time.perf_counter() - t0
    alive = sum(t.is_alive() for t in threads)
    if alive:
        result.errors.append(f"{alive} games still running when the run stopped")
    return result


def main(argv: list[str] | None = None) -> int:
    """Run the load test from the command line; print the summary as JSON; 1 if any error."""
    p = argparse.ArgumentParser(prog="python -m lama_dice.cli.web.loadtest", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("url", nargs="?", default=None,
                   help="the server, e.g. http://127.0.0.1:8000 (default: start one on 127.0.0.1 for the run)")
    p.add_argument("--games", type=int, default=50, help="games played at once (default 50)")
    p.add_argument("--players", type=int, default=2, help="players per game (default 2)")
    p.add_argument("--opponents", nargs="+", default=["threshold:0.2"], help="opponent spec(s)")
    p.add_argument("--seed", type=int, default=0, help="seed of the first game (game i: seed + i)")
    args = p.parse_args(argv)
    if args.url:
        res = run_load(args.url, args.games, args.players, args.opponents, args.seed)
    else:
        with spawn_server() as (url, _):
            res = run_load(url, args.games, args.players, args.opponents, args.seed)
    summary = res.summary()
    summary.update(players=args.players, opponents=args.opponents, cpus=os.cpu_count())
    print(json.dumps(summary, indent=1))
    for e in res.errors[:10]:
        print("error:", e)
    return 1 if res.errors else 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
