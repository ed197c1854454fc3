"""The FastAPI application of ``lama-dice serve``: three pages and the JSON API behind them.

Pages: ``/`` (Play), ``/watch`` (a record, turn by turn), ``/results`` (score
cards and league reports).  The API (OpenAPI at ``/openapi.json``, its Swagger
UI at ``/docs`` served with the assets of the ``fastapi-offline`` package, so
that it works without internet; docs/web.md) answers JSON; every refusal is a 4xx with
``{"error": "<one line>"}`` and leaves every game as it was:

* 400: bad game settings (player count, seat, an unknown or refused agent spec), a malformed record name,
  a request to a Host the server does not answer;
* 404: no such game, record file or page;
* 405: a method the route does not have;
* 409: an action the rules do not allow now, or a stale ``seq``;
* 413: a request body over :data:`MAX_BODY` bytes (an uploaded record: :data:`MAX_UPLOAD`), refused by
  :class:`BodyLimit` while it is read;
* 422: a malformed body (not JSON, a number too long to read, a missing, mistyped or unknown field), or a
  record that does not replay (with ``lama-dice replay``'s result).

No request gets a 5xx; a bug that raises anyway answers 500 with the same one-line JSON, naming no file.
Every route declares its status codes and bodies in the OpenAPI schema (:mod:`.schema`), and
``tests/test_web_fuzz.py`` fuzzes the API from it with schemathesis.

Build one with :func:`create_app`; the test suite drives it through
``fastapi.testclient.TestClient``.
"""

from __future__ import annotations

import json
import urllib.parse
from collections.abc import Mapping
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Annotated, Any, cast

from annotated_types import Ge, Le
from fastapi import APIRouter, FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import FileResponse, JSONResponse, Response
from fastapi.routing import APIRoute
from fastapi.staticfiles import StaticFiles
from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, StrictInt
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from lama_env.errors import LamaDiceError, bounded, clip
from lama_env.reader import InputError, read_json
from lama_env.record import MAX_RECORD_BYTES
from lama_env.safetext import safe_text

from .games import MAX_GAMES, GameStore, NotFoundError, WebError, builtin_specs, shipped_specs
from .schema import RECORD_SCHEMA, Frames, GameState, Info, RecordList, Results, answers

#: The largest record the Watch page accepts as an upload or reads under --records (bytes): a record file's limit.
MAX_UPLOAD = MAX_RECORD_BYTES
#: The largest request body of every other route (bytes): their bodies are a few small fields.
MAX_BODY = 64 * 1024
#: The largest integer of a request's fields (either sign): exact in every JSON client (a float's 53 bits).
MAX_JSON_INT = 2**53 - 1
#: A record's name under --records: at most this many characters, and each folder or file name at most 255.
MAX_NAME = 1024
#: At most this many records are listed under --records.
MAX_LISTED = 2000
#: Why a file under --records or --results is not listed: its name (as lama_env.safetext.safe_text shows it) differs.
UNLISTED_NAME = "the file name is not UTF-8 text or has control characters"
#: Host names a server bound to the loopback interface answers (a guard against DNS rebinding).
LOCAL_HOSTS = ("127.0.0.1", "localhost", "::1")

STATIC = Path(str(resources.files(__package__).joinpath("static")))


def _whole_number(value: Any) -> Any:
    return int(value) if isinstance(value, float) and value.is_integer() else value


#: An integer field: JSON has one kind of number, so ``3.0`` is the integer 3 (as JSON Schema's ``integer``
#: says); ``3.5``, ``"3"`` and ``true`` are refused (422), and so is an integer beyond +-(2**53 - 1), the
#: integers every JSON client holds exactly (declared in the schema; the bounded reader refuses past 2**63 - 1).
JsonInt = Annotated[StrictInt, Ge(-MAX_JSON_INT), Le(MAX_JSON_INT), BeforeValidator(_whole_number)]


