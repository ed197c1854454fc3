"""The FastAPI application of ``lama-dice serve``: three pages and the JSON API behind them.

Pages: ``/`` (Play), ``/watch`` (a record, turn by turn), ``/results`` (score
cards and league reports).  The API (OpenAPI at ``/docs`` and
``/openapi.json``; docs/web.md) answers JSON; every refusal is a 4xx with
``{"error": "<one line>"}`` and leaves every game as it was:

* 400: bad game settings (player count, seat, an unknown or refused agent spec);
* 404: no such game, record file or page;
* 409: an action the rules do not allow now, or a stale ``seq``;
* 413: an uploaded record over :data:`MAX_UPLOAD` bytes;
* 422: a malformed body, or a record that does not replay (with ``lama-dice replay``'s result);
* 503: the store is full of unfinished games.

Build one with :func:`create_app`; the test suite drives it through
``fastapi.testclient.TestClient``.
"""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import FileResponse, JSONResponse, Response
from fastapi.staticfiles import StaticFiles
from pydantic import BaseModel, ConfigDict, Field, StrictInt
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.middleware.trustedhost import TrustedHostMiddleware

from lama_env.errors import LamaDiceError

from .games import MAX_GAMES, GameStore, NotFound, WebError, builtin_specs, shipped_specs

#: The largest record the Watch page accepts as an upload (bytes).
MAX_UPLOAD = 5 * 1024 * 1024
#: At most this many records are listed under --records.
MAX_LISTED = 2000
#: Host names a server bound to the loopback interface answers (a guard against DNS rebinding).
LOCAL_HOSTS = ("127.0.0.1", "localhost", "::1", "[::1]")

STATIC = Path(str(resources.files(__package__).joinpath("static")))


class NewGame(BaseModel):
    """``POST /api/games``: the game to start."""

    model_config = ConfigDict(extra="forbid")
    players: StrictInt | None = Field(None, description="1..6, you included (default: one more than the "
                                                         "opponent specs, or 2)")
    seat: StrictInt = Field(0, description="your seat, 0-based")
    opponents: list[str] | None = Field(None, max_length=6, description="one agent spec for every opponent, or "
                                                                         "one per opponent seat")
    seed: StrictInt | None = Field(None, ge=0, description="seed of the deal, the dice and the agents")


class Act(BaseModel):
    """``POST /api/games/{id}/act``: your action."""

    model_config = ConfigDict(extra="forbid")
    action: StrictInt = Field(description="an action id from the state's choices (lama_env.actions)")
    seq: StrictInt | None = Field(None, description="the state's seq: the move is refused (409) if the game moved on")


class NextRound(BaseModel):
    """``POST /api/games/{id}/next-round``."""

    model_config = ConfigDict(extra="forbid")
    seq: StrictInt | None = None


def _error(status: int, message: str, **extra: Any) -> JSONResponse:
    return JSONResponse({"error": message, **extra}, status_code=status, headers={"Cache-Control": "no-store"})


def _validation_message(exc: RequestValidationError) -> str:
    errors = exc.errors()
    if not errors:
        return "malformed request"
    e = errors[0]
    where = ".".join(str(x) for x in e.get("loc", ())[1:]) or "body"
    more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
    return f"{where}: {e.get('msg', 'invalid')}{more}"


def _frames_or_error(record: Any, fault: dict | None) -> JSONResponse:
    """A record's frames, or 422 with the result ``lama-dice replay`` prints for it."""
    from lama_env.record import replay

    from .state import record_frames

    result = fault if fault is not None else replay(record)
    if not result["valid"]:
        return _error(422, str(result.get("error")), replay=result)
    try:
        return JSONResponse(record_frames(record))
    except ValueError as e:
        return _error(422, str(e))


