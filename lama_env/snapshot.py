"""The persistence of a :class:`~lama_env.engine.LamaGame`: its JSON string, its pickle and its compiled record.

:func:`serialize` / :func:`deserialize`, :func:`getstate` / :func:`setstate` (pickling) and :func:`to_state` /
:func:`from_state` (docs/environments.md, The state API).  A state string is untrusted data: its table goes through
the one validator (:func:`_game_of`), its log is replayed against it (a bad field: one-line StateFormatError).
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np

from . import actions as A
from .constants import (
    DECK_COUNTS,
    DISCARD,
    FACES,
    HAND_SIZE,
    LOG_END,
    LOG_QUIT,
    LOG_ROLL,
    LOG_ROUND,
    NUM_DICE,
    NUM_FACES,
    OUT_DISCARD,
    OUT_TAKE,
    ROLL_DISCARD,
    ROLL_TAKE,
    TURN,
)
from .errors import LamaDiceError, clip, retired
from .reader import MAX_START_POINTS, MAX_TOTAL, InputError, read_json
from .rules import MAX_PLAYERS, MAX_ROUND_POINTS, RulesConfig, check_num_players, game_over
from .transitions import ROUND_ENDINGS, match_limits, resolve_roll

#: The longest serialized state :func:`deserialize` reads (a whole game with its log takes a few KB).
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


def _nested(value: Any, key: str, shape: tuple[int | None, ...], lo: int, hi: int) -> Any:
    """``value`` as nested lists of ints in ``lo..hi`` of ``shape`` (None: any length; an int for shape ``()``)."""
    if not shape:
        return check_int(value, key, lo, hi)
    if not isinstance(value, list) or shape[0] not in (None, len(value)):
        size = "" if shape[0] is None else f" of {shape[0]} items"
        raise StateFormatError(f"serialized game state: {key} must be a list{size}")
    return [_nested(v, key, shape[1:], lo, hi) for v in value]


def check_bool(value: Any, key: str) -> bool:
    """``value`` if it is a JSON boolean."""
    if not isinstance(value, bool):
        raise StateFormatError(f"serialized game state: {key} must be true or false, got {clip(value)}")
    return value


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


# ------------------------------------------------------------------ the JSON string: the record and the log
def _fields() -> tuple[str, ...]:
    """The record's fields a serialized state holds: :func:`to_state`'s, less those it writes neutral."""
    names = E._new_record().dtype.names  # (the record dtype comes with the compiled engine)
    return tuple(f for f in names if f not in E._SCRATCH and f != "pend")


def _seats(name: str, n: int) -> tuple[slice, ...]:
    """The index of field ``name``'s first ``n`` seats (all of it for a field that is not per seat)."""
    return (slice(None), slice(n)) if name == "stats" else (slice(n),) if name in _PER_SEAT else ()


def serialize(g: LamaGame) -> str:
    """The whole state as a stable, versioned JSON string (docs/environments.md, The state API)."""
    n = g._n
    c = g._chance
    s = _neutral(g)
    state = {f: s[f][_seats(f, n)].tolist() for f in _fields()}
    state["es"], state["ps"] = (f"{int(s[f]):016x}" for f in ("es", "ps"))
    data = {
        "format": E.STATE_FORMAT, "players": n, "rules": g._rules.to_dict(include_dice=True),
        "chance": "explicit" if g._explicit else "sampled", "record": g._record, "version": g._version,
        "start_points": g._start_points, "state": state, "over": g._phase == E._GAME_OVER,
        "chance_node": None if c is None else "roll" if c == E._ROLL_NODE else {"deal": len(c)},
        "log": g._clog[0, :g._rec["logpos"][0]].tolist(),
    }
    if g._max_rounds:
        data["max_rounds"] = g._max_rounds
    return json.dumps(data, sort_keys=True, separators=(",", ":"))  # (no floats: the same state, the same text)


def deserialize(text: str) -> LamaGame:
    """The game that :func:`serialize` wrote ``text`` from, on the same streams (it plays on legally to its end).

    A ``text`` that is not a readable state: a one-line :class:`StateFormatError` naming the bad field.
    """
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
    try:
        return _restore(data)
    except StateFormatError:
        raise
    except LamaDiceError as e:
        raise StateFormatError(f"serialized game state: {e}") from None


