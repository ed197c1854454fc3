"""The API's answers as OpenAPI schemas: every status code each route gives, and the body that comes with it.

The routes of :mod:`.app` return plain dicts (built by :mod:`.games`, :mod:`.state`
and :mod:`.results`); the models here only describe them in ``/openapi.json``, so
that a client (or a schema-driven fuzzer: ``tests/test_web_fuzz.py`` checks every
answer against them) knows what comes back.  Objects may carry more fields than
listed (``additionalProperties`` is left open), never fewer of the required ones.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from lama_env.record import MAX_NAME, MAX_SPEC, MAX_VERSION, RECORD_FORMATS

_FACE = {"type": "string", "enum": ["L", "1", "2", "3", "4", "5", "6"]}
_FACES = {"type": "array", "items": _FACE}
#: ``lama-dice-record/1`` and ``/2`` (with its optional ``about``) as a JSON schema (docs/RULES.md, "Record
#: fields"): the shape a record has; whether it
#: is legal (the hands, the order of turns, the dice) only the replay tells (422 with its result).
RECORD_SCHEMA: dict[str, Any] = {
    "title": "Record",
    "description": f"a {' or '.join(RECORD_FORMATS)} game record (docs/RULES.md, \"Game records\")",
    "type": "object",
    "required": ["format", "players", "rounds"],
    "additionalProperties": False,
    "properties": {
        "format": {"type": "string", "enum": list(RECORD_FORMATS)},
        "about": {"type": "object", "additionalProperties": False,
                  "description": "lama-dice-record/2 only: who played, the seed, the version (docs/RULES.md, "
                                 "\"Who played\")",
                  "properties": {
                      "names": {"type": "array", "items": {"type": "string", "minLength": 1, "maxLength": MAX_NAME}},
                      "agents": {"type": "array", "items": {"anyOf": [
                          {"type": "string", "minLength": 1, "maxLength": MAX_SPEC}, {"type": "null"}]}},
                      "seed": {"anyOf": [{"type": "integer", "minimum": 0}, {"type": "null"}]},
                      "version": {"type": "string", "minLength": 1, "maxLength": MAX_VERSION}}},
        "players": {"type": "integer", "minimum": 1, "maximum": 6},
        "rules": {"type": "object", "description": "RulesConfig fields (triple_llama, must_discard, "
                                                   "end_threshold, dice); missing: the default rules"},
        "start_points": {"type": "array", "items": {"type": "integer", "minimum": 0}},
        "rounds": {"type": "array", "minItems": 1, "items": {
            "type": "object", "required": ["start_player", "hands", "turns"], "additionalProperties": False,
            "properties": {
                "start_player": {"type": "integer", "minimum": 0, "maximum": 5},
                "hands": {"type": "array", "items": {**_FACES, "minItems": 6, "maxItems": 6}},
                "turns": {"type": "array", "items": {
                    "type": "object", "required": ["player", "action"], "additionalProperties": False,
                    "properties": {
                        "player": {"type": "integer", "minimum": 0, "maximum": 5},
                        "action": {"type": "string", "enum": ["roll", "quit"]},
                        "dice": {**_FACES, "minItems": 3, "maxItems": 3},
                        "discard": _FACES,
                        "take": _FACE}}}}}},
    },
}


class ErrorBody(BaseModel):
    """Every refusal: one line saying what is wrong."""

    error: str = Field(description="what is wrong, on one line")


class ReplayFault(BaseModel):
    """The replay result of a record that is not legal (as ``lama-dice replay`` prints it)."""

    valid: bool = Field(description="false")
    round: int | None = Field(description="the first bad round (0-based), or null for the record as a whole")
    turn: int | None = Field(description="the first bad turn of that round, or null for the round itself")
    error: str


class RecordErrorBody(ErrorBody):
    """A record that does not replay (or is too long to show)."""

    replay: ReplayFault | None = Field(None, description="lama-dice replay's result for the record")


class Choice(BaseModel):
    """One of the person's options now."""

    action: int = Field(description="its action id (lama_env.actions): send it to /act")
    label: str = Field(description="the button's name: Roll, Quit, Take 4, Discard L, 3 ...")
    outcome: str | None = Field(description="what a discard or take leads to (null before a roll)")


class Odds(BaseModel):
    """Before the person's roll: the exact chance that it matches nothing."""

    p: float
    fraction: str
    busts: bool = Field(description="whether such a roll is a bust (the person is the last one in)")
    text: str


class LastRound(BaseModel):
    """The round that ended last: since the person's last move (``round_end``), or the game's last one."""

    ended_by: str
    points: list[int]
    totals: list[int]


class Standing(BaseModel):
    """A seat's place at the game's end."""

    place: int
    seat: int
    name: str
    total: int


class GameResult(BaseModel):
    """The game's end."""

    winners: list[int]
    totals: list[int]
    rounds: int
    standings: list[Standing]


class RoundEndView(BaseModel):
    """A round's end the page pauses on (rounds flow on: the game has dealt the next round)."""

    table: dict[str, Any] = Field(description="the table as the round ended (phase round_end), as table")
    events: list[str] = Field(description="what happened up to the round's end, one line each")