class NewGame(BaseModel):
    """``POST /api/games``: the game to start."""

    model_config = ConfigDict(extra="forbid")
    # the bounds are the schema's; the engine checks them (400 with its message, as for a seat beyond the table)
    players: JsonInt | None = Field(None, description="1..6, you included (default: one more than the "
                                                       "opponent specs, or 2)",
                                    json_schema_extra={"minimum": 1, "maximum": 6})
    seat: JsonInt = Field(0, description="your seat, 0-based: below players",
                          json_schema_extra={"minimum": 0, "maximum": 5})
    opponents: list[str] | None = Field(None, max_length=6, description="one agent spec for every opponent, or "
                                                                         "one per opponent seat")
    seed: Annotated[StrictInt, Ge(0), Le(2**53 - 1), BeforeValidator(_whole_number)] | None = Field(
        None, description="seed of the deal, the dice and the agents (0 .. 2**53 - 1, exact in any JSON client)")


class Act(BaseModel):
    """``POST /api/games/{id}/act``: your action."""

    model_config = ConfigDict(extra="forbid")
    action: JsonInt = Field(description="an action id from the state's choices (lama_env.actions)")
    seq: JsonInt | None = Field(None, description="the state's seq: the move is refused (409) if the game moved on")


def _error(status: int, message: str, headers: Mapping[str, str] | None = None, **extra: Any) -> JSONResponse:
    """The refusal ``{"error": message, **extra}``; the message on one line of at most about 500 characters."""
    return JSONResponse({"error": bounded(message, 500), **extra}, status_code=status,
                        headers={"Cache-Control": "no-store", **(headers or {})})


def _validation_message(exc: RequestValidationError) -> str:
    errors = exc.errors()
    if not errors:
        return "malformed request"
    e = errors[0]
    if e.get("type") == "json_invalid":  # loc is ("body", the character where the JSON text goes wrong)
        at = e.get("loc", ())[1:]
        return f"body: not valid JSON ({e.get('ctx', {}).get('error', 'JSON decode error')}" + \
            (f" at character {at[0]})" if at else ")")
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


@dataclass
class Settings:
    """What the routes read from ``app.state.settings``."""

    games: GameStore
    records: Path | None
    results: Path | None
    trusted: tuple[str, ...]


class HostCheck:
    """Answer only requests whose ``Host`` header names one of ``hosts`` (IPv6 literals in brackets too).

    A server on the loopback interface refuses a request addressed to any other name (400): a web page
    cannot reach it through a DNS name that resolves to 127.0.0.1 (DNS rebinding).
    """

    def __init__(self, app: ASGIApp, hosts: tuple[str, ...]) -> None:
        """Wrap ``app``."""
        self.app = app
        self.hosts = {h.strip("[]").lower() for h in hosts}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Pass the request on, or answer 400."""
        if scope["type"] in ("http", "websocket"):
            host = dict(scope["headers"]).get(b"host", b"").decode("latin-1")
            try:
                parts = urllib.parse.urlsplit("//" + host)
                # a Host is host[:port]: userinfo ("evil.com@127.0.0.1"), a path or a query is no Host
                name = parts.hostname or "" if not ("@" in host or parts.path or parts.query or parts.fragment) \
                    else ""
                parts.port  # noqa: B018  (raises ValueError for a port that is not a number 0..65535)
            except ValueError:
                name = ""
            if name.lower() not in self.hosts:
                await _error(400, f"this server answers only requests to {', '.join(sorted(self.hosts))}; "
                                  f"got Host {host!r}")(scope, receive, send)
                return
        await self.app(scope, receive, send)


class BodyLimit:
    """Refuse (413) a request body over ``limit`` bytes (``limits``: per path), without reading it whole.

    A ``Content-Length`` over the limit is refused before a byte of the body is read; a body sent in
    chunks (no length given, or a wrong one) is counted as it arrives, and once it passes the limit the
    413 goes out, the rest is never read and the route sees the client gone (its answer is dropped).
    """

    def __init__(self, app: ASGIApp, limit: int, limits: dict[str, int] | None = None) -> None:
        """Wrap ``app``."""
        self.app = app
        self.limit = limit
        self.limits = dict(limits or {})

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Pass the request on with its body counted, or answer 413."""
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        limit = self.limits.get(scope["path"], self.limit)
        what = "a record" if scope["path"] in self.limits else "a request body on this route"
        size = f"{limit / 2**20:g} MiB" if limit >= 2**20 else f"{limit / 2**10:g} KiB"
        refusal = _error(413, f"the request body is larger than {size}, the limit of {what}")
        length = dict(scope["headers"]).get(b"content-length")
        if length is not None:
            try:
                declared = int(length)
            except ValueError:
                await _error(400, f"Content-Length must be a number of bytes, got {clip(length)}")(scope, receive, send)
                return
            if declared > limit:
                await refusal(scope, receive, send)
                return
        received, started, refused = 0, False, False

        async def counted() -> Message:
            nonlocal received, refused
            if refused:
                return {"type": "http.disconnect"}
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > limit:
                    refused = True
                    if not started:
                        await refusal(scope, receive, send)
                    return {"type": "http.disconnect"}
            return message

        async def answer(message: Message) -> None:
            nonlocal started
            if refused:
                return  # the 413 is out: the route's answer to the cut body goes nowhere
            started = True
            await send(message)

        try:
            await self.app(scope, counted, answer)
        except Exception:
            if not refused:
                raise


