"""Game records (``lama-dice-record/1`` and ``/2``): reading, checking and replaying.

The format, the ``about`` part of ``/2`` and the replay results: docs/RULES.md, Game records and Replay results.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterator, Mapping
from typing import Any

from . import actions as A
from .constants import RECORD_FORMAT
from .engine import IllegalActionError, LamaGame, Phase, check_hands, check_start_points
from .errors import LamaDiceError, bounded, clip
from .reader import MAX_SEED, InputError, check_seed, read_json
from .roundend import RoundEnd, ended, step_with_round_end
from .rules import FACES, NUM_FACES, RulesConfig, RulesError, check_num_players

#: The format of a record with the optional ``about`` part (``/1`` records are read as before).
RECORD_FORMAT_2 = "lama-dice-record/2"
#: Every record format the readers here replay.
RECORD_FORMATS = (RECORD_FORMAT, RECORD_FORMAT_2)
#: The fields of ``about`` and the longest string each of its texts may be.
ABOUT_KEYS, MAX_NAME, MAX_SPEC, MAX_VERSION = ("names", "agents", "seed", "version"), 64, 300, 64


class RecordError(LamaDiceError, ValueError):
    """A fault in a record, located by round and turn (0-based; None = the record / the round)."""

    def __init__(self, message: str, round: int | None = None, turn: int | None = None) -> None:
        """Keep the message (bounded) and where the fault is (None: the record / the round)."""
        message = bounded(message, 500)
        super().__init__(message)
        self.message, self.round, self.turn = message, round, turn

    def as_result(self) -> dict:
        """The fault as a :func:`replay` result: ``valid`` False, ``round``, ``turn`` and ``error``."""
        return {"valid": False, "round": self.round, "turn": self.turn, "error": self.message}


#: A record's JSON text is read up to this many bytes (whole games take 1 to 8 KB); a longer one is refused unparsed.
MAX_RECORD_BYTES = 5 * 1024 * 1024


def parse_record_json(text: str | bytes, name: str = "the record") -> Any:
    """Parse a record's JSON text (at most :data:`MAX_RECORD_BYTES`) with the bounded reader, else RecordError."""
    if len(text) > MAX_RECORD_BYTES:
        raise RecordError(f"not a game record: {name} is larger than {MAX_RECORD_BYTES // 2**20} MiB "
                          "(the size limit of a record)")
    if isinstance(text, bytes | bytearray):
        try:
            text = bytes(text).decode("utf-8")
        except UnicodeDecodeError:
            raise RecordError(f"not a game record: {name} is not UTF-8 text") from None
    try:
        return read_json(text, "")  # a fault says what is wrong and where in the text (a file is named by the caller)
    except InputError as e:
        raise RecordError(f"not a game record: {e}") from None


_RECORD_KEYS = {"format", "players", "rules", "start_points", "rounds"}


def _is_int(x: Any) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


def _check_shape(rec: Any) -> None:
    """Is this a game record at all (RecordError, round None)?  Rounds and turns are checked as replay reaches them."""
    if not isinstance(rec, Mapping):
        raise RecordError(f"not a game record: expected a JSON object, got {type(rec).__name__}")
    if rec.get("format") not in RECORD_FORMATS:
        raise RecordError(f"not a game record: format must be {clip(RECORD_FORMAT)} or {clip(RECORD_FORMAT_2)}, "
                          f"got {clip(rec.get('format'))}")
    for key in ("players", "rounds"):
        if key not in rec:
            raise RecordError(f"not a game record: missing field {clip(key)}")
    unknown = sorted(set(rec) - _RECORD_KEYS - ({"about"} if rec["format"] == RECORD_FORMAT_2 else set()))
    if unknown:
        extra = f" ({clip(RECORD_FORMAT_2)} records may have 'about')" if unknown[0] == "about" else ""
        raise RecordError(f"unknown record field {clip(unknown[0])}{extra}")
    if not _is_int(rec["players"]):
        raise RecordError(f"players must be an integer, got {clip(rec['players'])}")
    if not isinstance(rec["rounds"], list):
        raise RecordError("rounds must be a list")