def create_app(*, records: str | Path | None = None, results: str | Path | None = None,
               trusted_agents: tuple[str, ...] = (), allowed_hosts: tuple[str, ...] | None = None,
               store: GameStore | None = None) -> FastAPI:
    """The app (see the module docstring).

    Args:
        records: the folder the Watch page lists records from (None: uploads only).
        results: the folder the Results page reads score cards and reports from.
        trusted_agents: agent specs that load files, offered because the server's owner named them.
        allowed_hosts: answer only requests whose Host header is one of these (None: any).
        store: the games (default: a :class:`GameStore` with the default bounds).
    """
    from lama_env import __version__
    from lama_env.picture import palette

    games = store if store is not None else GameStore(trusted=trusted_agents)
    records_root = Path(records).resolve() if records is not None else None
    app = FastAPI(title="lama-dice", version=__version__,
                  description="Play Don't L.L.A.M.A. Dice against agents, watch records, read results. "
                              "Every request is checked by the rules engine (lama_env); errors are "
                              '`{"error": "<one line>"}` with a 4xx status. See docs/web.md.')
    if allowed_hosts is not None:
        app.add_middleware(TrustedHostMiddleware, allowed_hosts=list(allowed_hosts))
    app.state.games = games

    @app.exception_handler(WebError)
    async def web_error(request: Request, exc: WebError) -> JSONResponse:
        return _error(exc.status, str(exc))

    @app.exception_handler(LamaDiceError)
    async def rules_error(request: Request, exc: LamaDiceError) -> JSONResponse:
        return _error(409, str(exc).splitlines()[0])

    @app.exception_handler(RequestValidationError)
    async def bad_body(request: Request, exc: RequestValidationError) -> JSONResponse:
        return _error(422, _validation_message(exc))

    @app.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        return _error(exc.status_code, str(exc.detail))

    # ------------------------------------------------------------------ pages
    def page(name: str) -> FileResponse:
        return FileResponse(STATIC / name, media_type="text/html")

    app.get("/", include_in_schema=False)(lambda: page("play.html"))
    app.get("/play", include_in_schema=False)(lambda: page("play.html"))
    app.get("/watch", include_in_schema=False)(lambda: page("watch.html"))
    app.get("/results", include_in_schema=False)(lambda: page("results.html"))
    app.mount("/static", StaticFiles(directory=STATIC), name="static")

    # ------------------------------------------------------------------ API: about the server
    @app.get("/api/info", tags=["server"])
    def info() -> dict[str, Any]:
        """The version, the table's colours, the agents offered, the limits, the folders served."""
        from lama_dice.agents.registry import registered

        from ..play import default_opponent

        entries = registered()
        return {"version": __version__, "palette": palette(),
                "default_opponent": default_opponent(),
                "agents": {"shipped": shipped_specs(), "builtin": builtin_specs(), "trusted": list(trusted_agents),
                           "help": {e.usage: e.help for e in entries.values()}},
                "limits": {"max_games": games.max_games, "finished_ttl_s": games.finished_ttl_s,
                           "idle_ttl_s": games.idle_ttl_s, "max_upload_bytes": MAX_UPLOAD},
                "records": records_root is not None, "results": results is not None}

    # ------------------------------------------------------------------ API: games
    @app.post("/api/games", status_code=201, tags=["games"])
    def new_game(body: NewGame) -> dict[str, Any]:
        """Start a game; the agents play until it is your decision. Returns the game's state."""
        g = games.new(body.players, body.seat, body.opponents, body.seed)
        with g.lock:
            return g.state()

    @app.get("/api/games/{game_id}", tags=["games"])
    def game_state(game_id: str) -> dict[str, Any]:
        """The game's state: the table, your choices, what happened since your last move, the result."""
        g = games.get(game_id)
        with g.lock:
            return g.state()

    @app.post("/api/games/{game_id}/act", tags=["games"])
    def act(game_id: str, body: Act) -> dict[str, Any]:
        """Make your move (an action id from the state's choices); the agents then play until your next decision."""
        g = games.get(game_id)
        with g.lock:
            g.act(body.action, body.seq)
            return g.state()

    @app.post("/api/games/{game_id}/next-round", tags=["games"])
    def next_round(game_id: str, body: NextRound | None = None) -> dict[str, Any]:
        """Deal the next round after a round is over."""
        g = games.get(game_id)
        with g.lock:
            g.next_round(body.seq if body is not None else None)
            return g.state()

    @app.get("/api/games/{game_id}/record", tags=["games"])
    def record(game_id: str, download: bool = False) -> Response:
        """The game so far as a lama-dice-record/1 record (check it with `lama-dice replay`)."""
        g = games.get(game_id)
        with g.lock:
            rec = g.game.to_record()
        headers = {"Content-Disposition": f'attachment; filename="lama-dice-game-{game_id[:8]}.json"'} \
            if download else {}
        return Response(json.dumps(rec, indent=1) + "\n", media_type="application/json", headers=headers)

    # ------------------------------------------------------------------ API: records (Watch)
    @app.get("/api/records", tags=["records"])
    def list_records() -> dict[str, Any]:
        """The JSON files under --records (relative paths), at most MAX_LISTED."""
        if records_root is None:
            return {"folder": None, "files": [], "more": 0}
        files = sorted(p.relative_to(records_root).as_posix() for p in records_root.rglob("*.json")
                       if p.is_file() and p.name != "index.json")
        return {"folder": str(records_root), "files": files[:MAX_LISTED], "more": max(0, len(files) - MAX_LISTED)}

    @app.get("/api/records/{path:path}", tags=["records"])
    def record_file(path: str) -> JSONResponse:
        """A record under --records, step by step (422 with the replay result if it is not a legal record)."""
        from ..recordfile import load_record_file

        if records_root is None:
            raise NotFound("the server was started without --records DIR")
        target = (records_root / path).resolve()
        if not target.is_relative_to(records_root) or not target.is_file():
            raise NotFound(f"no record {path!r} under --records")
        if target.stat().st_size > MAX_UPLOAD:
            return _error(413, f"{path}: larger than {MAX_UPLOAD // 2**20} MiB")
        rec, fault = load_record_file(str(target))
        return _frames_or_error(rec, fault)

    @app.post("/api/replay", tags=["records"])
    async def replay_upload(request: Request, name: str = "upload") -> JSONResponse:
        """A record sent as the request body (its JSON text), step by step; as /api/records/{path}."""
        from ..recordfile import parse_record_text

        body = bytearray()
        async for chunk in request.stream():
            body += chunk
            if len(body) > MAX_UPLOAD:
                return _error(413, f"the record is larger than {MAX_UPLOAD // 2**20} MiB")
        try:
            text = body.decode("utf-8")
        except UnicodeDecodeError:
            from lama_env.record import RecordError

            fault = RecordError(f"not a game record: {name} is not UTF-8 text").as_result()
            return _error(422, fault["error"], replay=fault)
        rec, fault = parse_record_text(text, name)
        return _frames_or_error(rec, fault)

    # ------------------------------------------------------------------ API: results
    @app.get("/api/results", tags=["results"])
    def results_data() -> dict[str, Any]:
        """Score cards (per task, agents ranked) and league / evaluate reports under --results."""
        from .results import load_results

        return load_results(results)

    return app


__all__ = ["LOCAL_HOSTS", "MAX_GAMES", "MAX_UPLOAD", "create_app"]