def _settings(request: Request) -> Settings:
    return cast(Settings, request.app.state.settings)


class BoundedRequest(Request):
    """A request whose JSON body is read by the bounded reader (:func:`lama_env.reader.read_json`).

    A body nested too deeply, with a huge integer, a duplicate key or ``NaN`` is refused (422) with the
    reader's one line instead of reaching the models.
    """

    async def json(self) -> Any:
        """The body's JSON value (raises :class:`~lama_env.reader.InputError`)."""
        if not hasattr(self, "_json"):
            self._json = read_json(await self.body(), "body")
        return self._json


class BoundedRoute(APIRoute):
    """An API route that reads its JSON body with :class:`BoundedRequest`."""

    def get_route_handler(self) -> Any:
        """FastAPI's handler, given a :class:`BoundedRequest`."""
        handler = super().get_route_handler()

        async def bounded_handler(request: Request) -> Response:
            return await handler(BoundedRequest(request.scope, request.receive))

        return bounded_handler


router = APIRouter(route_class=BoundedRoute)


# ---------------------------------------------------------------------- pages
def _page(name: str) -> FileResponse:
    return FileResponse(STATIC / name, media_type="text/html")


@router.get("/", include_in_schema=False)
def play_page() -> FileResponse:
    """The Play page."""
    return _page("play.html")


@router.get("/play", include_in_schema=False)
def play_page_again() -> FileResponse:
    """The Play page (its own name)."""
    return _page("play.html")


@router.get("/watch", include_in_schema=False)
def watch_page() -> FileResponse:
    """The Watch page."""
    return _page("watch.html")


@router.get("/results", include_in_schema=False)
def results_page() -> FileResponse:
    """The Results page."""
    return _page("results.html")


# ---------------------------------------------------------------------- the API's documentation page
#: Where the Swagger UI's assets (from the fastapi-offline package, part of the web extra) are served.
DOCS_ASSETS = "/static/api-docs"


def docs_assets() -> Path | None:
    """The folder of the Swagger UI's JavaScript and CSS shipped by ``fastapi-offline``, or None if not installed."""
    try:
        folder = Path(str(resources.files("fastapi_offline").joinpath("static")))
    except ModuleNotFoundError:
        return None
    return folder if (folder / "swagger-ui-bundle.js").is_file() else None


#: The top of the API page: a link back to the app (Play, Watch, Results), a touch target on a phone.
DOCS_BACK_LINK = ("<body><nav id='back' style='font-family: sans-serif; padding: .5rem 1rem; font-size: 1rem'>"
                  "<a href='/' style='display: inline-flex; align-items: center; min-height: 44px'>"
                  "← lama-dice: Play, Watch, Results</a></nav>")