def _check_about(about: Any, n: int) -> None:
    """The optional ``about`` part of a ``/2`` record: who played, the seed, the version (RecordError, round None)."""
    if not isinstance(about, Mapping):
        raise RecordError(f"about must be an object, got {type(about).__name__}")
    unknown = sorted(set(about) - set(ABOUT_KEYS))
    if unknown:
        raise RecordError(f"unknown about field {clip(unknown[0])} (known: {', '.join(ABOUT_KEYS)})")
    for key, limit, null in (("names", MAX_NAME, False), ("agents", MAX_SPEC, True)):
        if key not in about:
            continue
        items = about[key]
        what = "a name" if key == "names" else "an agent spec or null (a person)"
        if not isinstance(items, list) or len(items) != n:
            raise RecordError(f"about.{key} must list {n} items ({what} per player), got {clip(items)}")
        for p, x in enumerate(items):
            if not (x is None and null) and (not isinstance(x, str) or not x.strip() or len(x) > limit):
                raise RecordError(f"about.{key}[{p}] must be {what}: a non-empty string of at most {limit} "
                                  f"characters, got {clip(x)}")
    if (seed := about.get("seed")) is not None:
        check_seed(seed, RecordError, "about.seed")
    version = about.get("version")
    if "version" in about and not (isinstance(version, str) and 0 < len(version) <= MAX_VERSION):
        raise RecordError(f"about.version must be a non-empty string of at most {MAX_VERSION} characters, "
                          f"got {clip(version)}")


def with_about(record: Mapping[str, Any], *, names: list[str] | None = None, agents: list[str | None] | None = None,
               seed: int | None = None, version: str) -> dict:
    """``record`` as a ``/2`` record whose ``about`` says who played (a new dict; docs/RULES.md, Who played)."""
    about: dict[str, Any] = {}
    for key, items, limit in (("names", names, MAX_NAME), ("agents", agents, MAX_SPEC)):
        if items is not None:  # (a longer text is cut, with an ellipsis)
            about[key] = [x[:limit - 1] + "\u2026" if isinstance(x, str) and len(x) > limit else x for x in items]
    about["seed"] = seed if seed is None or not _is_int(seed) or seed <= MAX_SEED else None
    about["version"] = version
    _check_about(about, record["players"])
    return {**record, "format": RECORD_FORMAT_2, "about": about}


def record_names(record: Mapping[str, Any]) -> list[str] | None:
    """The seat names a ``/2`` record's ``about`` gives (check the record first), else None."""
    about = record.get("about")
    if isinstance(about, Mapping) and isinstance(about.get("names"), list):
        return list(about["names"])
    return None


def _check_fields(x: Any, kind: str, required: tuple[str, ...], r: int, t: int | None, optional: tuple = ()) -> None:
    """A round or a turn is an object with its required fields and no unknown one (a turn's unknown fields first)."""
    if not isinstance(x, Mapping):
        raise RecordError(f"{kind} must be an object, got {type(x).__name__}", r, t)
    missing = [f"{kind} is missing field {clip(k)}" for k in required if k not in x]
    unknown = [f"unknown {kind} field {clip(k)}" for k in sorted(set(x) - {*required, *optional})]
    faults = unknown + missing if kind == "turn" else missing + unknown
    if faults:
        raise RecordError(faults[0], r, t)


def _check_round_shape(rnd: Any, r: int) -> None:
    """Structural checks of round ``r`` (fields and their types, face names in the hands)."""
    _check_fields(rnd, "round", ("start_player", "hands", "turns"), r, None)
    if not _is_int(rnd["start_player"]):
        raise RecordError(f"start_player must be an integer, got {clip(rnd['start_player'])}", r)
    if not isinstance(rnd["turns"], list):
        raise RecordError("turns must be a list", r)
    hands = rnd["hands"]  # counts and sizes are checked by the engine's check_hands
    for p, hand in enumerate(hands if isinstance(hands, list) else ()):
        for f in hand if isinstance(hand, list) else ():
            if not isinstance(f, str) or f not in FACES:
                raise RecordError(f"hand {p} has an unknown card {clip(f)}", r)


