"""The observation encoder shared by every learning interface (docs/environments.md, Observation).

:func:`encode` turns a :class:`~lama_env.engine.LamaGame` into a flat ``float32`` vector seen from one seat;
the envs and trained agents all call it, so a network trained in one place acts correctly in the others.  A
:class:`~lama_env.engine.LamaGame` is encoded by the compiled encoder (:meth:`~lama_env.engine.LamaGame.observe`),
any other object with an ``encoder_view()`` (the solo solver's states) by the Python code below, bit for bit
the same.  The vector holds the whole (public) state *from the observing seat*: per-player blocks start with
that seat, the others following in turn order.  Every entry lies in ``[0, 1]``.

With N players the vector has ``15 N + 22`` entries (52 for two players); :func:`observation_layout` gives each
block, and :func:`layout_table` generates this table (offsets in terms of N):

| slice | start | length | meaning |
| --- | --- | --- | --- |
| `display` | 0 | 7N | cards of each face (`L`, `1`..`6`) in each player's display (player-major, 7 faces each); `L` / 7, numbers / 6 |
| `quit` | 7N | N | 1 if the player has quit this round |
| `to_act` | 8N | N | 1 for the player whose decision it is (all 0 once the game or the episode is over) |
| `start_player` | 9N | N | 1 for the player who started this round |
| `total` | 10N | N | chip total / end_threshold, clipped to 1 |
| `to_threshold` | 11N | N | (end_threshold - total) / 31 clipped to [0, 1]: distance to the game end in maximal rounds (31 points) |
| `round_points` | 12N | N | what the player's display scores now (`rules.score_display`) / 31 |
| `would_end_game` | 13N | N | 1 if total + round points reaches end_threshold (the game ends if the round ends now) |
| `p_no_match` | 14N | N | probability that the player's next roll matches nothing in their display (`odds.p_no_match`) |
| `llama_row` | 15N | 7 | 1 where the row card of that face (`L`, `1`..`6`) is still there |
| `decision` | 15N + 7 | 4 | one-hot decision asked: roll-or-quit, discard, take, none (the game or the episode is over) |
| `dice` | 15N + 11 | 7 | after a roll (discard / take decision): dice showing each face / 3, else 0 |
| `last_player` | 15N + 18 | 1 | 1 if only one player is left in the round (last-player rule: a non-matching roll busts) |
| `active_players` | 15N + 19 | 1 | players who have not quit / N |
| `must_discard` | 15N + 20 | 1 | rules: 1 if a matching roll must discard (`must_discard`) |
| `triple_llama_match` | 15N + 21 | 1 | rules: 1 if a triple llama also counts as ordinary dice (`triple_llama="also_match"`) |

Example::

    from lama_env import LamaGame, encode, observation_size
    game = LamaGame(num_players=3, seed=1)
    x = encode(game, game.current_player)      # shape (observation_size(3),) == (67,)
"""  # noqa: E501 (the table is layout_table()'s output, checked verbatim by tests/test_observation.py)

from __future__ import annotations

import struct
import threading
from collections.abc import Sequence
from functools import cache
from typing import Any, NamedTuple, cast

import numpy as np

from .engine import LamaGame, Phase
from .odds import p_no_match
from .rules import DECK_COUNTS, MAX_ROUND_POINTS, NUM_FACES, RulesConfig, check_num_players, ends_game, score_display

#: Per-face scale of display counts: at most the deck's cards of a face plus the row card (7 llamas, 6 a number).
_DISPLAY_SCALE = tuple(1.0 / (c + 1) for c in DECK_COUNTS)
_PHASE_ONE_HOT = {Phase.TURN: (1.0, 0.0, 0.0, 0.0), Phase.DISCARD: (0.0, 1.0, 0.0, 0.0),
                  Phase.TAKE: (0.0, 0.0, 1.0, 0.0), Phase.GAME_OVER: (0.0, 0.0, 0.0, 1.0)}


class LayoutEntry(NamedTuple):
    """One block of the observation vector."""

    name: str
    start: int
    length: int
    meaning: str