@router.get("/docs", include_in_schema=False)
def api_docs(request: Request) -> Response:
    """The API's Swagger UI, every asset served from the installed packages (no CDN: it works offline)."""
    from fastapi.openapi.docs import get_swagger_ui_html
    from fastapi.responses import HTMLResponse

    if docs_assets() is None:
        return HTMLResponse(
            "<!doctype html><html lang='en'><head><meta charset='utf-8'><title>API — lama-dice</title>"
            "<meta name='viewport' content='width=device-width, initial-scale=1'>"
            "<link rel='stylesheet' href='/static/style.css'></head><body><main><p><a href='/'>← lama-dice: "
            "Play, Watch, Results</a></p><h1>The lama-dice API</h1>"
            "<p>This page shows the API with Swagger UI, whose files come from the <code>fastapi-offline</code> "
            "package (part of the <code>web</code> extra), which is not installed here: "
            "<code>pip install fastapi-offline</code>. The API's schema is at "
            "<a href='/openapi.json'>/openapi.json</a>; docs/web.md describes it.</p></main></body></html>")
    page = get_swagger_ui_html(openapi_url=request.app.openapi_url, title="lama-dice API",
                               swagger_js_url=f"{DOCS_ASSETS}/swagger-ui-bundle.js",
                               swagger_css_url=f"{DOCS_ASSETS}/swagger-ui.css",
                               swagger_favicon_url=f"{DOCS_ASSETS}/favicon.png")
    # the way back to the app, as on every page of it (Swagger UI's page has no header of its own)
    body = bytes(page.body).replace(b"<body>", DOCS_BACK_LINK.encode(), 1)
    return HTMLResponse(body.decode())


# ---------------------------------------------------------------------- API: about the server
_GAME_404 = {404: "no game with that id: never made, or dropped (docs/web.md, \"The limits\")"}
_RULES_409 = {409: "an action the rules do not allow now (the engine names the legal ones), a move when it is "
                   "not your decision, or a stale seq"}
_RECORD_422 = {422: "a file that is not a legal record: replay holds lama-dice replay's result for it "
                    "(or a record too long to show)"}


@router.get("/api/info", tags=["server"], response_model=None, responses=answers(ok=Info))
def info(request: Request) -> dict[str, Any]:
    """The version, the table's colours, the agents offered, the limits, the folders served."""
    from lama_dice.agents.registry import registered
    from lama_env import __version__
    from lama_env.picture import palette

    from ..play import default_opponent

    cfg = _settings(request)
    games = cfg.games
    return {"version": __version__, "palette": palette(), "default_opponent": default_opponent(),
            "agents": {"shipped": shipped_specs(), "builtin": builtin_specs(), "trusted": list(cfg.trusted),
                       "help": {e.usage: e.help for e in registered().values()}},
            "limits": {"max_games": games.max_games, "finished_ttl_s": games.finished_ttl_s,
                       "idle_ttl_s": games.idle_ttl_s, "max_upload_bytes": MAX_UPLOAD,
                       "max_body_bytes": MAX_BODY},
            "records": cfg.records is not None, "results": cfg.results is not None}


# ---------------------------------------------------------------------- API: games
_SETTINGS_400 = {400: "bad game settings: players outside 1..6, a seat outside the table, specs that do not fit "
                     "the seats, an unknown agent spec or one not offered to web pages, a network for another "
                     "player count"}


@router.post("/api/games", status_code=201, tags=["games"], response_model=None, operation_id="new_game",
             responses=answers(400, 422, ok=GameState, ok_status=201, links=True, why=_SETTINGS_400))
def new_game(request: Request, body: NewGame) -> dict[str, Any]:
    """Start a game; the agents play until it is your decision. Returns the game's state."""
    g = _settings(request).games.new(body.players, body.seat, body.opponents, body.seed)
    with g.lock:
        return g.state()


@router.get("/api/games/{game_id}", tags=["games"], response_model=None, operation_id="game_state",
            responses=answers(404, 422, ok=GameState, why=_GAME_404, links=True))
def game_state(request: Request, game_id: str) -> dict[str, Any]:
    """The game's state: the table, your choices, what happened since your last move, the result."""
    g = _settings(request).games.get(game_id)
    with g.lock:
        return g.state()


@router.post("/api/games/{game_id}/act", tags=["games"], response_model=None, operation_id="act",
             responses=answers(404, 409, 422, ok=GameState, why={**_GAME_404, **_RULES_409}, links=True))
