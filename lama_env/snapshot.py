"""The persistence of a :class:`~lama_env.engine.LamaGame`: its JSON string, its pickle and its compiled record.

:func:`serialize` / :func:`deserialize` (``LamaGame.serialize`` / ``deserialize``), :func:`getstate` /
:func:`setstate` (pickling) and :func:`to_state` / :func:`from_state` (the compiled engine's record;
docs/environments.md, The state API).  A serialized state is the game's record (the fields :func:`to_state`
hands out) with the books the record does not hold.  It is data a user may load from anywhere: its table
is restored through the one validator of a record (:func:`from_state`'s), the books are checked against
it, a bad field is named in a one-line :class:`StateFormatError`, and nothing in it is executed or looked
up by name.  The random streams are kept exactly, so a restored game draws the same future deals and dice.
Strings and pickles of an earlier state format are refused in one line (retired).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from operator import sub
from typing import Any

import numpy as np

from . import actions as A
from .constants import DECK_COUNTS, DISCARD, FACES, HAND_SIZE, NUM_DICE, NUM_FACES, ROLL_DISCARD, ROLL_TAKE, TURN
from .errors import LamaDiceError, clip, retired
from .reader import MAX_START_POINTS, MAX_TOTAL, InputError, read_json
from .rules import MAX_PLAYERS, MAX_ROUND_POINTS, RulesConfig, check_num_players, game_over, return_chip, score_display
from .transitions import ROUND_ENDINGS, match_limits, resolve_roll

#: The longest serialized state :func:`deserialize` reads (a whole game with its turn log takes 10 to 40 KB).
MAX_STATE_CHARS = 16 * 2**20

#: The state format that 0.3.0 wrote (the table spelled out field by field), and what to do with such a state.
RETIRED_FORMAT = "lama-dice-state/1"
_INSTEAD = ("load it with lama-dice 0.3.0 and save the game with to_record() (game records of every format "
            "replay), or serialize games again with this version")

#: The games this module reads and builds (:class:`lama_env.engine.LamaGame`; the engine imports this module).
LamaGame = Any

#: :mod:`lama_env.engine`, handed over by :func:`bind` (the engine imports this module: the import graph stays one-way).
E: Any = None

#: The record's fields that hold one entry per seat (the first N written); ``stats`` holds a row of them per count.
_PER_SEAT = ("quit", "tot", "rstart", "disp", "hands")


def bind(engine: Any) -> None:
    """Hand the persistence the engine module (called once, at the end of :mod:`lama_env.engine`'s import)."""
    global E
    E = engine


class StateFormatError(LamaDiceError, ValueError):
    """A serialized game state that cannot be read (not JSON, another format, a bad field)."""


def parse(text: Any) -> dict[str, Any]:
    """The JSON object of a serialized state, read with the bounded reader and checked to be of this format."""
    if not isinstance(text, (str, bytes)):
        raise StateFormatError(f"a serialized game state must be a string, got {type(text).__name__}")
    try:
        data = read_json(text, "", MAX_STATE_CHARS)
    except InputError as e:
        raise StateFormatError(f"not a serialized game state (bad JSON: {e})") from None
    if not isinstance(data, dict):
        raise StateFormatError("not a serialized game state (not a JSON object)")
    if data.get("format") == RETIRED_FORMAT:
        raise StateFormatError(retired(f"a {RETIRED_FORMAT} string", _INSTEAD, retired_in="0.4.0", last="0.3.0"))
    if data.get("format") != E.STATE_FORMAT:
        raise StateFormatError(f"not a {E.STATE_FORMAT} string (format {clip(data.get('format'))})")
    return data


def dumps(data: dict[str, Any]) -> str:
    """The stable text of a state: compact JSON with sorted keys (floats never appear)."""
    return json.dumps(data, sort_keys=True, separators=(",", ":"))


def field(data: dict[str, Any], key: str) -> Any:
    """``data[key]``, or a :class:`StateFormatError` naming the missing field."""
    if key not in data:
        raise StateFormatError(f"serialized game state: missing field {clip(key)}")
    return data[key]


def check_int(value: Any, key: str, lo: int, hi: int | None = None) -> int:
    """``value`` as an int in ``lo..hi`` (no upper bound if None), else a :class:`StateFormatError`."""
    if type(value) is not int or value < lo or (hi is not None and value > hi):
        span = f"{lo}.." + ("" if hi is None else str(hi))
        raise StateFormatError(f"serialized game state: {key} must be an integer {span}, got {clip(value)}")
    return value


def check_ints(value: Any, key: str, length: int | None, lo: int, hi: int | None = None) -> list[int]:
    """``value`` as a list of ``length`` ints in ``lo..hi`` (any length if None)."""
    if not isinstance(value, list) or (length is not None and len(value) != length):
        raise StateFormatError(f"serialized game state: {key} must be a list of {length or 'some'} integers, "
                               f"got {clip(value)}")
    return [check_int(v, key, lo, hi) for v in value]


def check_list(value: Any, key: str, length: int | None) -> list:
    """``value`` if it is a list (of ``length`` items, any length if None)."""
    if not isinstance(value, list) or (length is not None and len(value) != length):
        raise StateFormatError(f"serialized game state: {key} must be a list"
                               + ("" if length is None else f" of {length} items"))
    return value


def check_optional_int(value: Any, key: str, lo: int, hi: int) -> int | None:
    """None, or ``value`` as an int in ``lo..hi``."""
    return None if value is None else check_int(value, key, lo, hi)


def check_bool(value: Any, key: str) -> bool:
    """``value`` if it is a JSON boolean."""
    if not isinstance(value, bool):
        raise StateFormatError(f"serialized game state: {key} must be true or false, got {clip(value)}")
    return value


def check_choice(value: Any, key: str, options: tuple[Any, ...]) -> Any:
    """``value`` if it is one of ``options``."""
    if value not in options:
        raise StateFormatError(f"serialized game state: {key} must be one of {', '.join(map(repr, options))}, "
                               f"got {clip(value)}")
    return value


def _hex64(value: Any, name: str) -> int:
    """A 64-bit stream state written as 16 hexadecimal digits."""
    try:
        if isinstance(value, str) and len(value) == 16:
            return int(value, 16)
    except ValueError:
        pass
    raise StateFormatError(f"serialized game state: {name} must be 16 hexadecimal digits, got {clip(value)}")


def getstate(g: LamaGame) -> dict[str, Any]:
    """Pickle the record and the books (with the state format, checked on loading); the rules record is rebuilt."""
    state = {name: getattr(g, name) for name in E._PICKLED}
    state["format"] = E.STATE_FORMAT
    return state


def setstate(g: LamaGame, state: dict[str, Any]) -> None:
    """Restore a pickled game (see :meth:`__getstate__`): one pickled by this version of the engine."""
    got = state.get("format") if isinstance(state, dict) else type(state).__name__
    if got == RETIRED_FORMAT or (got == E.STATE_FORMAT and set(state) != {*E._PICKLED, "format"}):
        raise E.GameSetupError(retired("unpickling a LamaGame pickled by an earlier engine",
                                       _INSTEAD.replace("serialize", "pickle"), retired_in="0.4.0", last="0.3.0"))
    if got != E.STATE_FORMAT:
        raise E.GameSetupError(f"cannot unpickle a LamaGame of state format {clip(got)} (this version reads "
                               f"{E.STATE_FORMAT!r})")
    for name in E._PICKLED:
        setattr(g, name, state[name])
    g._rr = E._rules_record(g._n, g._rules)
    g._set_record(g._rec)
    g._fresh()


# ------------------------------------------------------------------ the JSON string: the record and the books
def _fields() -> tuple[str, ...]:
    """The record's fields a serialized state holds: :func:`to_state`'s, less those it writes neutral."""
    if E._G is None:  # the record dtype comes with the compiled engine
        E._load()
    return tuple(f for f in E.K_STATE_DTYPE.names if f not in E._SCRATCH and f != "pend")


def _seats(name: str, n: int) -> tuple[slice, ...]:
    """The index of field ``name``'s first ``n`` seats (all of it for a field that is not per seat)."""
    return (slice(None), slice(n)) if name == "stats" else (slice(n),) if name in _PER_SEAT else ()


def serialize(g: LamaGame) -> str:
    """The whole state as a stable, versioned JSON string (docs/environments.md, The state API).

    The record's fields (``state``: :func:`to_state`'s, the first N seats) and the books the record does not
    hold; the same state gives the same text, and :func:`deserialize` gives a game that continues the same way.
    """
    n = g._n
    c = g._chance
    s = _neutral(g)
    state = {f: s[f][_seats(f, n)].tolist() for f in _fields()}
    state["es"], state["ps"] = (f"{int(s[f]):016x}" for f in ("es", "ps"))
    data = {
        "format": E.STATE_FORMAT, "players": n, "rules": g._rules.to_dict(include_dice=True),
        "chance": "explicit" if g._explicit else "sampled", "record": g._record, "version": g._version,
        "start_points": g._start_points, "state": state,
        "chance_node": None if c is None else "roll" if c == E._ROLL_NODE else {"deal": len(c)},
        "triple_llamas": list(g._round_triples()), "discarded": g._discarded,
        "end": g._end if g._phase == E._GAME_OVER else None,
        "results": [dict(r, quit=list(r["quit"]), triple_llamas=list(r["triple_llamas"])) for r in g._results],
        "log": g._rounds if g._record else None,
    }
    if g._max_rounds:
        data["max_rounds"] = g._max_rounds
    return dumps(data)


def deserialize(text: str) -> LamaGame:
    """The game that :func:`serialize` wrote ``text`` from, on the same streams.

    The table goes through :func:`from_state`'s checks; the books are checked against it.  A state accepted
    here plays on legally to its end.

    Raises:
        lama_env.snapshot.StateFormatError: ``text`` is not a readable state (the message names the bad field).
    """
    data = parse(text)
    try:
        return _restore(data)
    except LamaDiceError as e:
        if isinstance(e, StateFormatError):
            raise
        raise StateFormatError(f"serialized game state: {e}") from None


def _restore(data: dict[str, Any]) -> LamaGame:
    n = check_int(field(data, "players"), "players", 1, MAX_PLAYERS)
    rules = field(data, "rules")
    if not isinstance(rules, dict):
        raise StateFormatError("serialized game state: rules must be an object")
    rc = RulesConfig.from_dict(rules)
    explicit = check_choice(field(data, "chance"), "chance", E.CHANCE_MODES) == "explicit"
    over = field(data, "end") is not None
    rec = _record_of(field(data, "state"), n)
    chance = _chance_node(field(data, "chance_node"), rec, n, explicit, over)
    g = _game_of(rec, n, rc, explicit, over, "serialized game state", "state.",
                 list(chance) if isinstance(chance, tuple) else None)
    g._chance = chance
    g._record = check_bool(field(data, "record"), "record")
    g._max_rounds = check_int(data.get("max_rounds", 0), "max_rounds", 0, MAX_TOTAL)
    g._version = check_int(field(data, "version"), "version", 0)
    g._start_points = check_ints(field(data, "start_points"), "start_points", n, 0, MAX_START_POINTS)
    g._results = [_check_result(r, n) for r in check_list(field(data, "results"), "results", None)]
    if over:
        g._end = _check_end(data["end"], n)
    r = g._rec[0]
    quit = r["quit"][:n].tolist()
    triples = check_ints(field(data, "triple_llamas"), "triple_llamas", n, 0,
                         int(r["nturn"]) + (chance == E._ROLL_NODE))
    discarded = check_ints(field(data, "discarded"), "discarded", None, E._DISCARD_BASE, A.NUM_ACTIONS - 1)
    if _pile(discarded) != _pile(g._discarded):
        raise StateFormatError("serialized game state: discarded must be the discards of the cards neither held "
                               "nor in the row (the deal less the displays and the row)")
    g._discarded = discarded
    for f in ("dice", "lim"):  # (what the step never reads is neutral, as to_state writes it)
        if _neutral(g)[f].tolist() != r[f].tolist():
            raise StateFormatError(f"serialized game state: state.{f} must be 0 outside a discard or take decision")
    if isinstance(chance, tuple) and (any(quit) or r["nturn"] or any(triples) or discarded
                                      or r["cur"] != r["start"] or r["row"] != E._FULL_MASK):
        raise StateFormatError("serialized game state: a deal under way has its start player to act, the full row "
                               "and no quit, turn, triple llama or discard yet")
    _check_rounds(g, over, quit, triples)
    g._set_modes()
    _check_log(g, field(data, "log"), over)
    return g


def _record_of(data: Any, n: int) -> np.ndarray:
    """A record (0-d) of a state's ``state`` object: its fields of the record's shapes (N seats), within their dtype."""
    names = _fields()
    if not isinstance(data, dict) or set(data) != set(names):
        raise StateFormatError(f"serialized game state: state must be an object with the fields {', '.join(names)}")
    rec = E._new_record().reshape(())
    for name in names:
        key = f"state.{name}"
        if name in ("es", "ps"):
            rec[name] = _hex64(data[name], key)
            continue
        dt = E.K_STATE_DTYPE.fields[name][0]
        shape = np.empty(dt.shape)[_seats(name, n)].shape
        info = np.iinfo(dt.base)
        rec[name][_seats(name, n)] = _nested(data[name], key, shape, int(info.min), int(info.max))
    return rec


def _nested(value: Any, key: str, shape: tuple[int, ...], lo: int, hi: int) -> Any:
    """``value`` as nested lists of ints in ``lo..hi`` of ``shape`` (an int for shape ``()``)."""
    if not shape:
        return check_int(value, key, lo, hi)
    return [_nested(v, key, shape[1:], lo, hi) for v in check_list(value, key, shape[0])]


def _chance_node(node: Any, rec: np.ndarray, n: int, explicit: bool, over: bool) -> tuple[int, ...] | str | None:
    """The pending chance event: None, a roll, or a deal under way (its cards so far: the record's ``hands``)."""
    if node is None or node == "roll":
        chance = None if node is None else E._ROLL_NODE
    elif isinstance(node, dict) and set(node) == {"deal"}:
        k = check_int(node["deal"], "chance_node.deal", 0, n * HAND_SIZE - 1)
        cards = rec["hands"][:n].ravel().tolist()
        chance = tuple(cards[:k])
        held = [[chance[i:i + HAND_SIZE].count(f) for f in E._FACE_RANGE] for i in range(0, n * HAND_SIZE, HAND_SIZE)]
        if cards != [*chance, *[0] * (n * HAND_SIZE - k)] or rec["disp"][:n].tolist() != held:
            raise StateFormatError("serialized game state: a deal under way holds the cards dealt so far in "
                                   "state.hands (0 after them) and state.disp")
    else:
        raise StateFormatError(f"serialized game state: bad chance_node {clip(node)}")
    if chance is not None and (over or rec["phase"] != TURN or not explicit):
        raise StateFormatError("serialized game state: a chance node waits at a turn of a game with explicit chance")
    return chance


def _pile(discarded: list[int]) -> list[int]:
    """The cards per face that the discard actions ``discarded`` put on the discard pile."""
    return [sum(A.DISCARDS[a - E._DISCARD_BASE][f] for a in discarded) for f in E._FACE_RANGE]


def _check_rounds(g: LamaGame, over: bool, quit: list[int], triples: list[int]) -> None:
    """The round count, the totals, the statistics and ``max_rounds`` against the results; set what was carried in."""
    n, res, r = g._n, g._results, g._rec[0]
    nround = int(r["nround"])
    g._carried_rounds = nround + over - len(res)
    if g._carried_rounds < 0 or (g._record and g._carried_rounds):
        raise StateFormatError(f"serialized game state: state.nround must count the finished rounds "
                               f"({len(res) - over}{'' if g._record else ' or more'}), got {nround}")
    if over and res and r["tot"][:n].tolist() != res[-1]["totals"]:
        raise StateFormatError("serialized game state: a finished game's totals must be its last round's")
    if g._max_rounds and nround + over > g._max_rounds:
        raise StateFormatError(f"serialized game state: round {nround} is past max_rounds ({g._max_rounds})")
    rstart = res[-1 - over]["totals"] if len(res) > over else g._start_points
    if r["rstart"][:n].tolist() != rstart:
        raise StateFormatError(f"serialized game state: state.rstart must be the totals the round began with "
                               f"{rstart} (the last round's or start_points)")
    stats = r["stats"][:, :n].tolist()
    carried = [list(row) for row in stats]  # (E._COUNTS) less what the results and the round under way count
    for x in [*res, *([] if over else [{"points": [0] * n, "busted": None, "went_out": None, "quit": quit,
                                         "triple_llamas": triples}])]:
        for k, key in ((0, "points"), (2, "quit"), (4, "triple_llamas")):
            carried[k] = list(map(sub, carried[k], x[key]))
        for k, key in ((1, "busted"), (3, "went_out")):
            if x[key] is not None:
                carried[k][x[key]] -= 1
    if min(map(min, carried)) < 0 or (g._record and any(map(any, carried))):
        raise StateFormatError("serialized game state: state.stats must count the results and the round under way"
                               + ("" if g._record else ", and what a game from from_state carried in"))
    g._triples0 = list(map(sub, stats[4], triples))


def _check_log(g: LamaGame, log: Any, over: bool) -> None:
    """The turn log (None without a record): every round dealt, and the roll that waits for its decision last."""
    g._rounds, g._pending = [], None
    if not g._record:
        if log is not None:
            raise StateFormatError("serialized game state: log must be null for a game with record false")
        return
    log = [_check_log_round(r, g._n) for r in check_list(log, "log", None)]
    dealt = not over and not isinstance(g._chance, tuple)  # the round under way is in the log
    if len(log) != len(g._results) + dealt:
        raise StateFormatError(f"serialized game state: the log must hold every round dealt "
                               f"({len(g._results) + dealt}), got {len(log)}")
    g._rounds = log
    if g._phase in (E._DISCARD, E._TAKE):
        t = log[-1]["turns"][-1] if log[-1]["turns"] else {}
        if (t.get("player") != g._current or t.get("action") != "roll" or "discard" in t or "take" in t
                or [FACES.index(f) for f in t["dice"]] != g._rec[0]["dice"].tolist()):
            raise StateFormatError("serialized game state: the log's last turn must be the roll that waits "
                                   "for its decision")
        g._pending = t


_RESULT_KEYS = ("finished", "ended_by", "went_out", "points", "totals", "busted", "quit", "triple_llamas")
_END_KEYS = ("points", "ended_by", "went_out", "busted")
_TURN_KEYS = {"player", "action", "dice", "discard", "take"}


def _check_end(end: Any, n: int) -> dict[str, Any]:
    """How a finished game's last round ended (``end``; a game from :func:`from_state` knows only the points)."""
    if not isinstance(end, dict) or set(end) != set(_END_KEYS):
        raise StateFormatError(f"serialized game state: end must be null or have the fields {', '.join(_END_KEYS)}")
    return {"points": check_ints(end["points"], "end.points", n, 0, MAX_ROUND_POINTS),
            "ended_by": check_choice(end["ended_by"], "end.ended_by", (None, *ROUND_ENDINGS)),
            "went_out": check_optional_int(end["went_out"], "end.went_out", 0, n - 1),
            "busted": check_optional_int(end["busted"], "end.busted", 0, n - 1)}


def _check_result(r: Any, n: int) -> dict[str, Any]:
    """A finished round's result of a serialized state (:attr:`LamaGame.last_round`), every field checked."""
    key = "results"
    if not isinstance(r, dict) or set(r) != set(_RESULT_KEYS):
        raise StateFormatError(f"serialized game state: a round result must have the fields "
                               f"{', '.join(sorted(_RESULT_KEYS))}")
    if r["finished"] is not True:
        raise StateFormatError(f"serialized game state: {key}: finished must be true, got {clip(r['finished'])}")
    return {"finished": True, "ended_by": check_choice(r["ended_by"], f"{key}.ended_by", ROUND_ENDINGS),
            "went_out": check_optional_int(r["went_out"], f"{key}.went_out", 0, n - 1),
            "points": check_ints(r["points"], f"{key}.points", n, 0, MAX_ROUND_POINTS),
            "totals": check_ints(r["totals"], f"{key}.totals", n, 0, MAX_TOTAL),
            "busted": check_optional_int(r["busted"], f"{key}.busted", 0, n - 1),
            "quit": tuple(check_bool(q, f"{key}.quit") for q in check_list(r["quit"], f"{key}.quit", n)),
            "triple_llamas": tuple(check_ints(r["triple_llamas"], f"{key}.triple_llamas", n, 0, MAX_TOTAL))}


def _check_log_round(r: Any, n: int) -> dict[str, Any]:
    """A round of the turn log (as :meth:`LamaGame.to_record` writes it), every field checked."""
    if not isinstance(r, dict) or set(r) != {"start_player", "hands", "turns"} or not isinstance(r["turns"], list):
        raise StateFormatError("serialized game state: a log round must have start_player, hands and a list of turns")
    check_int(r["start_player"], "log.start_player", 0, n - 1)
    for h in check_list(r["hands"], "log.hands", n):
        for f in check_list(h, "log.hands", HAND_SIZE):
            check_choice(f, "log.hands", FACES)
    for t in r["turns"]:
        if not isinstance(t, dict) or not {"player", "action"} <= set(t) <= _TURN_KEYS:
            raise StateFormatError("serialized game state: a log turn must have player and action, and only dice, "
                                   "discard or take besides")
        check_int(t["player"], "log.player", 0, n - 1)
        if check_choice(t["action"], "log.action", ("roll", "quit")) == "quit" and set(t) != {"player", "action"}:
            raise StateFormatError("serialized game state: a logged quit carries no dice, discard or take")
        if t["action"] == "roll":
            for f in check_list(field(t, "dice"), "log.dice", NUM_DICE):
                check_choice(f, "log.dice", FACES)
            if "discard" in t and "take" in t:
                raise StateFormatError("serialized game state: a logged roll carries a discard or a take, not both")
            for f in check_list(t.get("discard", []), "log.discard", None)[:NUM_DICE + 1]:
                check_choice(f, "log.discard", FACES)
            if "take" in t:
                check_choice(t["take"], "log.take", FACES)
    return r


# ------------------------------------------------------------------ the compiled engine's record
def _neutral(g: LamaGame) -> np.void:
    """The game's record with what the step never reads neutral (0, ``pend`` -1; ``dice`` and ``lim`` at a turn)."""
    s = g._rec[0].copy()
    for f in E._SCRATCH:
        s[f] = 0
    s["pend"] = -1
    if g._phase != E._DISCARD and g._phase != E._TAKE:
        s["dice"] = 0
        s["lim"] = 0
    return s


def to_state(g: LamaGame) -> np.ndarray:
    """The game now as the compiled engine's record of it (a copy): a 0-d array of ``lama_env._kernel.STATE_DTYPE``.

    Field for field what the kernel holds at the same point of the same game, what its step never reads
    neutral (docs/environments.md, The state API): a decision converts, and so does the game's end.

    Raises:
        E.IllegalActionError: the game waits for chance, or a total has reached the end threshold
            while it goes on (``start_points``: such a record is a finished game).
    """
    if g._chance is not None:
        raise E.IllegalActionError(f"to_state: the game waits for chance ({g._chance_name()}); "
                                 "a state record holds a decision or the game's end")
    if g._phase != E._GAME_OVER and game_over(g.totals, g._rules):
        raise E.IllegalActionError(f"to_state: a total has reached the end threshold ({g._rules.end_threshold}) "
                                 "while the game goes on; a record with one is a finished game")
    return np.array(_neutral(g), E.K_STATE_DTYPE).reshape(())


def from_state(state: Any, num_players: int, rules: RulesConfig | dict | None = None, *,
               chance: str = "sampled", rounds: str = "flow") -> LamaGame:
    """The game that a compiled-engine record holds (:func:`to_state`'s inverse), on the record's streams.

    ``state``: one record of ``lama_env._kernel.STATE_DTYPE`` (0-d, one-element, or an element of a batch);
    ``num_players`` and ``rules`` are the game's (docs/environments.md, The state API: no turn log, and
    totals at the end threshold are the game's end).

    Raises:
        lama_env.snapshot.StateFormatError: ``state`` is not such a record, or a field is out of
            range or disagrees with the others (the message names it).
        E.GameSetupError: a bad player count, ``chance`` or ``rounds``.
        lama_env.rules.RulesError: bad ``rules``.
    """
    if E._G is None:  # the record dtype comes with the compiled engine
        E._load()
    n = check_num_players(num_players, E.GameSetupError)
    rc = RulesConfig.from_dict(rules)
    explicit = E._is_explicit(chance)
    E._check_rounds(rounds)
    return _game_of(_one_record(state, E.K_STATE_DTYPE), n, rc, explicit, None, "state record")


def _game_of(rec: np.ndarray, n: int, rc: RulesConfig, explicit: bool, over: bool | None, what: str,
             pre: str = "", dealt: list[int] | None = None) -> LamaGame:
    """The game over a copy of record ``rec``, every field checked alone and against the others (the one validator).

    ``over``: whether the game is over (None: the totals tell, at the end threshold); ``what`` and ``pre``
    begin the messages and the field names; ``dealt``: the cards of a deal under way (None: the deal is
    ``hands``).  The game has :func:`from_state`'s books: no log, no results, the record's stats carried in.
    """
    bad, lab = f"{what}: ", f"{what}: {pre}"

    def ints(key: str, lo: int, hi: int | None = None, seats: int | None = None, row: int | None = None) -> Any:
        return _record_ints(rec, key, lo, hi, seats, row, lab)

    phase = ints("phase", 0, 2)
    row = ints("row", 0, E._FULL_MASK)
    cur = ints("cur", 0, n - 1)
    ints("start", 0, n - 1)
    active = ints("active", 0, n)
    ints("nround", 0, MAX_TOTAL)
    nturn = ints("nturn", 0, rc.max_round_turns)
    quit = ints("quit", 0, 1, n)
    tot = ints("tot", 0, MAX_TOTAL, n)
    rstart = ints("rstart", 0, MAX_TOTAL, n)
    disp = ints("disp", 0, HAND_SIZE + NUM_FACES, n)
    hands = ints("hands", 0, NUM_FACES - 1, n)
    stats = [ints("stats", 0, MAX_TOTAL, n, k) for k in range(len(E._COUNTS))]
    if active != n - sum(quit):
        raise StateFormatError(f"{lab}active must count the players who have not quit ({n - sum(quit)}), got {active}")
    if over is None:
        over = game_over(tot, rc)
    if over and phase != TURN:
        raise StateFormatError(f"{bad}a finished game (a total at the end threshold {rc.end_threshold}) stands "
                               f"at a turn (phase {TURN}), got phase {phase}")
    pile = _check_table(rc, over, cur, quit, row, disp, [f for h in hands for f in h] if dealt is None else dealt,
                        nturn, phase, what)
    if not over and any(t > r for t, r in zip(tot, rstart, strict=True)):
        raise StateFormatError(f"{lab}tot {tot} above rstart {rstart} (a total only falls during a round)")
    if any(stats[2][p] < quit[p] for p in range(n)):
        raise StateFormatError(f"{lab}stats count fewer quits than the players who have quit")
    if phase != TURN and not over:
        try:
            dice = E.check_dice(rc, [int(x) for x in rec["dice"]])
        except E.IllegalActionError as e:
            raise StateFormatError(f"{lab}dice: {e}") from None
        lim = [int(x) for x in rec["lim"]]
        if phase == DISCARD and tuple(lim) != match_limits(disp[cur], dice):
            raise StateFormatError(f"{lab}lim must be the roll's discard limits per face "
                                   f"{list(match_limits(disp[cur], dice) or ())}, got {lim}")
        kind, _ = resolve_roll(disp[cur], [row >> f & 1 for f in E._FACE_RANGE], dice, last_player=active == 1,
                               rules=rc)
        name = E.Phase(phase).name.lower()
        if kind != (ROLL_DISCARD if phase == DISCARD else ROLL_TAKE):
            raise StateFormatError(f"{bad}the dice {list(dice)} ask for a {kind}, not a {name} decision")
    g = E.LamaGame.__new__(E.LamaGame)
    g._n, g._rules, g._rr = n, rc, E._rules_record(n, rc)
    g._set_record(s := E._new_record())
    s[0] = rec
    g._rng = None
    g._explicit, g._chance = explicit, None
    g._fresh()
    g._record, g._rounds, g._pending, g._results, g._version = False, [], None, [], 0
    g._current, g._phase, g._start_points = cur, E._GAME_OVER if over else E.Phase(phase), rstart
    g._discarded = [A.DISCARD_ACTION[tuple(int(i == f) for i in E._FACE_RANGE)] for f in E._FACE_RANGE
                    for _ in range(pile[f])]
    g._triples0 = stats[4]
    g._end = {"points": [score_display(d) for d in disp], "ended_by": None, "went_out": None,
              "busted": None} if over else None
    g._carried_rounds, g._max_rounds = rec["nround"].item() + over, 0
    g._set_modes()
    return g


def _check_table(rules: RulesConfig, over: bool, cur: int, quit: Sequence[Any], row: int, disp: list[list[int]],
                 cards: list[int], nturn: int, phase: int, what: str) -> list[int]:
    """Check a round's table; return its discard pile, cards per face.

    The deal uses the deck's cards, every card dealt is held, in the row or discarded, and a game that
    goes on has a player to act still in the round, a row, no empty display once dealt and turns left.
    ``cards``: the faces dealt so far (the whole deal but while it is under way).
    """
    dealt = [cards.count(f) for f in E._FACE_RANGE]
    pile = [0] * NUM_FACES
    for f in E._FACE_RANGE:
        if dealt[f] > DECK_COUNTS[f]:
            raise StateFormatError(f"{what}: hands deal {dealt[f]} cards '{FACES[f]}' but the deck has only "
                                   f"{DECK_COUNTS[f]}")
        left = dealt[f] + 1 - (row >> f & 1) - sum(d[f] for d in disp)  # dealt and taken from the row, not held
        if left < 0:
            raise StateFormatError(f"{what}: the displays hold more cards '{FACES[f]}' than the deal and the "
                                   "row gave them")
        pile[f] = left
    if over:
        return pile
    if quit[cur] or row == 0:
        raise StateFormatError(f"{what}: no decision to take: " + (
            f"the player to act ({cur}) has quit" if quit[cur] else "the row is empty (the round is over)"))
    if any(not any(d) for d in disp) and len(cards) == len(disp) * HAND_SIZE:
        raise StateFormatError(f"{what}: a display is empty while the round goes on (going out ends it)")
    if nturn > rules.max_round_turns or (nturn == rules.max_round_turns and phase == TURN):
        raise StateFormatError(f"{what}: the round has had {nturn} turns; it ends after max_round_turns "
                               f"({rules.max_round_turns})")
    return pile


def record_totals(g: LamaGame) -> list[int]:
    """The totals where :meth:`~lama_env.engine.LamaGame.to_record` ends (before a roll awaiting its decision).

    Only a triple llama's roll (``also_match``) changes a total before its decision: the roller's total is
    then the round's start, less the chips of the roller's earlier triple llamas in the round.
    """
    totals = list(g.totals)
    roll = g._pending
    if roll is not None and roll["dice"] == [FACES[0]] * NUM_DICE:  # a triple llama (all dice 'L')
        p = roll["player"]
        total = int(g._rec["rstart"][0, p])
        for turn in g._rounds[-1]["turns"][:-1]:
            if turn["player"] == p and turn.get("dice") == roll["dice"]:
                total = return_chip(total)
        totals[p] = total
    return totals


def _one_record(state: Any, dtype: np.dtype) -> np.ndarray:
    """``state`` (one record of ``dtype``: 0-d or one-element, or an element of a batch) as a 0-d copy."""
    if isinstance(state, (np.ndarray, np.void)) and state.dtype == dtype and np.shape(state) in ((), (1,)):
        return np.array(state, dtype).reshape(())
    got = (f"shape {np.shape(state)} of dtype {clip(str(state.dtype))}" if isinstance(state, (np.ndarray, np.void))
           else clip(state))
    raise StateFormatError("state record: must be one record of lama_env._kernel.STATE_DTYPE (a 0-d or "
                             f"one-element array), got {got}")


def _record_ints(rec: np.ndarray, key: str, lo: int, hi: int | None = None, n: int | None = None,
                 row: int | None = None, label: str = "state record: ") -> Any:
    """Field ``key`` of record ``rec`` (row ``row``, its first ``n`` seats) as Python ints in ``lo..hi``."""
    v = rec[key]
    if row is not None:
        v = v[row]
    if n is not None:
        v = v[:n]
    a = np.asarray(v, dtype=np.int64)
    out = (a < lo) | (a > hi) if hi is not None else a < lo
    if out.any():
        span = f"{lo}.." + ("" if hi is None else str(hi))
        raise StateFormatError(f"{label}{key} must hold integers {span}, got {int(a[out].flat[0])}")
    return a.tolist()
