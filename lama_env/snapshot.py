"""The persistence of a :class:`~lama_env.engine.LamaGame`: its JSON string, its pickle and its compiled record.

:func:`serialize` / :func:`deserialize` (``LamaGame.serialize`` / ``deserialize``), :func:`getstate` /
:func:`setstate` (pickling) and :func:`to_state` / :func:`from_state` (the compiled engine's record;
docs/environments.md, The state API).  A serialized state is data a user may load from anywhere:
every field is checked on the way in, a bad one named in a one-line :class:`StateFormatError`, and
nothing in it is executed or looked up by name.  The random streams are kept exactly, so a restored
game draws the same future deals and dice.  What lama-dice 0.1.0 wrote (a NumPy generator's state,
manual rounds, its pickles) is refused in one line (retired).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from operator import add, sub
from typing import Any

import numpy as np

from . import actions as A
from .constants import DECK_COUNTS, DISCARD, FACES, HAND_SIZE, NUM_DICE, NUM_FACES, ROLL_DISCARD, ROLL_TAKE, TURN
from .errors import LamaDiceError, clip, retired
from .reader import MAX_START_POINTS, MAX_TOTAL, InputError, read_json
from .rules import MAX_PLAYERS, MAX_ROUND_POINTS, RulesConfig, check_num_players, game_over, return_chip, score_display
from .streams import Streams
from .transitions import ROUND_ENDINGS, match_limits, resolve_roll

#: The longest serialized state :func:`deserialize` reads (a whole game with its turn log takes 10 to 40 KB).
MAX_STATE_CHARS = 16 * 2**20

#: The games this module reads and builds (:class:`lama_env.engine.LamaGame`; the engine imports this module).
LamaGame = Any

#: :mod:`lama_env.engine`, handed over by :func:`bind` (the engine imports this module: the import graph stays one-way).
E: Any = None


def bind(engine: Any) -> None:
    """Hand the persistence the engine module (called once, at the end of :mod:`lama_env.engine`'s import)."""
    global E
    E = engine


class StateFormatError(LamaDiceError, ValueError):
    """A serialized game state that cannot be read (not JSON, another format, a bad field)."""


def parse(text: Any, fmt: str) -> dict[str, Any]:
    """The JSON object of a serialized state, read with the bounded reader and checked to be of format ``fmt``."""
    if not isinstance(text, (str, bytes)):
        raise StateFormatError(f"a serialized game state must be a string, got {type(text).__name__}")
    try:
        data = read_json(text, "", MAX_STATE_CHARS)
    except InputError as e:
        raise StateFormatError(f"not a serialized game state (bad JSON: {e})") from None
    if not isinstance(data, dict):
        raise StateFormatError("not a serialized game state (not a JSON object)")
    if data.get("format") != fmt:
        raise StateFormatError(f"not a {fmt} string (format {clip(data.get('format'))})")
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


def restore_streams(data: Any) -> Streams:
    """The game's streams from a state's ``random`` field, ``{"streams": {"es": HEX, "ps": HEX}}`` (no generator)."""
    if not isinstance(data, dict):
        raise StateFormatError("serialized game state: random must be an object")
    if "streams" not in data:
        if "generator" in data:
            raise StateFormatError(retired("a serialized state with a NumPy generator's random state", "serialize the "
                                           "game again with this version, or keep games as records (to_record)"))
        raise StateFormatError("serialized game state: random must hold streams")
    st = data["streams"]
    if not isinstance(st, dict):
        raise StateFormatError("serialized game state: random.streams must be an object")
    return Streams(_hex64(field(st, "es"), "random.streams.es"), _hex64(field(st, "ps"), "random.streams.ps"))


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
    if not isinstance(state, dict) or state.get("format") != E.STATE_FORMAT:
        got = state.get("format") if isinstance(state, dict) else type(state).__name__
        raise E.GameSetupError(f"cannot unpickle a LamaGame of state format {clip(got)} (this version reads "
                             f"{E.STATE_FORMAT!r})")
    if set(state) != {*E._PICKLED, "format"}:
        raise E.GameSetupError(retired("unpickling a LamaGame pickled by an earlier engine",
                                     "pickle it again, or save games as records (to_record) or serialize() text"))
    for name in E._PICKLED:
        setattr(g, name, state[name])
    g._rr = E._rules_record(g._n, g._rules)
    g._set_record(g._rec)
    g._fresh()


def serialize(g: LamaGame) -> str:
    """The whole state as a stable, versioned JSON string (docs/environments.md, The state API).

    It keeps everything, the random streams' exact position included, so :func:`deserialize` gives a
    game that continues the same way.  The same state gives the same text.
    """
    n = g._n
    c = g._chance
    stats = g.statistics()
    counted = round_statistics(g._results, n, None if g._phase == E._GAME_OVER else (g.quit, g._round_triples()))
    carried = {"rounds": g._carried_rounds, **{k: list(map(sub, stats[k], counted[k])) for k in E._COUNTS}}
    end = g._end or {}
    data = {
        "format": E.STATE_FORMAT, "players": n, "rules": g._rules.to_dict(include_dice=True),
        "chance": "explicit" if g._explicit else "sampled", "rounds": "flow", "record": g._record,
        "version": g._version,
        "start_points": g._start_points, "totals": list(g.totals), "round": g.round_index,
        "start_player": g.start_player, "current_player": g._current,
        "phase": g._phase.name.lower(),
        "displays": [list(d) for d in g.displays], "row": list(g.row), "quit": list(g.quit),
        "dice": None if g.dice is None else list(g.dice), "discarded": g._discarded,
        "triple_llamas": list(g._round_triples()), "turns_in_round": g._turns(),
        "round_points": end.get("points"), "ended_by": end.get("ended_by"), "went_out": end.get("went_out"),
        "busted": end.get("busted"),
        "hands": None if isinstance(c, tuple) else g._rec["hands"][0, :n].tolist(),
        "carried": carried if g._carried_rounds or any(any(carried[k]) for k in E._COUNTS) else None,
        "chance_node": None if c is None else "roll" if c == E._ROLL_NODE else {"deal": list(c)},
        "results": [dict(r, quit=list(r["quit"]), triple_llamas=list(r["triple_llamas"])) for r in g._results],
        "log": g._rounds if g._record else None, "log_pending": g._pending is not None,
        "random": {"streams": Streams(*g._esps.tolist()).to_json()},
    }
    if g._max_rounds:
        data["max_rounds"] = g._max_rounds
    return dumps(data)


def deserialize(text: str) -> LamaGame:
    """The game that :func:`serialize` wrote ``text`` from, on the same streams.

    Raises:
        lama_env.snapshot.StateFormatError: ``text`` is not a readable state (the message names the bad field).
    """
    data = parse(text, E.STATE_FORMAT)
    g = E.LamaGame.__new__(E.LamaGame)
    _restore(g, data)
    return g


def _restore(g: LamaGame, data: dict[str, Any]) -> None:
    """Set the game up from :func:`serialize`'s data, every field checked alone and against the others.

    A state accepted here plays on legally to its end; a bad field is a one-line StateFormatError.
    """
    try:
        fields = _restore_setup(g, data)
        fields.update(_restore_round(g, data, fields))
        _restore_history(g, data, fields)
    except LamaDiceError as e:
        if isinstance(e, StateFormatError):
            raise
        raise StateFormatError(f"serialized game state: {e}") from None


def _restore_setup(g: LamaGame, data: dict[str, Any]) -> dict[str, Any]:
    g._n = n = check_int(field(data, "players"), "players", 1, MAX_PLAYERS)
    rules = field(data, "rules")
    if not isinstance(rules, dict):
        raise StateFormatError("serialized game state: rules must be an object")
    g._rules = RulesConfig.from_dict(rules)
    g._rr = E._rules_record(n, g._rules)
    g._explicit = check_choice(field(data, "chance"), "chance", E.CHANCE_MODES) == "explicit"
    # a state written before rounds flowed on (no "rounds" field) stopped between rounds: retired
    if data.get("rounds", "manual") != "flow":
        raise StateFormatError(retired("a serialized state with manual rounds", "serialize the game again "
                                         "with this version, or keep games as records (to_record)"))
    g._record = check_bool(field(data, "record"), "record")
    g._max_rounds = check_int(data.get("max_rounds", 0), "max_rounds", 0, MAX_TOTAL)
    g._version = check_int(field(data, "version"), "version", 0)
    g._start_points = check_ints(field(data, "start_points"), "start_points", n, 0, MAX_START_POINTS)
    streams = restore_streams(field(data, "random"))
    g._rng = None
    g._fresh()
    return {"tot": check_ints(field(data, "totals"), "totals", n, 0, MAX_TOTAL),
            "nround": check_int(field(data, "round"), "round", 0, MAX_TOTAL), "streams": streams}


def _restore_round(g: LamaGame, data: dict[str, Any], fields: dict[str, Any]) -> dict[str, Any]:
    n = g._n
    start = check_int(field(data, "start_player"), "start_player", 0, n - 1)
    g._current = check_int(field(data, "current_player"), "current_player", 0, n - 1)
    phases = tuple(p.name.lower() for p in E.Phase)
    g._phase = E.Phase[check_choice(field(data, "phase"), "phase", phases).upper()]
    displays = field(data, "displays")
    if not isinstance(displays, list) or len(displays) != n:
        raise StateFormatError(f"serialized game state: displays must list {n} displays")
    disp = [check_ints(d, "displays", NUM_FACES, 0, HAND_SIZE + NUM_FACES) for d in displays]
    row = check_ints(field(data, "row"), "row", NUM_FACES, 0, 1)
    quit = [check_bool(q, "quit") for q in check_list(field(data, "quit"), "quit", n)]
    dice = field(data, "dice")
    dice = None if dice is None else E.check_dice(g._rules, check_ints(dice, "dice", NUM_DICE, 0, NUM_FACES - 1))
    g._discarded = check_ints(field(data, "discarded"), "discarded", None, E._DISCARD_BASE, A.NUM_ACTIONS - 1)
    cap = g._rules.max_round_turns
    turns = check_int(field(data, "turns_in_round"), "turns_in_round", 0, cap)
    triples = check_ints(field(data, "triple_llamas"), "triple_llamas", n, 0, turns)
    pts = field(data, "round_points")
    end = {"points": None if pts is None else check_ints(pts, "round_points", n, 0, MAX_ROUND_POINTS),
           "ended_by": check_choice(field(data, "ended_by"), "ended_by", (None, *ROUND_ENDINGS)),
           "went_out": check_optional_int(field(data, "went_out"), "went_out", 0, n - 1),
           "busted": check_optional_int(field(data, "busted"), "busted", 0, n - 1)}
    over = g._phase == E._GAME_OVER
    if over and end["points"] is None:
        raise StateFormatError("serialized game state: a finished game must give its round_points")
    g._end = end if over else None
    node = field(data, "chance_node")
    if node is None or node == "roll":
        g._chance = None if node is None else E._ROLL_NODE
    elif isinstance(node, dict) and set(node) == {"deal"}:
        g._chance = tuple(check_ints(node["deal"], "chance_node.deal", None, 0, NUM_FACES - 1))
        if len(g._chance) >= n * HAND_SIZE:
            raise StateFormatError(f"serialized game state: chance_node.deal must hold fewer than {n * HAND_SIZE} "
                                   f"cards (the deal's), got {len(g._chance)}")
    else:
        raise StateFormatError(f"serialized game state: bad chance_node {clip(node)}")
    if g._chance is not None and (over or g._phase != E._TURN or not g._explicit):
        raise StateFormatError("serialized game state: a chance node waits at a turn of a game with explicit chance")
    if isinstance(g._chance, tuple):  # a deal under way: its cards so far, in deal order
        c = list(g._chance)
        hands = [(c[i:i + HAND_SIZE] + [0] * HAND_SIZE)[:HAND_SIZE] for i in range(0, n * HAND_SIZE, HAND_SIZE)]
        if g._current != start or any(quit) or sum(row) != NUM_FACES or turns or any(triples) or g._discarded:
            raise StateFormatError("serialized game state: a deal under way has its start player to act, the "
                                   "full row and no quit, turn, triple llama or discard yet")
        if disp != [[c[i:i + HAND_SIZE].count(f) for f in E._FACE_RANGE] for i in range(0, n * HAND_SIZE, HAND_SIZE)]:
            raise StateFormatError("serialized game state: the displays must hold the cards dealt so far")
    else:  # the round's deal (a state written before state records has none: retired)
        raw = data.get("hands")
        if raw is None:
            raise StateFormatError(retired("a serialized state without the round's deal (hands)",
                                             "serialize the game again with this version"))
        hands = [check_ints(h, "hands", HAND_SIZE, 0, NUM_FACES - 1) for h in check_list(raw, "hands", n)]
    nturn = turns - (g._chance == E._ROLL_NODE)
    rows = sum(1 << f for f in E._FACE_RANGE if row[f])
    cards = list(g._chance) if isinstance(g._chance, tuple) else [f for h in hands for f in h]
    pile = _check_table(g._rules, over, g._current, quit, rows, disp, cards, nturn, g._phase, "serialized game state")
    if [sum(A.DISCARDS[a - E._DISCARD_BASE][f] for a in g._discarded) for f in E._FACE_RANGE] != pile:
        raise StateFormatError("serialized game state: discarded must be the discards of the cards neither held "
                               "nor in the row (the deal less the displays and the row)")
    _check_decision(g, disp, row, quit, dice)
    if dice is not None and g._phase not in (E._DISCARD, E._TAKE):
        raise StateFormatError(f"serialized game state: dice are shown only at a discard or take decision, "
                               f"not at {g._phase.name.lower()}")
    return {"start": start, "disp": disp, "row": row, "quit": quit, "dice": dice, "triples": triples,
            "nturn": nturn, "hands": hands}


def _check_table(rules: RulesConfig, over: bool, cur: int, quit: Sequence[Any], row: int, disp: list[list[int]],
                 cards: list[int], nturn: int, phase: int, what: str) -> list[int]:
    """Check a round's table (for both readers); return its discard pile, cards per face.

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


def _check_decision(g: LamaGame, disp: list[list[int]], row: list[int], quit: list[bool],
                    dice: tuple[int, ...] | None, what: str = "serialized game state") -> None:
    """Check a restored state's phase against its dice: the dice ask for that decision (the rules' oracle)."""
    ph = g._phase
    if g._chance is not None or ph == E._GAME_OVER:
        return
    if ph == E._TURN:
        if dice is not None:
            raise StateFormatError(f"{what}: dice are shown at the start of a turn")
        return
    if dice is None:
        raise StateFormatError(f"{what}: no dice for a {ph.name.lower()} decision")
    kind, _ = resolve_roll(disp[g._current], row, dice, last_player=len(quit) - sum(quit) == 1, rules=g._rules)
    if kind != (ROLL_DISCARD if ph == E._DISCARD else ROLL_TAKE):
        raise StateFormatError(f"{what}: the dice {list(dice)} ask for a {kind}, not a {ph.name.lower()} decision")


_RESULT_KEYS = ("finished", "ended_by", "went_out", "points", "totals", "busted", "quit", "triple_llamas")
_TURN_KEYS = {"player", "action", "dice", "discard", "take"}


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


def _restore_history(g: LamaGame, data: dict[str, Any], fields: dict[str, Any]) -> None:
    n = g._n
    g._results = [_check_result(r, n) for r in check_list(field(data, "results"), "results", None)]
    carried = data.get("carried")  # the statistics a game made by from_state carried in (absent: none)
    if carried is not None:
        if not isinstance(carried, dict) or set(carried) != {"rounds", *E._COUNTS}:
            raise StateFormatError(f"serialized game state: carried must have the fields rounds, "
                                     f"{', '.join(E._COUNTS)}")
        carried = {"rounds": check_int(carried["rounds"], "carried.rounds", 0, MAX_TOTAL),
                   **{k: check_ints(carried[k], f"carried.{k}", n, 0, MAX_TOTAL) for k in E._COUNTS}}
    g._carried_rounds = 0 if carried is None else carried["rounds"]
    over = g._phase == E._GAME_OVER
    if fields["nround"] != g._carried_rounds + len(g._results) - over:
        raise StateFormatError(f"serialized game state: round must count the finished rounds "
                               f"({g._carried_rounds + len(g._results) - over}), got {fields['nround']}")
    if over and g._results and fields["tot"] != g._results[-1]["totals"]:
        raise StateFormatError("serialized game state: a finished game's totals must be its last round's")
    if g._max_rounds and fields["nround"] + over > g._max_rounds:
        raise StateFormatError(f"serialized game state: round {fields['nround']} is past max_rounds "
                               f"({g._max_rounds})")
    g._set_modes()
    g._rounds = []
    g._pending = None
    if g._record:
        if carried is not None:
            raise StateFormatError("serialized game state: a game that carried rounds in (from_state) keeps no log")
        log = [_check_log_round(r, n) for r in check_list(field(data, "log"), "log", None)]
        dealt = not over and not isinstance(g._chance, tuple)  # the round under way is in the log
        if len(log) != len(g._results) + dealt:
            raise StateFormatError(f"serialized game state: the log must hold every round dealt "
                                   f"({len(g._results) + dealt}), got {len(log)}")
        g._rounds = log
        waits = g._phase in (E._DISCARD, E._TAKE)
        if check_bool(field(data, "log_pending"), "log_pending") != waits:
            raise StateFormatError("serialized game state: log_pending must say whether a roll waits for its "
                                   "discard or take")
        if waits:
            t = log[-1]["turns"][-1] if log[-1]["turns"] else {}
            if (t.get("player") != g._current or t.get("action") != "roll" or "discard" in t or "take" in t
                    or [FACES.index(f) for f in t["dice"]] != list(fields["dice"])):
                raise StateFormatError("serialized game state: the log's last turn must be the roll that waits "
                                       "for its decision")
            g._pending = t
    _build_record(g, fields, carried)


def _build_record(g: LamaGame, fields: dict[str, Any], carried: dict[str, Any] | None) -> None:
    """The restored game's record: the fields, and the statistics of the results, the round and what was carried."""
    n = g._n
    over = g._phase == E._GAME_OVER
    res = g._results
    rstart = res[-1 - over]["totals"] if len(res) > over else g._start_points
    st = round_statistics(res, n, None if over else (fields["quit"], fields["triples"]))
    if carried is not None:
        for k in E._COUNTS:
            st[k] = list(map(add, st[k], carried[k]))
    g._triples0 = list(map(sub, st["triple_llamas"], fields["triples"]))
    g._set_record(s := E._new_record())
    rec = s[0]
    streams = fields["streams"]
    rec["es"], rec["ps"] = streams.es, streams.ps
    rec["tot"][:n], rec["rstart"][:n], rec["disp"][:n] = fields["tot"], rstart, fields["disp"]
    rec["row"] = sum(1 << f for f in E._FACE_RANGE if fields["row"][f])
    rec["quit"][:n] = fields["quit"]
    rec["active"] = n - sum(fields["quit"])
    rec["cur"] = g._current
    for k in ("start", "nround", "nturn"):
        rec[k] = fields[k]
    ph = g._phase
    rec["phase"] = int(ph) if ph != E._GAME_OVER else TURN
    dice = fields["dice"]
    if dice is not None and ph != E._GAME_OVER:
        rec["dice"] = dice
        if ph == E._DISCARD:
            rec["lim"] = match_limits(fields["disp"][g._current], dice)
    rec["hands"][:n] = fields["hands"]
    if not over and any(t > r for t, r in zip(fields["tot"], rstart, strict=True)):
        raise StateFormatError(f"serialized game state: totals {fields['tot']} above those the round began with "
                               f"{rstart} (a total only falls during a round)")
    for row, key in enumerate(E._COUNTS):
        if any(x > MAX_TOTAL for x in st[key]):
            raise StateFormatError(f"serialized game state: the statistics of {key} pass {MAX_TOTAL:,}")
        rec["stats"][row, :n] = st[key]