# (name, entries per player (0: a fixed-size block), fixed length, meaning)
_BLOCKS: tuple[tuple[str, int, int, str], ...] = (
    ("display", NUM_FACES, 0,
     "cards of each face (`L`, `1`..`6`) in each player's display (player-major, 7 faces each); `L` / 7, numbers / 6"),
    ("quit", 1, 0, "1 if the player has quit this round"),
    ("to_act", 1, 0, "1 for the player whose decision it is (all 0 once the game or the episode is over)"),
    ("start_player", 1, 0, "1 for the player who started this round"),
    ("total", 1, 0, "chip total / end_threshold, clipped to 1"),
    ("to_threshold", 1, 0,
     f"(end_threshold - total) / {MAX_ROUND_POINTS} clipped to [0, 1]: distance to the game end in "
     f"maximal rounds ({MAX_ROUND_POINTS} points)"),
    ("round_points", 1, 0, f"what the player's display scores now (`rules.score_display`) / {MAX_ROUND_POINTS}"),
    ("would_end_game", 1, 0, "1 if total + round points reaches end_threshold (the game ends if the round ends now)"),
    ("p_no_match", 1, 0,
     "probability that the player's next roll matches nothing in their display (`odds.p_no_match`)"),
    ("llama_row", 0, NUM_FACES, "1 where the row card of that face (`L`, `1`..`6`) is still there"),
    ("decision", 0, 4, "one-hot decision asked: roll-or-quit, discard, take, none (the game or the episode is over)"),
    ("dice", 0, NUM_FACES, "after a roll (discard / take decision): dice showing each face / 3, else 0"),
    ("last_player", 0, 1, "1 if only one player is left in the round (last-player rule: a non-matching roll busts)"),
    ("active_players", 0, 1, "players who have not quit / N"),
    ("must_discard", 0, 1, "rules: 1 if a matching roll must discard (`must_discard`)"),
    ("triple_llama_match", 0, 1,
     'rules: 1 if a triple llama also counts as ordinary dice (`triple_llama="also_match"`)'),
)


def _check_n(num_players: int) -> int:
    return check_num_players(num_players, ValueError)


@cache
def _layout(num_players: int) -> tuple[LayoutEntry, ...]:
    out = []
    pos = 0
    for name, per_player, fixed, meaning in _BLOCKS:
        length = per_player * num_players + fixed
        out.append(LayoutEntry(name, pos, length, meaning))
        pos += length
    return tuple(out)


def observation_layout(num_players: int) -> list[LayoutEntry]:
    """The blocks of the observation vector for ``num_players`` players.

    Returns:
        ``(name, start, length, meaning)`` tuples (:class:`LayoutEntry`) in vector order, tiling the vector.
    """
    return list(_layout(_check_n(num_players)))


def observation_size(num_players: int) -> int:
    """Length of the observation vector for ``num_players`` players (``15 N + 22``)."""
    last = _layout(_check_n(num_players))[-1]
    return last.start + last.length


def _symbolic(a: int, b: int) -> str:
    """Format ``a * N + b``."""
    if a == 0:
        return str(b)
    head = "N" if a == 1 else f"{a}N"
    return head if b == 0 else f"{head} + {b}"


def layout_table(num_players: int | None = None) -> str:
    """The observation layout as a Markdown table.

    Args:
        num_players: concrete offsets for this player count, or ``None`` for offsets in terms of ``N`` (the docs').
    """
    lines = ["| slice | start | length | meaning |", "| --- | --- | --- | --- |"]
    if num_players is not None:
        for e in observation_layout(num_players):
            lines.append(f"| `{e.name}` | {e.start} | {e.length} | {e.meaning} |")
        return "\n".join(lines)
    a = b = 0
    for name, per_player, fixed, meaning in _BLOCKS:
        lines.append(f"| `{name}` | {_symbolic(a, b)} | {_symbolic(per_player, fixed)} | {meaning} |")
        a += per_player
        b += fixed
    return "\n".join(lines)


# How encode() builds the vector: every block is cached as packed float32 bytes (per player: keyed by its display,
# and by (round points, total); per seat: quit / to_act / start_player; then the fixed-size blocks), the bytes are
# joined and a precomputed permutation (_Consts.perm) orders them.  Each cache is emptied past _CACHE_MAX.
#: Per player: scaled display, round_points, p_no_match (keyed by the display),
#: then total, to_threshold, would_end_game (keyed by (round points, total)).
_DISPLAY_FLOATS = NUM_FACES + 2
_PLAYER_FLOATS = _DISPLAY_FLOATS + 3
_TABLE_FLOATS = 2 * NUM_FACES + 4 + 4  # llama_row, decision, dice, then the four single entries
_F32 = np.dtype(np.float32)
_GAME_OVER = Phase.GAME_OVER


class _Consts(NamedTuple):
    """Per (rules, player count) constants and caches of the encoder."""

    rules: RulesConfig
    n: int
    threshold: int
    perm: np.ndarray  # obs index -> index in the joined blocks
    orders: tuple[tuple[int, ...], ...]  # per observing seat: the seats in observation order
    totals: dict  # round points -> {total: total, to_threshold, would_end_game, packed}
    displays: dict  # display -> (scaled counts, points / 31, p_no_match packed; totals[points]; points)
    context: list  # per observing seat: (quit, to_act, start) -> quit + to_act + start blocks, packed
    table: dict  # (row, phase, dice, active) -> the blocks after the per-player ones, packed


