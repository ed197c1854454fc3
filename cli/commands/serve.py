"""Play the agents, watch records and read results in the browser (needs the web extra).

  lama-dice serve                                   # then open http://127.0.0.1:8000/
  lama-dice serve --records games/ --results results/
  lama-dice serve --port 0                          # any free port (the URL is printed)
  lama-dice serve --agents ppo:runs/default/best.zip   # also offer this network

The server binds to 127.0.0.1 (this computer only) unless --host says otherwise;
it keeps games in memory (at most 256; a finished game is dropped 10 minutes
after its last request, an abandoned one after 30 minutes).  Ctrl-C stops it.
Needs the web extra (FastAPI, uvicorn); where it is missing, this help and the
command end with a command that installs it where lama-dice is.  See docs/web.md.
"""

from __future__ import annotations

import argparse
import ipaddress
import socket
import sys
from pathlib import Path

from lama_env.errors import LamaDiceError

HELP = "play, watch records and read results in the browser (a local web app)"


class ServeError(LamaDiceError, ValueError):
    """Bad arguments for ``lama-dice serve`` (folders, address, missing extra)."""


def add_arguments(p: argparse.ArgumentParser) -> None:
    """Add the ``serve`` options to ``p``."""
    from lama_env.extras import install_command, missing_modules

    if missing_modules("web"):
        p.epilog = f"The web extra is not installed; install it with: {install_command('web')}"
    p.add_argument("--host", default="127.0.0.1",
                   help="address to listen on (default 127.0.0.1: this computer only; 0.0.0.0 shares it with "
                        "your network, see docs/web.md)")
    p.add_argument("--port", type=int, default=8000, help="port (default 8000; 0 = any free port)")
    p.add_argument("--records", metavar="DIR", default=None,
                   help="folder of game records the Watch page lists (e.g. an evaluate --save-games folder)")
    p.add_argument("--results", metavar="DIR", default=None,
                   help="folder of score cards (score --json) and league / evaluate reports for the Results page")
    p.add_argument("--agents", nargs="+", metavar="SPEC", default=[],
                   help="agent specs that load a file (ppo:PATH, rllib:PATH, python:...) to offer as opponents; "
                        "without this the page offers only the built-in and shipped agents")


def _check_folder(option: str, path: str | None) -> None:
    if path is not None and not Path(path).is_dir():
        raise ServeError(f"{option} {path}: no such directory")


def is_loopback(host: str) -> bool:
    """Whether ``host`` is a loopback address (or ``localhost``)."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def bind(host: str, port: int) -> socket.socket:
    """A listening socket on ``host:port`` (refused up front, with one line, if the port is taken)."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except socket.gaierror as e:
        raise ServeError(f"--host {host}: {e.strerror or e}") from None
    family, _, _, _, addr = infos[0]
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    # accepted connections inherit it: a response's header and body writes are not held back by Nagle's
    # algorithm waiting for the client's delayed ACK (40 ms per request on a kept-alive connection)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    try:
        sock.bind(addr)
        sock.listen(128)
    except OSError as e:
        sock.close()
        raise ServeError(f"cannot listen on {host}:{port}: {e.strerror or e}") from None
    return sock


def run(args: argparse.Namespace) -> int:
    """Serve the app until Ctrl-C; return 0."""
    try:
        import uvicorn

        from lama_dice.cli.web.app import LOCAL_HOSTS, create_app
    except ModuleNotFoundError as e:
        from lama_env.extras import missing_extra

        raise missing_extra("web", "lama-dice serve", e.name) from None
    _check_folder("--records", args.records)
    _check_folder("--results", args.results)
    if not 0 <= args.port <= 65535:
        raise ServeError(f"--port must be 0..65535, got {args.port}")
    if args.agents:
        from lama_dice.agents.registry import make_agent

        for spec in args.agents:
            make_agent(spec)  # a bad spec or a missing file: one line now, not at the first game
    local = is_loopback(args.host)
    app = create_app(records=args.records, results=args.results, trusted_agents=tuple(args.agents),
                     allowed_hosts=LOCAL_HOSTS if local else None)
    sock = bind(args.host, args.port)
    port = sock.getsockname()[1]
    shown = f"[{args.host}]" if ":" in args.host else args.host
    print(f"lama-dice serve: open http://{shown}:{port}/  (Play, Watch, Results; API docs at /docs)", flush=True)
    if local:
        print(f"Listening on {args.host} only: other computers cannot connect (--host to change; docs/web.md).",
              flush=True)
    else:
        print(f"Listening on {args.host}: anyone who can reach this computer can play and read the folders "
              "served; there is no login.", flush=True)
    print("Press Ctrl-C to stop.", flush=True)
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", access_log=False, lifespan="off"))
    try:
        server.run(sockets=[sock])
    except KeyboardInterrupt:  # uvicorn re-raises the Ctrl-C it handled: stopping is the normal end here
        pass
    finally:
        sock.close()
    print("lama-dice serve: stopped.", file=sys.stderr, flush=True)
    return 0