def to_state(g: LamaGame) -> np.ndarray:
    """The game now as the compiled engine's record of it (a copy): a 0-d array of ``lama_env._kernel.STATE_DTYPE``.

    Field for field what the kernel holds at the same point of the same game, so its step continues it
    (docs/environments.md, The state API).  A decision converts, and so does the game's end (``phase``
    ``TURN``).  Fields the step never reads are neutral: 0, ``pend`` -1, ``dice`` and ``lim`` 0 outside a
    discard or take decision.  ``stats`` rows: round points, busts, quits, rounds gone out, triple llamas;
    ``rstart``: the totals the round began with; ``hands``: its deal in deal order.

    Raises:
        E.IllegalActionError: the game waits for chance, or a total has reached the end threshold
            while it goes on (``start_points``: such a record is a finished game).
    """
    if g._chance is not None:
        raise E.IllegalActionError(f"to_state: the game waits for chance ({g._chance_name()}); "
                                 "a state record holds a decision or the game's end")
    ph = g._phase
    if ph != E._GAME_OVER and game_over(g.totals, g._rules):
        raise E.IllegalActionError(f"to_state: a total has reached the end threshold ({g._rules.end_threshold}) "
                                 "while the game goes on; a record with one is a finished game")
    s = g._rec[0].copy()
    for f in E._SCRATCH:
        s[f] = 0
    s["pend"] = -1
    if ph != E._DISCARD and ph != E._TAKE:
        s["dice"] = 0
        s["lim"] = 0
    return np.array(s, E.K_STATE_DTYPE).reshape(())