class GameState(BaseModel):
    """A game as the Play page draws it (docs/web.md, "The API")."""

    id: str
    seq: int = Field(description="the person's moves so far: send it back with the next move")
    you: int = Field(description="the person's seat")
    names: list[str]
    opponents: dict[str, str] = Field(description="the agent spec of each other seat, by seat")
    table: dict[str, Any] = Field(description="what the page draws: round, phase, status, current, row, dice, "
                                              "takeable, seats (display, points, total, quit, tag, glow) ...")
    choices: list[Choice]
    events: list[str] = Field(description="what happened since the person's last move, one line each")
    odds: Odds | None
    round_end: RoundEndView | None = Field(description="the last round that ended since the person's last move, "
                                                       "the game going on: the page pauses on it before the table")
    game_over: bool
    last_round: LastRound | None
    result: GameResult | None


class Limits(BaseModel):
    """The server's bounds (docs/web.md, "The limits")."""

    max_games: int
    finished_ttl_s: float
    idle_ttl_s: float
    max_upload_bytes: int = Field(description="the largest record POST /api/replay reads")
    max_body_bytes: int = Field(description="the largest request body of every other route")


class Info(BaseModel):
    """About the server."""

    version: str
    palette: dict[str, Any]
    default_opponent: str
    agents: dict[str, Any] = Field(description="shipped, builtin, trusted (specs) and help (per spec)")
    limits: Limits
    records: bool = Field(description="whether the server was started with --records")
    results: bool = Field(description="whether the server was started with --results")


class RecordList(BaseModel):
    """The record files under --records."""

    folder: str | None
    files: list[str] = Field(description="paths relative to the folder, for /api/records/{path}")
    more: int = Field(description="files not listed (past the listing's limit)")
    skipped: list[list[str]] = Field(default_factory=list,
                                     description="[name, reason] of each .json file not listed (a name that is "
                                                 "not UTF-8, shown with U+FFFD for each byte that is not)")


class Frame(BaseModel):
    """One step of a record: a deal or a turn."""

    round: int
    turn: int = Field(description="1-based; 0 is the deal")
    line: str
    table: dict[str, Any]


class Frames(BaseModel):
    """A legal record, step by step."""

    players: int
    names: list[str]
    rounds: int
    result: dict[str, Any] = Field(description="the replay result (docs/RULES.md, \"Replay results\")")
    frames: list[Frame]


class Results(BaseModel):
    """Score cards and reports under --results."""

    folder: str | None
    tasks: list[dict[str, Any]]
    reports: list[dict[str, Any]]
    skipped: list[list[str]] = Field(description="[file, why] pairs")


def answers(*statuses: int, ok: type[BaseModel] | dict[str, Any] | None = None, ok_status: int = 200,
            why: dict[int, str] | None = None, links: bool = False) -> dict[int | str, dict[str, Any]]:
    """A route's ``responses=``: its success body ``ok`` and its refusals, each with why it comes.

    The refusals are ``statuses`` (the reason from ``why``, else from :data:`REFUSALS`) and those every
    route may give: 400 for a foreign Host, 413 for a body over the limit.  With ``links``, the success
    body's ``id`` is linked to the routes of that game (:data:`GAME_LINKS`, OpenAPI links).
    """
    why = why or {}
    out: dict[int | str, dict[str, Any]] = {}
    if isinstance(ok, dict):
        out[ok_status] = {"description": "OK", "content": {"application/json": {"schema": ok}}}
    elif ok is not None:
        out[ok_status] = {"model": ok, "description": "OK"}
    if links:
        out[ok_status]["links"] = GAME_LINKS
    for status in sorted({400, 413, *statuses}):
        text = why.get(status, REFUSALS[status])
        if status == 400 and status in why:
            text += "; or " + REFUSALS[400]
        model = RecordErrorBody if status == 422 and "replay" in text else ErrorBody
        out[status] = {"model": model, "description": text}
    return out


#: The routes of a game, from a game's state (its ``id``): the operation ids of :mod:`.app`'s game routes.
GAME_LINKS = {name: {"operationId": op, "parameters": {"game_id": "$response.body#/id"}}
              for name, op in (("State", "game_state"), ("Act", "act"), ("Record", "game_record"))}

#: What each refusal means on any route (a route's own ``why`` says more).
REFUSALS = {
    400: "a request addressed to a Host the server does not answer (DNS rebinding guard)",
    404: "no such game (never made, or dropped: docs/web.md, \"The limits\")",
    409: "an action the rules do not allow now, a move when it is not your decision, or a stale seq",
    413: "a request body over the route's limit (64 KiB; 5 MiB for a record), refused while it is read",
    422: "a malformed request: a body that is not JSON, a missing, mistyped or unknown field, a bad query value",
}

__all__ = ["RECORD_SCHEMA", "REFUSALS", "ErrorBody", "Frames", "GameState", "Info", "RecordErrorBody", "RecordList",
           "Results", "answers"]