def _restore(data: dict[str, Any]) -> LamaGame:
    n = check_int(field(data, "players"), "players", 1, MAX_PLAYERS)
    rules = field(data, "rules")
    if not isinstance(rules, dict):
        raise StateFormatError("serialized game state: rules must be an object")
    rc = RulesConfig.from_dict(rules)
    explicit = E._is_explicit(field(data, "chance"))
    over = check_bool(field(data, "over"), "over")
    rec = _record_of(field(data, "state"), n)
    chance = _chance_node(field(data, "chance_node"), rec, n, explicit, over)
    g = _game_of(rec, n, rc, explicit, over, "serialized game state", "state.",
                 list(chance) if isinstance(chance, tuple) else None)
    g._chance = chance
    g._record = check_bool(field(data, "record"), "record")
    g._max_rounds = check_int(data.get("max_rounds", 0), "max_rounds", 0, MAX_TOTAL)
    g._version = check_int(field(data, "version"), "version", 0)
    g._start_points = _nested(field(data, "start_points"), "start_points", (n,), 0, MAX_START_POINTS)
    r = g._rec[0]
    for f in ("dice", "lim"):  # (what the step never reads is neutral, as to_state writes it)
        if _neutral(g)[f].tolist() != r[f].tolist():
            raise StateFormatError(f"serialized game state: state.{f} must be 0 outside a discard or take decision")
    if isinstance(chance, tuple) and (any(r["quit"]) or r["nturn"] or r["cur"] != r["start"]
                                      or r["row"] != E._FULL_MASK):
        raise StateFormatError("serialized game state: a deal under way has its start player to act, the full row "
                               "and no quit or turn yet")
    if g._max_rounds and g._ended > g._max_rounds:
        raise StateFormatError(f"serialized game state: round {int(r['nround'])} is past max_rounds ({g._max_rounds})")
    _check_log(g, _nested(field(data, "log"), "log", (None,), -1, MAX_TOTAL))
    g._set_modes()
    return g


def _record_of(data: Any, n: int) -> np.ndarray:
    """A record (0-d) of a state's ``state`` object: its fields of the record's shapes (N seats), within their dtype."""
    names = _fields()
    if not isinstance(data, dict) or set(data) != set(names):
        raise StateFormatError(f"serialized game state: state must be an object with the fields {', '.join(names)}")
    rec = E._new_record().reshape(())
    for name in names:
        key = f"state.{name}"
        if name in ("es", "ps"):  # a 64-bit stream state as 16 hexadecimal digits
            hexa = data[name]
            if not (isinstance(hexa, str) and len(hexa) == 16 and all(c in "0123456789abcdefABCDEF" for c in hexa)):
                raise StateFormatError(f"serialized game state: {key} must be 16 hexadecimal digits, got {clip(hexa)}")
            rec[name] = int(hexa, 16)
            continue
        dt = E.K_STATE_DTYPE.fields[name][0]
        shape = np.empty(dt.shape)[_seats(name, n)].shape
        info = np.iinfo(dt.base)
        rec[name][_seats(name, n)] = _nested(data[name], key, shape, int(info.min), int(info.max))
    return rec


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


def _check_log(g: LamaGame, log: list[int]) -> None:
    """Check a state's compiled log and give it to ``g``: replayed to the table (from the first deal) or checked alone.

    (A game from :func:`from_state`: its log begins after the record it carried in.)
    """
    from .gamelog import iter_log

    n = g._n
    bounds = {LOG_ROUND: [(0, n - 1)] + [(0, NUM_FACES - 1)] * (HAND_SIZE * n), LOG_QUIT: [(0, n - 1)],
              LOG_ROLL: [(0, n - 1)] + [(0, NUM_FACES - 1)] * NUM_DICE + [(0, 7), (0, 1 << 14)],
              LOG_END: [(0, len(ROUND_ENDINGS) - 1), (-1, n - 1)] + [(0, MAX_ROUND_POINTS)] * n + [(0, MAX_TOTAL)] * n}
    entries = []
    try:
        for i, tag, fields in iter_log(np.array(log, np.int32), n):
            e = [tag, *fields.tolist()]
            if len(e) <= len(bounds[tag]) or any(not lo <= x <= hi for x, (lo, hi) in zip(e[1:], bounds[tag],
                                                                                          strict=True)):
                raise ValueError(f"entry at {i} out of range: {clip(e)}")
            entries.append(e)
    except ValueError as e:
        raise StateFormatError(f"serialized game state: bad log ({e})") from None
    if (entries and entries[0][0] == LOG_ROUND) or (not entries and isinstance(g._chance, tuple)):
        h = _replay(g, entries)
        g._clog, pend = h._clog, h._rec["pend"][0]
    else:
        last = entries[-1] if entries else []
        if g._record or sum(e[0] == LOG_END for e in entries) > g._ended or (
                g._phase in (E._DISCARD, E._TAKE) and last[:5] != [LOG_ROLL, g._current, *g._rec[0]["dice"].tolist()]):
            raise StateFormatError("serialized game state: a log must begin with the first deal (a game from "
                                   "from_state: record false, and the roll awaiting its decision last)")
        g._clog = np.zeros((1, max(512, 2 * len(log))), np.int32)
        g._clog[0, :len(log)] = log
        pend = len(log) - len(last)
    g._rec["logpos"], g._rec["pend"] = len(log), pend