def act(request: Request, game_id: str, body: Act) -> dict[str, Any]:
    """Make your move (an action id from the state's choices); the agents then play until your next decision."""
    g = _settings(request).games.get(game_id)
    with g.lock:
        g.act(body.action, body.seq)
        return g.state()


@router.get("/api/games/{game_id}/record", tags=["games"], response_model=None, operation_id="game_record",
            responses=answers(404, 422, ok=RECORD_SCHEMA, why=_GAME_404))
def record(request: Request, game_id: str, download: bool = False) -> Response:
    """The game so far as a lama-dice-record/2 record: who played, the seed, the version (`lama-dice replay`)."""
    g = _settings(request).games.get(game_id)
    with g.lock:
        rec = g.record()
    headers = {"Content-Disposition": f'attachment; filename="lama-dice-game-{game_id[:8]}.json"'} \
        if download else {}
    return Response(json.dumps(rec, indent=1) + "\n", media_type="application/json", headers=headers)


# ---------------------------------------------------------------------- API: records (Watch)
@router.get("/api/records", tags=["records"], response_model=None, responses=answers(ok=RecordList))
def list_records(request: Request) -> dict[str, Any]:
    """The JSON files under --records (relative paths; index.json files left out), at most MAX_LISTED."""
    root = _settings(request).records
    if root is None:
        return {"folder": None, "files": [], "more": 0, "skipped": []}
    files, skipped = [], []
    for p in root.rglob("*.json"):
        name = p.relative_to(root).as_posix()
        if safe_text(name) != name:  # a name a web page cannot carry or ask for again: skipped, with the reason
            skipped.append([safe_text(name), UNLISTED_NAME])
        elif p.is_file() and p.name != "index.json":
            files.append(name)
    files.sort()
    return {"folder": safe_text(root), "files": files[:MAX_LISTED], "more": max(0, len(files) - MAX_LISTED),
            "skipped": sorted(skipped)[:MAX_LISTED]}



def record_path(root: Path, name: str) -> Path:
    """The file ``name`` (a relative path, as ``/api/records`` lists it) under ``root``, checked before use.

    Raises:
        WebError (400): a name no listed record has: a NUL or another control character, longer than
            :data:`MAX_NAME` characters or a part longer than 255.
        NotFoundError: an absolute path, a ``.`` or ``..`` part, a backslash, not a ``.json`` file, a file
            outside ``root`` (through a link), or no such file.
    """
    parts = name.split("/")
    if (len(name) > MAX_NAME or any(len(part) > 255 for part in parts)
            or any(ord(c) < 32 or ord(c) == 127 for c in name)):
        raise WebError(f"not a record name: {clip(name)} (the names /api/records lists are relative paths "
                       f"of at most {MAX_NAME} characters, without control characters)")
    missing = NotFoundError(f"no record {clip(name)} under --records")
    if "\\" in name or not name.endswith(".json") or any(part in ("", ".", "..") for part in parts):
        raise missing
    try:
        target = root.joinpath(*parts).resolve()
        if not target.is_relative_to(root) or not target.is_file():
            raise missing
    except (OSError, RuntimeError, ValueError):  # a link loop, a name the file system refuses
        raise missing from None
    return target


@router.get("/api/records/{path:path}", tags=["records"], response_model=None, responses=answers(
    400, 404, 413, 422, ok=Frames,
    why={400: "a malformed record name (a control character, too long)",
         404: "no such record under --records (or the server was started without it), a path that leaves "
              "the folder, a file that is not .json",
         413: "a record file over 5 MiB", **_RECORD_422}))
def record_file(request: Request, path: str) -> JSONResponse:
    """A record under --records, step by step (422 with the replay result if it is not a legal record)."""
    from ..recordfile import load_record_file

    root = _settings(request).records
    if root is None:
        raise NotFoundError("the server was started without --records DIR")
    target = record_path(root, path)
    try:
        size = target.stat().st_size
    except OSError:
        raise NotFoundError(f"no record {clip(path)} under --records") from None
    if size > MAX_UPLOAD:
        return _error(413, f"{clip(path)}: larger than {MAX_UPLOAD // 2**20} MiB (the size limit of a record)")
    rec, fault = load_record_file(str(target), name=path)  # messages name the file as listed, not where it is
    return _frames_or_error(rec, fault)