def _play_turn(game: LamaGame, turn: Mapping[str, Any], r: int, t: int) -> RoundEnd | None:
    """Apply the turn; the view of the round it ended (the game going on), else None."""
    player, action = turn["player"], turn["action"]
    if not _is_int(player) or not 0 <= player < game.num_players:
        raise RecordError(f"player must be 0..{game.num_players - 1}, got {clip(player)}", r, t)
    if player != game.current_player:
        raise RecordError(f"it is player {game.current_player}'s turn, not player {player}'s", r, t)
    if action == "quit":
        extra = sorted(set(turn) & {"dice", "discard", "take"})
        if extra:
            raise RecordError(f"a quit carries no {clip(extra[0])}", r, t)
        return step_with_round_end(game, A.QUIT)
    if action != "roll":
        raise RecordError(f"action must be 'roll' or 'quit', got {clip(action)}", r, t)
    if "dice" not in turn:
        raise RecordError("a roll must give its dice", r, t)
    dice = turn["dice"]
    if not isinstance(dice, list) or len(dice) != 3:
        raise RecordError(f"dice must list 3 faces, got {clip(dice)}", r, t)
    for d, f in enumerate(dice):
        if not isinstance(f, str) or f not in FACES:  # the engine also accepts indices; records use names
            raise RecordError(f"die {d} shows an unknown face {clip(f)}", r, t)
    try:
        end = step_with_round_end(game, A.ROLL, dice)
    except IllegalActionError as e:
        raise RecordError(str(e), r, t) from None
    if end is None and game.phase in (Phase.DISCARD, Phase.TAKE):
        return _play_choice(game, turn, r, t)
    what = "a bust" if (ended(end or game) or {}).get("busted") is not None else "a triple llama"
    for key in ("discard", "take"):
        if key in turn:
            raise RecordError(f"the roll was {what}: it carries no {clip(key)}", r, t)
    return end


def _play_choice(game: LamaGame, turn: Mapping[str, Any], r: int, t: int) -> RoundEnd | None:
    """The turn's discard after a matching roll, or its take after a roll that matched nothing."""
    if game.phase == Phase.DISCARD:
        if "take" in turn:
            raise RecordError("the roll matched the display: expected 'discard', not 'take'", r, t)
        if "discard" not in turn:
            raise RecordError("the roll matched the display: 'discard' is missing", r, t)
        faces = turn["discard"]
        if not isinstance(faces, list):
            raise RecordError(f"discard must be a list of faces, got {clip(faces)}", r, t)
        for f in faces:
            if f not in FACES:
                raise RecordError(f"discard has an unknown face {clip(f)}", r, t)
        counts = tuple(faces.count(f) for f in FACES)
        if sum(counts) > 3 or A.discard_action(counts) not in game.legal_actions():
            raise RecordError(_discard_fault(game, counts), r, t)
        return step_with_round_end(game, A.discard_action(counts))
    if "discard" in turn:
        raise RecordError("the roll matched nothing in the display: expected 'take', not 'discard'", r, t)
    if "take" not in turn:
        raise RecordError("the roll forces a take: 'take' is missing", r, t)
    face = turn["take"]
    if face not in FACES or A.take_action(FACES.index(face)) not in game.legal_actions():
        options = ", ".join(repr(FACES[a - A.TAKE_BASE]) for a in game.legal_actions())
        raise RecordError(f"cannot take {clip(face)}: the row cards shown by the dice are {options}", r, t)
    return step_with_round_end(game, A.take_action(FACES.index(face)))