def _replay(g: LamaGame, entries: list[list[int]]) -> LamaGame:
    """The game that ``g``'s log ``entries`` replay (explicit chance), which must be ``g`` less its streams."""
    r = g._rec[0]
    pending = g._phase in (E._DISCARD, E._TAKE)
    h = E.LamaGame(g._n, g._rules, start_points=g._start_points, start_player=entries[0][1] if entries else
                   int(r["start"]), chance="explicit", max_rounds=g._max_rounds or None)
    try:
        for k, e in enumerate(entries):
            if e[0] == LOG_ROUND:
                for f in e[2:]:
                    h.apply_chance(f)
            elif e[0] != LOG_END:
                h.step(A.QUIT if e[0] == LOG_QUIT else A.ROLL)
            if e[0] == LOG_ROLL:
                h.apply_chance(e[2:5])
                if h.phase in (E._DISCARD, E._TAKE) and not (pending and k == len(entries) - 1):
                    counts = tuple(e[6] >> (2 * f) & 3 for f in E._FACE_RANGE)
                    h.step(A.DISCARD_ACTION.get(counts, -1) if h.phase == DISCARD else A.TAKE_BASE + e[6])
        if g._chance == E._ROLL_NODE:
            h.step(A.ROLL)
        for f in g._chance if isinstance(g._chance, tuple) else ():
            h.apply_chance(f)
    except LamaDiceError as e:
        raise StateFormatError(f"serialized game state: the log does not replay ({e})") from None
    a, b = _neutral(h), _neutral(g)
    bad = [f"state.{f}" for f in _fields() if f not in ("es", "ps") and a[f].tolist() != b[f].tolist()]
    log = [x for e in entries for x in e]
    bad += ["over"] * (h._phase != g._phase) + ["log"] * (h._clog[0, :h._rec["logpos"][0]].tolist() != log)
    if bad:
        raise StateFormatError(f"serialized game state: {bad[0]} is not what the log replays to")
    return h


# ------------------------------------------------------------------ the compiled engine's record
def _neutral(g: LamaGame) -> np.void:
    """The game's record with what the step never reads neutral (0, ``pend`` -1; ``dice`` and ``lim`` at a turn)."""
    s = g._rec[0].copy()
    for f in E._SCRATCH:
        s[f] = 0
    s["pend"] = -1
    if g._phase != E._DISCARD and g._phase != E._TAKE:
        s["dice"] = s["lim"] = 0
    return s


def to_state(g: LamaGame) -> np.ndarray:
    """The game now as the compiled engine's record of it (a copy): a 0-d array of ``lama_env._kernel.STATE_DTYPE``.

    Its neutral fields and its one-line refusals (chance, a total at the end threshold while the game goes on):
    docs/environments.md, The state API.
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

    ``state``: one record of ``lama_env._kernel.STATE_DTYPE`` (0-d or one-element), else a one-line
    :class:`StateFormatError` naming the bad field (docs/environments.md, The state API).
    """
    n = check_num_players(num_players, E.GameSetupError)
    rc = RulesConfig.from_dict(rules)
    explicit = E._is_explicit(chance)
    E._check_rounds(rounds)
    dt = E._new_record().dtype  # (the record dtype comes with the compiled engine)
    if not (isinstance(state, (np.ndarray, np.void)) and state.dtype == dt and np.shape(state) in ((), (1,))):
        got = (f"shape {np.shape(state)} of dtype {clip(str(state.dtype))}"
               if isinstance(state, (np.ndarray, np.void)) else clip(state))
        raise StateFormatError(f"state record: must be one record of lama_env._kernel.STATE_DTYPE (a 0-d or "
                               f"one-element array), got {got}")
    g = _game_of(np.array(state, dt).reshape(()), n, rc, explicit, None, "state record")
    r = g._rec[0]  # the log opens with what the record carried in: its quits and the roll awaiting its decision
    log = [x for p in range(n) if r["quit"][p] and g._phase != E._GAME_OVER for x in (LOG_QUIT, p)]
    if g._phase in (E._DISCARD, E._TAKE):  # (its outcome + 4: carried in, not a triple llama of the log's)
        log += [LOG_ROLL, g._current, *r["dice"].tolist(), 4 + (OUT_DISCARD if g._phase == E._DISCARD else OUT_TAKE), 0]
    g._clog[0, :len(log)] = log
    g._rec["logpos"], g._rec["pend"] = len(log), len(log) - 7 if g._phase in (E._DISCARD, E._TAKE) else -1
    return g