@router.post("/api/replay", tags=["records"], response_model=None, responses=answers(
    413, 422, ok=Frames, why={413: "a record over 5 MiB, refused while it is read", **_RECORD_422}),
    openapi_extra={"requestBody": {"required": True, "description": "the record's JSON text (UTF-8)", "content": {
        "application/json": {"schema": RECORD_SCHEMA}, "text/plain": {"schema": {"type": "string"}}}}})
async def replay_upload(request: Request, name: str = "upload") -> JSONResponse:
    """A record sent as the request body (its JSON text), step by step; as /api/records/{path}."""
    from ..recordfile import parse_record_bytes

    rec, fault = parse_record_bytes(await request.body(), name[:200])  # BodyLimit bounds the body
    return _frames_or_error(rec, fault)


# ---------------------------------------------------------------------- API: results
@router.get("/api/results", tags=["results"], response_model=None, responses=answers(ok=Results))
def results_data(request: Request) -> dict[str, Any]:
    """Score cards (per task, agents ranked) and league / evaluate reports under --results."""
    from .results import load_results

    return load_results(_settings(request).results)


# ---------------------------------------------------------------------- errors
async def _web_error(request: Request, exc: Exception) -> JSONResponse:
    return _error(cast(WebError, exc).status, str(exc))


async def _rules_error(request: Request, exc: Exception) -> JSONResponse:
    return _error(409, str(exc).splitlines()[0])


async def _bad_body(request: Request, exc: Exception) -> JSONResponse:
    return _error(422, _validation_message(cast(RequestValidationError, exc)))


async def _http_error(request: Request, exc: Exception) -> JSONResponse:
    e = cast(StarletteHTTPException, exc)
    cause = e.__cause__
    if e.status_code == 400 and isinstance(cause, InputError):  # the bounded reader refused the JSON body
        return _error(422, str(cause))
    if e.status_code == 400 and isinstance(cause, ValueError):  # FastAPI could not read the JSON body
        why = "not UTF-8 text" if isinstance(cause, UnicodeDecodeError) else str(cause).split(";")[0]
        return _error(422, f"body: not readable JSON ({why[:120]})")
    return _error(e.status_code, str(e.detail), headers=e.headers)


async def _server_error(request: Request, exc: Exception) -> JSONResponse:
    return _error(500, "internal error: the server's log has the details")


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

    app = FastAPI(title="lama-dice", version=__version__, docs_url=None, redoc_url=None,
                  description="Play Don't L.L.A.M.A. Dice against agents, watch records, read results. "
                              "Every request is checked by the rules engine (lama_env); errors are "
                              '`{"error": "<one line>"}` with a 4xx status. See docs/web.md.')
    app.add_middleware(BodyLimit, limit=MAX_BODY, limits={"/api/replay": MAX_UPLOAD})
    if allowed_hosts is not None:
        app.add_middleware(HostCheck, hosts=tuple(allowed_hosts))
    games = store if store is not None else GameStore(trusted=trusted_agents)
    app.state.settings = Settings(games=games, records=Path(records).resolve() if records is not None else None,
                                  results=Path(results) if results is not None else None,
                                  trusted=tuple(trusted_agents))
    app.state.games = games
    app.add_exception_handler(WebError, _web_error)
    app.add_exception_handler(LamaDiceError, _rules_error)
    app.add_exception_handler(RequestValidationError, _bad_body)
    app.add_exception_handler(StarletteHTTPException, _http_error)
    app.add_exception_handler(Exception, _server_error)
    app.include_router(router)
    assets = docs_assets()
    if assets is not None:
        app.mount(DOCS_ASSETS, StaticFiles(directory=assets), name="api-docs")
    app.mount("/static", StaticFiles(directory=STATIC), name="static")
    return app


__all__ = ["LOCAL_HOSTS", "MAX_BODY", "MAX_GAMES", "MAX_NAME", "MAX_UPLOAD", "BodyLimit", "create_app", "record_path"]