def from_state(state: Any, num_players: int, rules: RulesConfig | dict | None = None, *,
               chance: str = "sampled", rounds: str = "flow") -> LamaGame:
    """The game that a compiled-engine record holds (:func:`to_state`'s inverse), on the record's streams.

    ``state``: one record of ``lama_env._kernel.STATE_DTYPE`` (0-d, one-element, or an element of a batch);
    ``num_players`` and ``rules`` are the game's.  It plays on as the kernel plays the record, keeps no turn
    log, and totals at the end threshold are the game's end (docs/environments.md, The state API).

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
    rec = _one_record(state, E.K_STATE_DTYPE)
    phase = _record_ints(rec, "phase", 0, 2)
    row = _record_ints(rec, "row", 0, E._FULL_MASK)
    cur = _record_ints(rec, "cur", 0, n - 1)
    _record_ints(rec, "start", 0, n - 1)
    active = _record_ints(rec, "active", 0, n)
    _record_ints(rec, "nround", 0, MAX_TOTAL)
    nturn = _record_ints(rec, "nturn", 0, rc.max_round_turns)
    quit = _record_ints(rec, "quit", 0, 1, n)
    tot = _record_ints(rec, "tot", 0, MAX_TOTAL, n)
    rstart = _record_ints(rec, "rstart", 0, MAX_TOTAL, n)
    disp = _record_ints(rec, "disp", 0, HAND_SIZE + NUM_FACES, n)
    hands = _record_ints(rec, "hands", 0, NUM_FACES - 1, n)
    stats = [_record_ints(rec, "stats", 0, MAX_TOTAL, n, k) for k in range(len(E._COUNTS))]
    bad = "state record: "
    if active != n - sum(quit):
        raise StateFormatError(f"{bad}active must count the players who have not quit ({n - sum(quit)}), got {active}")
    over = game_over(tot, rc)
    if over and phase != TURN:
        raise StateFormatError(f"{bad}a finished game (a total at the end threshold {rc.end_threshold}) stands "
                                 f"at a turn (phase {TURN}), got phase {phase}")
    pile = _check_table(rc, over, cur, quit, row, disp, [f for h in hands for f in h], nturn, phase, "state record")
    if not over and any(t > r for t, r in zip(tot, rstart, strict=True)):
        raise StateFormatError(f"{bad}tot {tot} above rstart {rstart} (a total only falls during a round)")
    if any(stats[2][p] < quit[p] for p in range(n)):
        raise StateFormatError(f"{bad}stats count fewer quits than the players who have quit")
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
    if phase != TURN and not over:
        try:
            dice = E.check_dice(g._rules, [int(x) for x in rec["dice"]])
        except E.IllegalActionError as e:
            raise StateFormatError(f"{bad}dice: {e}") from None
        lim = [int(x) for x in rec["lim"]]
        if phase == DISCARD and tuple(lim) != match_limits(disp[cur], dice):
            raise StateFormatError(f"{bad}lim must be the roll's discard limits per face "
                                     f"{list(match_limits(disp[cur], dice) or ())}, got {lim}")
        _check_decision(g, disp, [row >> f & 1 for f in E._FACE_RANGE], [bool(q) for q in quit], dice, "state record")
    return g


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


def round_statistics(results: Sequence[dict], num_players: int,
                     in_progress: tuple[Sequence[bool], Sequence[int]] | None = None) -> dict[str, Any]:
    """Per-seat counts over finished rounds' ``results`` (:meth:`LamaGame.statistics`).

    ``in_progress``: the ``(quit, triple_llamas)`` of a round still being played, counted too.
    """
    n = num_players
    points, busts, quits, went_out, triples = ([0] * n for _ in range(5))
    for r in results:
        for p, x in enumerate(r["points"]):
            points[p] += x
        if r["busted"] is not None:
            busts[r["busted"]] += 1
        if r["went_out"] is not None:
            went_out[r["went_out"]] += 1
        for p in range(n):
            quits[p] += r["quit"][p]
            triples[p] += r["triple_llamas"][p]
    if in_progress is not None:
        for p in range(n):
            quits[p] += in_progress[0][p]
            triples[p] += in_progress[1][p]
    return {"rounds": len(results), "points": points, "busts": busts, "quits": quits, "went_out": went_out,
            "triple_llamas": triples}


def _one_record(state: Any, dtype: np.dtype) -> np.ndarray:
    """``state`` (one record of ``dtype``: 0-d or one-element, or an element of a batch) as a 0-d copy."""
    if isinstance(state, (np.ndarray, np.void)) and state.dtype == dtype and np.shape(state) in ((), (1,)):
        return np.array(state, dtype).reshape(())
    got = (f"shape {np.shape(state)} of dtype {clip(str(state.dtype))}" if isinstance(state, (np.ndarray, np.void))
           else clip(state))
    raise StateFormatError("state record: must be one record of lama_env._kernel.STATE_DTYPE (a 0-d or "
                             f"one-element array), got {got}")


def _record_ints(rec: np.ndarray, key: str, lo: int, hi: int | None = None, n: int | None = None,
                 row: int | None = None) -> Any:
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
        raise StateFormatError(f"state record: {key} must hold integers {span}, got {int(a[out].flat[0])}")
    return a.tolist()
