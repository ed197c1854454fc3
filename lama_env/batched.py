"""A compiled batched engine: many full games at once, for fast evaluation.

:func:`play_batch` plays ``G`` complete games for ``N`` players whose seats are filled by *native* policies
(:class:`NativePolicy`, plain data that a policy builds for itself: ``policy.native(rules)``; this module
knows no agent) inside one Numba-compiled kernel over the package's one compiled step
(:func:`lama_env._kernel.transition`), and returns per-game outcome arrays (:class:`BatchResult`).  Game
``g`` draws from its own stream, a function of ``(seed, game_ids[g])`` only, so it plays the same alone, in
a batch or logged (``log_games``, :meth:`BatchResult.record`).  (docs/environments.md, The batched engine)
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, overload

import numpy as np
from numba import njit

from . import _kernel as K
from . import constants as C
from . import streams
from .constants import KIND_RANDOM, KIND_TABLE, LOG_END, LOG_QUIT, LOG_ROLL, LOG_ROUND, OUT_DISCARD, OUT_TAKE
from .errors import LamaDiceError
from .rules import FACES, HAND_SIZE, NUM_FACES, RulesConfig, check_num_players
from .rules import winners as _winners

__all__ = ["KIND_RANDOM", "KIND_TABLE", "NUM_MASKS", "BatchResult", "NativePolicy", "NativePolicyError",
           "compile_kernel", "mask_display", "native_description", "play_batch"]

NUM_MASKS = 1 << NUM_FACES  #: displays by the set of faces they hold


class NativePolicyError(LamaDiceError, ValueError):
    """A policy that the batched engine cannot play natively, a malformed description or a bad argument."""


#: The display holding one card of each face of a mask (:func:`lama_env._kernel.mask_display`): a table
#: policy's tables are indexed by such masks.
mask_display = K.mask_display


@dataclass(frozen=True, eq=False)
class NativePolicy:
    """A policy as plain data, for the kernel (build one with :meth:`random` or :meth:`table`).

    Attributes:
        spec: a label (the agent's spec, e.g. ``"threshold:0.2"``).
        kind: :data:`KIND_RANDOM` or :data:`KIND_TABLE`.
        quit_table: ``uint8[NUM_MASKS]``: for :data:`KIND_TABLE`, 1 where the policy quits at the start of its
            turn holding the faces of the mask.
        take_rank: ``int64[NUM_MASKS, NUM_FACES]``: for :data:`KIND_TABLE`, the policy takes the shown row card
            of smallest rank (the first face on ties).
        rules: the rules the tables were built for (None: valid under any rules).
    """

    spec: str
    kind: int
    quit_table: np.ndarray = field(repr=False)
    take_rank: np.ndarray = field(repr=False)
    rules: RulesConfig | None = None

    @classmethod
    def random(cls, spec: str = "random") -> NativePolicy:
        """Uniform over the legal actions."""
        return cls(spec, KIND_RANDOM, np.zeros(NUM_MASKS, dtype=np.uint8),
                   np.zeros((NUM_MASKS, NUM_FACES), dtype=np.int64))

    @classmethod
    def table(cls, spec: str, quit_table: Any, take_rank: Any, rules: RulesConfig | None = None) -> NativePolicy:
        """A :data:`KIND_TABLE` policy (see the attributes); raises :class:`NativePolicyError` if malformed."""
        q = np.ascontiguousarray(quit_table, dtype=np.uint8)
        t = np.ascontiguousarray(take_rank, dtype=np.int64)
        if q.shape != (NUM_MASKS,) or t.shape != (NUM_MASKS, NUM_FACES):
            raise NativePolicyError(f"a table policy needs quit_table[{NUM_MASKS}] and take_rank[{NUM_MASKS}, "
                                    f"{NUM_FACES}], got {q.shape} and {t.shape}")
        q.flags.writeable = False
        t.flags.writeable = False
        return cls(spec, KIND_TABLE, q, t, rules)


@overload
def native_description(agent: Any, rules: RulesConfig, required: Literal[True]) -> NativePolicy: ...
@overload
def native_description(agent: Any, rules: RulesConfig, required: bool = False) -> NativePolicy | None: ...
def native_description(agent: Any, rules: RulesConfig, required: bool = False) -> NativePolicy | None:
    """The native description of ``agent`` (a :class:`NativePolicy`, or an object with ``native(rules)``).

    The one way an agent becomes one: :func:`play_batch`, the vector env's opponents and the training's go
    through here.

    Returns:
        The description, or None where there is none (no ``native()``, it gives None or not a description,
        or one built for other rules) and not ``required``.

    Raises:
        NativePolicyError: ``required`` and no description, naming why.
    """
    desc: Any = agent
    why = None  # why there is no description
    if not isinstance(agent, NativePolicy):
        native = getattr(agent, "native", None)
        desc = native(rules) if callable(native) else None
        if not callable(native):
            why = (f"{agent!r} is neither a native policy description nor a policy with a native() method "
                   "(lama_dice.agents.native.play_batch takes agent specs)")
        elif desc is None:
            why = f"agent {getattr(agent, 'spec', agent)!r} is not a native policy (its native() gives no description)"
        elif not isinstance(desc, NativePolicy):
            why = f"{agent!r}.native() returned {desc!r}, not a NativePolicy"
    if why is None and desc.rules is not None and desc.rules != rules:
        why = f"native policy {desc.spec!r} was built for other rules than these"
    if why is None:
        return desc
    if required:
        raise NativePolicyError(why)
    return None


#: Transitions per call of the compiled kernel: a call holds the interpreter (a Ctrl-C waits for it), so it
#: is kept to tens of milliseconds, a game under way carried over to the next call; the games are the same.
KERNEL_STEPS = 1 << 19


@njit(cache=True)
def _play_kernel(r, log, agents, seat_agent, game_ids, seed_mixed, tot, stats, rounds, log_len, s, pos, budget):
    """Play games ``g = pos[0]..G-1`` (``G = len(seat_agent)``), ``budget`` transitions at most; see :func:`play_batch`.

    Game ``g`` starts from the streams of ``(seed_mixed, game_ids[g])`` (:func:`lama_env.streams.kernel_seed`);
    agent ``agents[seat_agent[g, p]]`` (:data:`lama_env._kernel.AGENT_DTYPE`) plays seat ``p``.  The games are
    played in turn in the state record ``s[0]``; totals, per-seat statistics and rounds go to ``tot[g]``,
    ``stats[g]`` (``[G, 5, N]``) and ``rounds[g]``.  With ``r.logging`` game ``g`` is logged into ``log[g]`` (at
    least ``LOG_ROOM + 8 N`` entries) and ``log_len[g]`` gets its length, or -1 if it overflowed.  ``pos``
    (``int64[3]``: the next game, whether it is under way, whether its log overflowed) is updated; call again
    until ``pos[0] == G``.
    """
    n = r.n
    logging = r.logging
    room = K.LOG_ROOM + 8 * n
    cap = log.shape[1]
    local = s.copy()  # a local record (what the compiler keeps closest), copied back to s[0]
    gs = local[0]
    games = seat_agent.shape[0]
    steps = 0
    g = pos[0]
    while g < games:
        if pos[1] == 0:
            K.start_streams(gs, seed_mixed, game_ids[g])
            gs.logpos = 0
            K.new_game(gs, r)
            if logging:
                K.log_deal(gs, r, log, g)
            pos[1] = 1
            pos[2] = 0
        while True:
            if steps >= budget:
                pos[0] = g
                s[0] = local[0]
                return
            steps += 1
            if logging and gs.logpos + room > cap:
                pos[2] = 1  # the log is dropped (play_batch plays the game again with a longer one)
                gs.logpos = 0
            st, a = K.native_action(agents[seat_agent[g, gs.cur]], gs, r, gs.ps)
            gs.ps = st
            code = K.transition(gs, r, a)
            if logging:
                K.log_step(gs, r, log, g)
            if code == K.GAME_OVER:
                break
            if code == K.ROUND_OVER:
                K.next_round(gs, r)
                if logging:
                    K.log_deal(gs, r, log, g)
        for p in range(n):
            tot[g, p] = gs.tot[p]
            for k in range(5):
                stats[g, k, p] = gs.stats[k, p]
        rounds[g] = gs.nround + 1
        if logging:
            log_len[g] = -1 if pos[2] else gs.logpos
        pos[1] = 0
        g += 1
    pos[0] = g


def _play_all(r, log, agents, seat_agent, game_ids, seed_mixed, tot, stats, rounds, log_len) -> None:
    """:func:`_play_kernel` over the whole batch, :data:`KERNEL_STEPS` transitions per call (Ctrl-C works)."""
    s = K.new_state(1)
    pos = np.zeros(3, dtype=np.int64)
    while pos[0] < len(seat_agent):
        _play_kernel(r, log, agents, seat_agent, game_ids, seed_mixed, tot, stats, rounds, log_len, s, pos,
                     KERNEL_STEPS)


@dataclass
class BatchResult:
    """Outcomes of a batch of games (arrays indexed by game, then seat).

    Attributes:
        num_players: players per game.
        rules: the rules played.
        game_ids: ``int64[G]``, the id of each game (its random stream).
        seating: ``int64[G, N]``, the agent index at each seat.
        totals: ``int64[G, N]``, final totals by seat (lower is better).
        round_points: ``int64[G, N]``, the sum of each seat's round points.
        rounds: ``int64[G]``, rounds played.
        busts, quits, went_out, triple_llamas: ``int64[G, N]`` counts per seat (busts caused, quits, rounds
            gone out, triple llamas rolled).
        logs: game index -> trajectory log (``int32`` array) for logged games.
    """

    num_players: int
    rules: RulesConfig
    game_ids: np.ndarray
    seating: np.ndarray
    totals: np.ndarray
    round_points: np.ndarray
    rounds: np.ndarray
    busts: np.ndarray
    quits: np.ndarray
    went_out: np.ndarray
    triple_llamas: np.ndarray
    logs: dict[int, np.ndarray] = field(default_factory=dict)

    @property
    def num_games(self) -> int:
        """How many games were played (``G``)."""
        return int(self.totals.shape[0])

    def winners_mask(self) -> np.ndarray:
        """``bool[G, N]``: seats tied for the fewest points."""
        return self.totals == self.totals.min(axis=1, keepdims=True)

    def record(self, g: int) -> dict:
        """Game ``g`` (which must have been logged) as a ``lama-dice-record/1`` dict."""
        return log_to_record(self._log(g), self.num_players, self.rules)

    def result(self, g: int) -> dict:
        """The batched engine's replay result of logged game ``g`` (docs/RULES.md format)."""
        return log_to_result(self._log(g), self.num_players)

    def _log(self, g: int) -> np.ndarray:
        if g not in self.logs:
            raise KeyError(f"game {g} was not logged (pass it in log_games)")
        return self.logs[g]


def iter_log(log: np.ndarray, n: int) -> Iterator[tuple[int, int, np.ndarray]]:
    """The entries of a trajectory log of the kernel, as ``(offset, tag, fields)``: the one parser of the logs.

    ``fields`` is the entry after its tag: ``LOG_ROUND`` start player and the ``n`` hands; ``LOG_QUIT``
    player; ``LOG_ROLL`` player, three dice, outcome, its argument; ``LOG_END`` how the round ended, who
    went out, the round points and the totals.
    """
    lengths = {LOG_ROUND: 2 + n * HAND_SIZE, LOG_QUIT: 2, LOG_ROLL: 7, LOG_END: 3 + 2 * n}  # with the tag
    i, size = 0, len(log)
    while i < size:
        tag = int(log[i])
        if tag not in lengths:  # pragma: no cover - a kernel bug
            raise ValueError(f"corrupt trajectory log at {i}: tag {tag}")
        yield i, tag, log[i + 1:i + lengths[tag]]
        i += lengths[tag]


def log_to_record(log: np.ndarray, num_players: int, rules: RulesConfig) -> dict:
    """A trajectory log of the kernel as a ``lama-dice-record/1`` dict."""
    n = num_players
    rounds: list[dict] = []
    for _, tag, e in iter_log(log, n):
        if tag == LOG_ROUND:
            cards = [FACES[int(c)] for c in e[1:]]
            rounds.append({"start_player": int(e[0]),
                           "hands": [cards[p * HAND_SIZE:(p + 1) * HAND_SIZE] for p in range(n)],
                           "turns": []})
        elif tag == LOG_QUIT:
            rounds[-1]["turns"].append({"player": int(e[0]), "action": "quit"})
        elif tag == LOG_ROLL:
            turn: dict[str, Any] = {"player": int(e[0]), "action": "roll",
                                    "dice": [FACES[int(f)] for f in e[1:4]]}
            if e[4] == OUT_DISCARD:
                turn["discard"] = [FACES[f] for f in range(NUM_FACES) for _ in range((int(e[5]) >> (2 * f)) & 3)]
            elif e[4] == OUT_TAKE:
                turn["take"] = FACES[int(e[5])]
            rounds[-1]["turns"].append(turn)
    return {"format": C.RECORD_FORMAT, "players": n, "rules": rules.to_dict(),
            "start_points": [0] * n, "rounds": rounds}


def log_to_result(log: np.ndarray, num_players: int) -> dict:
    """The per-round results a trajectory log carries, in the replay-result format."""
    n = num_players
    rounds: list[dict[str, Any]] = []
    for _, tag, e in iter_log(log, n):
        if tag == LOG_END:
            wo = int(e[1])
            rounds.append({"finished": True, "ended_by": C.ROUND_ENDINGS[int(e[0])],
                           "went_out": wo if wo >= 0 else None,
                           "points": [int(x) for x in e[2:2 + n]],
                           "totals": [int(x) for x in e[2 + n:2 + 2 * n]]})
    totals = rounds[-1]["totals"] if rounds else [0] * n
    return {"valid": True, "rounds": rounds, "totals": list(totals), "game_over": True,
            "winners": _winners(totals)}


# ------------------------------------------------------------------- driver
def play_batch(num_players: int, agents: Sequence[Any], *, games: int | None = None, seating: np.ndarray | None = None,
               rules: RulesConfig | Mapping | None = None, seed: int | None = None, game_ids: np.ndarray | None = None,
               log_games: Sequence[int] = (), log_capacity: int = 4096) -> BatchResult:
    """Play whole games with native policies in the compiled kernel.

    Args:
        num_players: players per game, 1..6.
        agents: :class:`NativePolicy` descriptions, or objects with a ``native(rules)`` method that returns one,
            indexed by ``seating``; :func:`lama_dice.agents.native.play_batch` also takes agent specs.
        games: number of games; with ``seating=None`` agent ``s % len(agents)`` sits at seat ``s``.
        seating: ``int[G, N]`` agent index at each seat (gives ``games``).
        rules: a :class:`RulesConfig` or mapping; docs/RULES.md's defaults if None.
        seed: base seed; game ``g`` plays the random stream of ``(seed, game_ids[g])``.
        game_ids: ``int[G]`` stream ids (default ``0..G-1``); equal ids replay equal games (given equal seating).
        log_games: game indices whose trajectories to keep (:meth:`BatchResult.record`).
        log_capacity: initial log size per logged game (grown as needed).

    Raises:
        NativePolicyError: an agent is not native, or a bad argument.
    """
    rules = RulesConfig.from_dict(rules)
    n = check_num_players(num_players, NativePolicyError)
    if not agents:
        raise NativePolicyError("at least one agent is needed")
    natives = [native_description(a, rules, required=True) for a in agents]
    if seating is None:
        if games is None:
            raise NativePolicyError("give games or seating")
        seating = np.tile(np.arange(n) % len(natives), (int(games), 1))
    seating = np.ascontiguousarray(seating, dtype=np.int64)
    if seating.ndim != 2 or seating.shape[1] != n:
        raise NativePolicyError(f"seating must have shape (games, {n}), got {seating.shape}")
    if seating.size and (seating.min() < 0 or seating.max() >= len(natives)):
        raise NativePolicyError(f"seating holds agent indices outside 0..{len(natives) - 1}")
    n_games = seating.shape[0]
    if games is not None and games != n_games:
        raise NativePolicyError(f"games={games} but seating has {n_games} rows")
    if game_ids is None:
        game_ids = np.arange(n_games, dtype=np.int64)
    game_ids = np.ascontiguousarray(game_ids, dtype=np.int64)
    if game_ids.shape != (n_games,):
        raise NativePolicyError(f"game_ids must have shape ({n_games},), got {game_ids.shape}")
    seed_mixed = streams.kernel_seed(seed, NativePolicyError)
    table = K.agents_table(np.array([a.kind for a in natives], dtype=np.int64),
                           np.stack([a.quit_table for a in natives]), np.stack([a.take_rank for a in natives]))
    no_log = np.zeros((0, 0), dtype=np.int32)
    tot = np.zeros((n_games, n), dtype=np.int64)
    stats = np.zeros((n_games, 5, n), dtype=np.int64)
    rounds = np.zeros(n_games, dtype=np.int64)
    _play_all(K.make_rules(n, rules, K.TABLES)[()], no_log, table, seating, game_ids, seed_mixed, tot, stats, rounds,
              rounds)

    logs: dict[int, np.ndarray] = {}
    todo = sorted({int(g) for g in log_games})
    if todo and (todo[0] < 0 or todo[-1] >= n_games):
        raise NativePolicyError(f"log_games must be game indices 0..{n_games - 1}")
    cap = max(int(log_capacity), K.LOG_ROOM + 8 * n)
    logged = K.make_rules(n, rules, K.TABLES, logging=True)[()]
    while todo:
        idx = np.array(todo, dtype=np.int64)
        k = len(idx)
        log = np.zeros((k, cap), dtype=np.int32)
        log_len = np.zeros(k, dtype=np.int64)
        tot2 = np.zeros((k, n), dtype=np.int64)
        _play_all(logged, log, table, seating[idx], game_ids[idx], seed_mixed, tot2,
                  np.zeros((k, 5, n), dtype=np.int64), np.zeros(k, dtype=np.int64), log_len)
        if not np.array_equal(tot2, tot[idx]):  # pragma: no cover
            raise RuntimeError("batched engine: a logged game did not replay identically")
        retry = []
        for j, g in enumerate(todo):
            if log_len[j] < 0:
                retry.append(g)
            else:
                logs[g] = log[j, :log_len[j]].copy()
        todo, cap = retry, cap * 4

    return BatchResult(n, rules, game_ids, seating, tot, stats[:, 0].copy(), rounds, stats[:, 1].copy(),
                       stats[:, 2].copy(), stats[:, 3].copy(), stats[:, 4].copy(), logs)


def compile_kernel() -> float:
    """Compile (or load from the on-disk cache) the kernel now; return the seconds it took."""
    t0 = time.perf_counter()
    first_face = np.tile(np.arange(NUM_FACES, dtype=np.int64), (NUM_MASKS, 1))
    play_batch(2, [NativePolicy.random(), NativePolicy.table("always-roll", np.zeros(NUM_MASKS), first_face)],
               games=1, seed=0, log_games=[0])
    return time.perf_counter() - t0