_CONSTS: dict[tuple[int, int], _Consts] = {}  # (id(rules), n): the fast path
_CONSTS_BY_VALUE: dict[tuple[RulesConfig, int], _Consts] = {}  # equal rules share their caches
_CACHE_MAX = 1 << 17
_PACK_DISPLAY = struct.Struct(f"{_DISPLAY_FLOATS}f").pack
_PACK_TOTAL = struct.Struct("3f").pack
_PACK_TABLE = struct.Struct(f"{_TABLE_FLOATS}f").pack


def _permutation(n: int) -> np.ndarray:
    """Where each entry of the observation lies in the joined blocks (players, context, table)."""
    blocks = {e.name: e for e in _layout(n)}
    pos: dict[str, list[int]] = {"display": [_PLAYER_FLOATS * k + f for k in range(n) for f in range(NUM_FACES)]}
    ctx = _PLAYER_FLOATS * n
    for j, name in enumerate(("quit", "to_act", "start_player")):
        pos[name] = [ctx + j * n + k for k in range(n)]
    for m, name in enumerate(("round_points", "p_no_match", "total", "to_threshold", "would_end_game")):
        pos[name] = [_PLAYER_FLOATS * k + NUM_FACES + m for k in range(n)]
    table = ctx + 3 * n
    perm = []
    for name, *_ in _BLOCKS:
        e = blocks[name]
        if name not in pos:  # a fixed-size block: it follows the previous ones in the table bytes
            pos[name] = list(range(table, table + e.length))
            table += e.length
        assert len(pos[name]) == e.length
        perm += pos[name]
    assert sorted(perm) == list(range(observation_size(n)))
    return np.array(perm, dtype=np.intp)


def _consts(rules: RulesConfig, n: int) -> _Consts:
    key = (id(rules), n)
    c = _CONSTS.get(key)
    if c is None or c.rules is not rules:
        if len(_CONSTS) > 256:
            _CONSTS.clear()
        shared = _CONSTS_BY_VALUE.get((rules, n))
        if shared is None:
            if len(_CONSTS_BY_VALUE) > 32:
                _CONSTS_BY_VALUE.clear()
            orders = tuple(tuple((s + k) % n for k in range(n)) for s in range(n))
            shared = _CONSTS_BY_VALUE[(rules, n)] = _Consts(
                rules, n, rules.end_threshold, _permutation(n), orders, {}, {}, [{} for _ in range(n)], {},
            )
        # keep a reference to this rules object so that its id stays unique while cached
        c = _CONSTS[key] = shared._replace(rules=rules)
    return c


def _display_features(c: _Consts, d: Sequence[int]) -> tuple[bytes, dict[int, bytes], int]:
    """A display's packed blocks, the total blocks of its round points (:func:`_total_features`), its points."""
    d = tuple(d)
    feats = c.displays.get(d)
    if feats is not None:
        return feats
    if len(c.displays) > _CACHE_MAX:
        c.displays.clear()
    sx = _DISPLAY_SCALE
    pts = score_display(d)
    totals = c.totals.get(pts)
    if totals is None or len(totals) > _CACHE_MAX:
        totals = c.totals[pts] = {}
    feats = c.displays[d] = (
        _PACK_DISPLAY(d[0] * sx[0], d[1] * sx[1], d[2] * sx[2], d[3] * sx[3], d[4] * sx[4], d[5] * sx[5],
                      d[6] * sx[6], pts / MAX_ROUND_POINTS, p_no_match(d, c.rules)),
        totals,
        pts,
    )
    return feats


def _total_features(c: _Consts, df: tuple[bytes, dict[int, bytes], int], t: int) -> bytes:
    """A player's total, to_threshold and would_end_game (packed), from total ``t`` and ``df``'s round points."""
    pts = df[2]
    thr = c.threshold
    feats = df[1][t] = _PACK_TOTAL(
        t / thr if t < thr else 1.0,
        0.0 if t >= thr else ((thr - t) / MAX_ROUND_POINTS if thr - t < MAX_ROUND_POINTS else 1.0),
        1.0 if ends_game(t + pts, c.rules) else 0.0,
    )
    return feats


def _context(c: _Consts, seat: int, key: tuple) -> bytes:
    """The ``quit``, ``to_act`` and ``start_player`` blocks seen from ``seat`` (packed)."""
    cache = c.context[seat]
    if len(cache) > _CACHE_MAX:
        cache.clear()
    quit_, to_act, start = key
    order = c.orders[seat]
    feats = (tuple(1.0 if quit_[p] else 0.0 for p in order)
             + tuple(1.0 if p == to_act else 0.0 for p in order)
             + tuple(1.0 if p == start else 0.0 for p in order))
    packed = cache[key] = struct.pack(f"{len(feats)}f", *feats)
    return packed