def _game_of(rec: np.ndarray, n: int, rc: RulesConfig, explicit: bool, over: bool | None, what: str,
             pre: str = "", dealt: list[int] | None = None) -> LamaGame:
    """The game over a copy of record ``rec``, every field checked alone and against the others (the one validator).

    ``over``: whether the game is over (None: the totals tell, at the end threshold); ``what`` and ``pre``
    begin the messages and the field names; ``dealt``: the cards of a deal under way (None: the deal is
    ``hands``).  The game's log is empty, its rounds finished those the record counts.
    """
    bad, lab = f"{what}: ", f"{what}: {pre}"

    def ints(key: str, lo: int, hi: int, seats: int | None = None, row: int | None = None) -> Any:
        """Field ``key`` (row ``row``, its first ``seats`` seats) as Python ints in ``lo..hi``."""
        v = rec[key] if row is None else rec[key][row]
        a = np.asarray(v if seats is None else v[:seats], dtype=np.int64)
        out = (a < lo) | (a > hi)
        if out.any():
            raise StateFormatError(f"{lab}{key} must hold integers {lo}..{hi}, got {int(a[out].flat[0])}")
        return a.tolist()

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
    cards = [f for h in hands for f in h] if dealt is None else dealt  # the faces dealt so far
    for f in E._FACE_RANGE:
        if cards.count(f) > DECK_COUNTS[f]:
            raise StateFormatError(f"{what}: hands deal {cards.count(f)} cards '{FACES[f]}' but the deck has only "
                                   f"{DECK_COUNTS[f]}")
        if cards.count(f) + 1 - (row >> f & 1) < sum(d[f] for d in disp):  # dealt and taken from the row, or held
            raise StateFormatError(f"{what}: the displays hold more cards '{FACES[f]}' than the deal and the "
                                   "row gave them")
    if not over and (quit[cur] or row == 0):  # a game that goes on: a player to act, a row, turns left
        raise StateFormatError(f"{what}: no decision to take: " + (
            f"the player to act ({cur}) has quit" if quit[cur] else "the row is empty (the round is over)"))
    if not over and any(not any(d) for d in disp) and len(cards) == n * HAND_SIZE:
        raise StateFormatError(f"{what}: a display is empty while the round goes on (going out ends it)")
    if not over and (nturn > rc.max_round_turns or (nturn == rc.max_round_turns and phase == TURN)):
        raise StateFormatError(f"{what}: the round has had {nturn} turns; it ends after max_round_turns "
                               f"({rc.max_round_turns})")
    if not over and any(t > r for t, r in zip(tot, rstart, strict=True)):
        raise StateFormatError(f"{lab}tot {tot} above rstart {rstart} (a total only falls during a round)")
    if any(stats[2][p] < quit[p] for p in range(n)):
        raise StateFormatError(f"{lab}stats count fewer quits than the players who have quit")
    if phase != TURN and not over:
        _check_decision(rec, rc, phase, disp[cur], row, active, lab)
    g = E.LamaGame.__new__(E.LamaGame)
    g._n, g._rules, g._rr = n, rc, E._rules_record(n, rc)
    g._set_record(s := E._new_record())
    s[0] = rec
    s["logpos"], s["pend"] = 0, -1
    g._rng, g._clog = None, E._new_log()
    g._explicit, g._chance = explicit, None
    g._fresh()
    g._record, g._version, g._max_rounds = False, 0, 0
    g._current, g._phase, g._start_points = cur, E._GAME_OVER if over else E.Phase(phase), rstart
    g._ended = rec["nround"].item() + over
    g._set_modes()
    return g



def _check_decision(rec: np.ndarray, rc: RulesConfig, phase: int, disp: list[int], row: int, active: int,
                    lab: str) -> None:
    """A discard or take decision: the record's ``dice`` (and ``lim``) ask for it."""
    try:
        dice = E.check_dice(rc, [int(x) for x in rec["dice"]])
    except E.IllegalActionError as e:
        raise StateFormatError(f"{lab}dice: {e}") from None
    lim, limits = [int(x) for x in rec["lim"]], match_limits(disp, dice)
    if phase == DISCARD and tuple(lim) != limits:
        raise StateFormatError(f"{lab}lim must be the roll's discard limits per face {list(limits or ())}, got {lim}")
    kind, _ = resolve_roll(disp, [row >> f & 1 for f in E._FACE_RANGE], dice, last_player=active == 1, rules=rc)
    if kind != (ROLL_DISCARD if phase == DISCARD else ROLL_TAKE):
        raise StateFormatError(f"{lab.split(': ')[0]}: the dice {list(dice)} ask for a {kind}, not a "
                               f"{E.Phase(phase).name.lower()} decision")