def _discard_fault(game: LamaGame, counts: tuple[int, ...]) -> str:
    if sum(counts) == 0:
        return "must discard at least one card"
    dice, disp = game.dice or (), game.displays[game.current_player]
    for f in range(NUM_FACES):
        shown, held = sum(1 for d in dice if d == f), disp[f]
        if counts[f] > min(shown, held):
            return f"cannot discard {counts[f]} x '{FACES[f]}': the dice show {shown} and the display holds {held}"
    return "illegal discard"


def replay(rec: Any) -> dict:
    """Check ``rec`` (a parsed JSON object) and return its replay result (never raises)."""
    try:
        game = replay_game(rec)
    except RecordError as e:
        return e.as_result()
    result = game.result()
    if game.is_chance_node() and not result["rounds"][-1]["finished"]:
        result["rounds"].pop()  # the record ends at a round's end: the next deal is not in it
    return result


def replay_game(rec: Any) -> LamaGame:
    """Replay ``rec`` into a :class:`LamaGame` with explicit chance (RecordError; at a round's end: the deal's node)."""
    steps = iter_replay(rec)
    game = next(steps)[0]  # the game after the first deal: the same game each time, advanced in place
    deque(steps, 0)
    assert isinstance(game, LamaGame)
    return game


def iter_replay(rec: Any) -> Iterator[tuple[LamaGame | RoundEnd, int, int | None]]:
    """Replay ``rec`` step by step: ``(game, r, None)`` once round ``r`` is dealt, ``(game, r, t)`` after turn ``t``.

    ``game``: the same :class:`LamaGame`, advanced in place, or a :class:`~lama_env.roundend.RoundEnd` after a turn
    that ended a round; RecordError at the first fault, after every state before it (docs/RULES.md, From Python).
    """
    _check_shape(rec)
    n = rec["players"]
    check_num_players(n, RecordError, "players")
    try:
        rules = RulesConfig.from_dict(rec.get("rules"))
    except (RulesError, TypeError) as e:
        raise RecordError(f"bad rules: {e}") from None
    start_points = check_start_points(rec.get("start_points", [0] * n), n, RecordError)
    _check_about(rec.get("about", {}), n)  # only a /2 record may have it (_check_shape)
    rounds = rec["rounds"]
    if not rounds:
        raise RecordError("the record has no rounds")
    game: LamaGame | None = None
    for r, rnd in enumerate(rounds):
        if game is not None:
            if game.game_over:
                raise RecordError("round after the end of the game", r)
            if not game.is_chance_node():  # (a round's end leaves the next deal's chance node)
                raise RecordError("the round is unfinished but another round follows", r - 1)
        _check_round_shape(rnd, r)
        if game is None:
            sp = rnd["start_player"]
            if not 0 <= sp < n:
                raise RecordError(f"start_player must be 0..{n - 1}, got {clip(sp)}", r)
            game = LamaGame(n, rules, start_points=start_points, start_player=sp, chance="explicit")
        _deal(game, rnd, r)  # explicit chance: each round's deal is the record's, card by card
        yield game, r, None
        for t, turn in enumerate(rnd["turns"]):
            if game.game_over or game.is_chance_node():
                raise RecordError("turn after the end of the round", r, t)
            _check_fields(turn, "turn", ("player", "action"), r, t, ("dice", "discard", "take"))
            yield _play_turn(game, turn, r, t) or game, r, t


def _deal(game: LamaGame, rnd: Mapping[str, Any], r: int) -> None:
    """Deal round ``r`` of the record at the next deal's chance node, card by card (seat order)."""
    sp = rnd["start_player"]
    if sp != game.start_player:
        raise RecordError(f"start_player must be {game.start_player} (the rotation), got {clip(sp)}", r)
    try:
        hands = check_hands(rnd["hands"], game.num_players)
    except IllegalActionError as e:
        raise RecordError(str(e), r) from None
    for hand in hands:
        for face in hand:
            game.apply_chance(face)