def _table(c: _Consts, key: tuple) -> bytes:
    """The blocks after the per-player ones (row, decision, dice, last player, active, rules), packed."""
    if len(c.table) > _CACHE_MAX:
        c.table.clear()
    row, phase, dice, active = key
    dc = [0.0] * NUM_FACES
    for f in dice or ():
        dc[f] += 1.0
    rules = c.rules
    feats = (
        tuple(float(x) for x in row)
        + _PHASE_ONE_HOT[phase]
        + tuple(x / 3.0 for x in dc)
        + (1.0 if active == 1 else 0.0, active / c.n,
           1.0 if rules.must_discard else 0.0, 1.0 if rules.triple_llama == "also_match" else 0.0)
    )
    packed = c.table[key] = _PACK_TABLE(*feats)
    return packed


# Per thread and player count: a float32 array over a bytearray and a memoryview of it, which encode() fills and
# fancy-indexes (no frombuffer array each call).
_TLS = threading.local()


def _staging(n: int) -> tuple[memoryview, np.ndarray]:
    """This thread's staging array for ``n`` players, and a byte view of it (made on first use)."""
    stages = getattr(_TLS, "stages", None)
    if stages is None:
        stages = _TLS.stages = {}
    buf = bytearray(observation_size(n) * _F32.itemsize)
    st = stages[n] = (memoryview(buf), np.frombuffer(buf, _F32))
    return st


# The last encoding (game, version, seat, joined blocks, permutation): one tuple, swapped atomically.
_LAST: tuple = (None, -1, -1, b"", None)
# The last call's (rules, num_players, _Consts, its displays, orders, context, table, perm).
_MEMO: tuple = (None, 0, None, None, None, None, None, None)


def encode(game: LamaGame, seat: int, out: np.ndarray | None = None) -> np.ndarray:
    """Encode ``game`` as seen from ``seat`` (see the module docstring for the layout).

    Args:
        game: the game (not modified).
        seat: the observing seat, ``0 .. num_players - 1`` (``game.current_player`` for the player to move).
        out: optionally, a ``float32`` array of length :func:`observation_size` to write into.

    Returns:
        A new ``float32`` array of shape ``(observation_size(N),)`` (or ``out``), every entry in ``[0, 1]``.
    """
    global _LAST, _MEMO
    if type(game) is LamaGame:  # the compiled encoder over the game's record (bit-equal to the code below)
        return game.observe(seat, out)
    view = cast(Any, game).encoder_view()  # (a state that is not a LamaGame: the solo solver's)
    n, rules, version, displays, totals, quit_, current, start, row, phase, dice, active = view
    last = _LAST
    if last[0] is game and last[1] == version and last[2] == seat:  # a seat cached here passed the check
        joined, perm = last[3], last[4]
    else:
        if not 0 <= seat < n:
            raise ValueError(f"seat must be 0..{n - 1}, got {seat!r}")
        memo = _MEMO
        if memo[0] is not rules or memo[1] != n:
            c = _CONSTS.get((id(rules), n))
            if c is None or c.rules is not rules:
                c = _consts(rules, n)
            memo = _MEMO = (rules, n, c, c.displays, c.orders, c.context, c.table, c.perm)
        _, _, c, dcache, orders, contexts, tables, perm = memo  # (a tuple: no attribute look-ups per call)
        parts: list[bytes] = []
        append = parts.append
        for p in orders[seat]:
            try:
                df = dcache[displays[p]]
            except (KeyError, TypeError):  # a new display (or a list of counts: keyed by its tuple)
                df = _display_features(c, displays[p])
            append(df[0])
            t = totals[p]
            try:
                append(df[1][t])
            except KeyError:
                append(_total_features(c, df, t))
        context_key = (tuple(quit_), current if phase != _GAME_OVER else -1, start)
        try:
            append(contexts[seat][context_key])
        except KeyError:
            append(_context(c, seat, context_key))
        table_key = (tuple(row), phase, dice, active)
        try:
            append(tables[table_key])
        except KeyError:
            append(_table(c, table_key))
        joined = b"".join(parts)
        _LAST = (game, version, seat, joined, perm)
    try:
        mv, stage = _TLS.stages[n]
    except (AttributeError, KeyError):
        mv, stage = _staging(n)
    mv[:] = joined
    v = stage[perm]  # a new, writable array
    if out is not None:
        out[:] = v
        return out
    return v


def describe(x: np.ndarray, num_players: int) -> dict[str, list[float]]:
    """Split an observation vector into its named blocks (for debugging and docs)."""
    x = np.asarray(x)
    return {e.name: x[e.start:e.start + e.length].tolist() for e in observation_layout(num_players)}


__all__ = ["MAX_ROUND_POINTS", "LayoutEntry", "describe", "encode", "layout_table", "observation_layout",
           "observation_size"]
