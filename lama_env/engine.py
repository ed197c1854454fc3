"""The rules engine: one game of *Don't L.L.A.M.A. Dice* (docs/RULES.md) as a view over the compiled engine's record.

A :class:`LamaGame`, driven by the integer actions of :mod:`lama_env.actions` (docs/environments.md, The rules engine
in Python; The state API), holds one record of ``lama_env._kernel.STATE_DTYPE`` (stepped by ``lama_env._game``, as in
``play_batch`` and ``VectorGame``), a pending chance event and the compiled log (persistence: :mod:`lama_env.snapshot`).
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable, Sequence
from copy import deepcopy
from enum import IntEnum
from operator import attrgetter
from typing import Any, cast

import numpy as np

from . import actions as A
from . import snapshot as S
from .constants import DECK_COUNTS, FACES, HAND_SIZE, LOG_END, LOG_QUIT, LOG_ROLL, NUM_DICE, NUM_FACES, ROUND_OVER
from .errors import LamaDiceError, RetiredError, clip, retired
from .gamelog import iter_log, log_to_record, log_to_result, round_result
from .reader import MAX_START_POINTS
from .rules import RulesConfig, check_num_players, return_chip, win_rewards, winners
from .streams import Streams, decision_key
from .transitions import chance_outcomes as roll_outcomes
from .transitions import deal_outcomes

#: The format of :meth:`LamaGame.serialize` strings and of pickled games.
STATE_FORMAT = "lama-dice-state/2"
#: How chance is resolved: ``"sampled"`` (drawn as it happens) or ``"explicit"`` (:meth:`LamaGame.apply_chance`).
CHANCE_MODES = ("sampled", "explicit")
#: What :meth:`LamaGame.returns` can measure (the environments' ``reward`` modes).
RETURNS = ("win", "points")
_ROLL, _QUIT, _NUM_ACTIONS = A.ROLL, A.QUIT, A.NUM_ACTIONS
_FACE_RANGE = range(NUM_FACES)
_DEFAULT_RULES = RulesConfig()  #: (a frozen dataclass: one shared instance)
_ROLL_NODE = "roll"  #: ``_chance`` at a roll's chance node (at a deal's: the tuple of the faces dealt so far)
_FULL_MASK = (1 << NUM_FACES) - 1  #: the full llama row as a bit set (a record's ``row``)
#: The per-seat counts of :meth:`LamaGame.statistics`, in the order of the compiled record's ``stats`` rows.
_COUNTS = ("points", "busts", "quits", "went_out", "triple_llamas")


def _is_explicit(chance: Any) -> bool:
    """Whether a ``chance`` argument (one of :data:`CHANCE_MODES`) asks for explicit chance nodes."""
    if chance not in CHANCE_MODES:
        raise GameSetupError(f"chance must be one of {', '.join(map(repr, CHANCE_MODES))}, got {clip(chance)}")
    return bool(chance == "explicit")


def _check_rounds(rounds: Any) -> None:
    """Refuse ``rounds="manual"`` (retired) or anything but ``"flow"``."""
    if rounds == "manual":
        raise GameSetupError(retired("rounds='manual'", "rounds always flow; the step that ends a round deals "
                                     "the next one and LamaGame.last_round describes the round it ended"))
    if rounds != "flow":
        raise GameSetupError(f"rounds must be 'flow', got {clip(rounds)}")


class Phase(IntEnum):
    """The decision the current player faces, or the end of the game (3 was a retired round-over phase)."""

    TURN = 0  #: roll or quit
    DISCARD = 1  #: choose which matched cards to discard
    TAKE = 2  #: choose which llama-row card to take
    GAME_OVER = 4  #: the game has ended


# The members as module globals: ``Phase.TURN`` is a (slow) enum class attribute lookup.
_TURN, _DISCARD, _TAKE, _GAME_OVER = Phase.TURN, Phase.DISCARD, Phase.TAKE, Phase.GAME_OVER
_PHASES = (_TURN, _DISCARD, _TAKE, _TURN)  #: the record's phases as the engine's
_ROWS = tuple(tuple(m >> f & 1 for f in _FACE_RANGE) for m in range(1 << NUM_FACES))  #: row bit set -> 0/1 per face


class IllegalActionError(LamaDiceError, ValueError):
    """An action (or injected dice / hands) that the rules do not allow now."""


class GameSetupError(LamaDiceError, ValueError):
    """A bad argument to :class:`LamaGame` (player count, start points, start player)."""


# ---------------------------------------------------------------------------- the compiled engine, loaded on first use
# (import lama_env loads no Numba; the first game does, from its on-disk cache.)  Set by _load from their homes.
_G = _step = K_STATE_DTYPE = _RANDOM_AGENT = cast(Any, None)
_BLANK = b""
_FULL = VIEW_SCALARS = _DECISION_NONE = 0
#: The legal actions by decision key (lama_env._game.legal_key), listed by lama_env._kernel.legal when first seen.
_LEGAL: dict[int, tuple[int, ...]] = {}
_NO_DEAL = np.full((1, HAND_SIZE), -1, np.int64)  #: _game.begin: no card dealt yet (explicit chance)
_STREAM_DEAL = np.zeros((0, HAND_SIZE), np.int64)  #: _game.begin: deal from the record's stream
_LOCK = threading.Lock()
#: What to_state writes neutral (the kernel's scratch and log fields).
_SCRATCH = ("deck", "cnt", "logpos", "done_len", "l_player", "l_phase", "l_action", "l_out", "l_detail",
            "l_ended", "l_wo")
_RULES: dict[tuple[int, RulesConfig], np.ndarray] = {}
#: Called once the compiled engine is loaded (the library adds none; the ``lama-dice`` command ``gc.freeze``).
LOAD_HOOKS: list[Callable[[], None]] = []


def _load() -> None:
    """Import the compiled engine (Numba) once."""
    global _G, _step, K_STATE_DTYPE, _RANDOM_AGENT, _BLANK, VIEW_SCALARS, _FULL, _DECISION_NONE
    with _LOCK:
        if _G is not None:
            return
        from . import _game
        from . import _kernel as K
        from ._vector_kernel import DECISION_NONE

        _FULL, VIEW_SCALARS, _DECISION_NONE, _step = _game.FULL, _game.VIEW_SCALARS, DECISION_NONE, _game.step
        K_STATE_DTYPE, _BLANK = K.STATE_DTYPE, K.new_state(1).tobytes()
        _RANDOM_AGENT = K.agents_table(np.array([K.KIND_RANDOM]), np.zeros((1, 128), np.uint8),
                                       np.zeros((1, 128, 7), np.int64))
        _G = _game
        # every compiled call once (loaded from Numba's on-disk cache: what the first games would load)
        rr, rec, log = _rules_record(2, _DEFAULT_RULES), _new_record(), _new_log()
        _game.begin(rec, rr, 0, 0, _STREAM_DEAL, log)
        _game.view(rec, 2)
        _game.observe(rec, rr, 0, 0, 0, False, np.empty(52, np.float32))
        _game.legal_actions(rec, rr)
        _game.sample(rec, rr, _RANDOM_AGENT)
        _game.step(rec, rr, _QUIT, -1, False, log)
        _game.deal_card(rec, rr, 0, 0, log)
        for hook in LOAD_HOOKS:
            hook()


def _new_record(raw: Any = None) -> np.ndarray:
    """A one-game record over a ``bytearray`` copy of ``raw`` (None: zeroed, ``pend`` -1; faster than a copy)."""
    if _G is None:
        _load()
    return np.frombuffer(bytearray(_BLANK if raw is None else raw), K_STATE_DTYPE)


def _new_log() -> np.ndarray:
    """An empty log of the compiled engine for one game (``[1, cap]`` int32; grown as it fills)."""
    return np.zeros((1, 512), np.int32)


def _rules_record(n: int, rules: RulesConfig) -> np.ndarray:
    """The compiled engine's rules record for ``n`` players under ``rules``: logged, with the observation's tables."""
    rr = _RULES.get((n, rules))
    if rr is None:
        if _G is None:
            _load()
        from ._kernel import make_rules, observation_tables

        rr = _RULES[n, rules] = make_rules(n, rules, True, **observation_tables(rules)).reshape(1)
    return rr


def _check_rng(rng: Any) -> Streams:
    """``rng`` if it is a :class:`~lama_env.streams.Streams`, else raise (a NumPy generator: retired)."""
    if type(rng) is not Streams:
        if isinstance(rng, np.random.Generator):
            raise GameSetupError(retired("a game drawing from a numpy.random.Generator", "pass seed= and "
                                         "game_id=, or rng=lama_env.streams.Streams (the compiled engine's streams)"))
        raise GameSetupError(f"rng must be a lama_env.streams.Streams, got {type(rng).__name__}")
    return rng


def as_action(action: Any) -> Any:
    """``action`` as a Python int when it is an integer (NumPy scalars, 0-d arrays) or equals one, else as it is."""
    if type(action) is int:
        return action
    if isinstance(action, (np.integer, int)) and not isinstance(action, bool):
        return int(action)
    if isinstance(action, np.ndarray) and action.shape in ((), (1,)) and np.issubdtype(action.dtype, np.integer):
        return int(action.reshape(()))
    if isinstance(action, (str, bool)):
        return action
    try:
        a = int(action)
    except (TypeError, ValueError, OverflowError):
        return action
    return a if a == action else action


class RetiredMemberError(RetiredError, AttributeError):
    """A retired member of :class:`LamaGame` was used (an ``AttributeError`` too: ``hasattr`` is False)."""


_LAST = "game.last_round[{!r}] (the round the last step ended; the last round once the game is over)"
#: The members of :class:`LamaGame` retired in 0.3.0 (``next_round`` in 0.2.0), each with what replaces it:
#: ``game.NAME`` raises :class:`RetiredMemberError` with that one line.
RETIRED_MEMBERS: dict[str, str] = {
    "next_round": "rounds flow: the step that ends a round deals the next one, and LamaGame.last_round describes "
                  "the round it ended",
    "copy": "use game.clone()",
    "display": "use game.displays[player]",
    "action_mask": "use lama_env.actions.legal_mask(game.legal_actions())",
    "num_active": "use game.quit.count(False)",
    "last_player_rule": "use game.quit.count(False) == 1 (one player left: a roll matching nothing busts)",
    "current_points": "use lama_env.rules.score_display(game.displays[player])",
    "discarded": "sum the discards of the round's turns in game.to_record()",
    "turns_in_round": "count the round's turns in game.to_record() (rules.max_round_turns caps them)",
    "round_points": "use " + _LAST.format("points"),
    **{key: "use " + _LAST.format(key) for key in ("ended_by", "went_out", "busted")},
    "triple_llamas": "use " + _LAST.format("triple_llamas") + " or game.statistics()['triple_llamas'] (the game's)",
    "winners": "use game.result()['winners']",
    "round_results": "use game.result()['rounds'] (every round's points and totals) or game.last_round (the round "
                     "just ended, with busted, quit and triple_llamas)",
    "chance": "the chance mode is the chance= given to LamaGame() or clone(); game.is_chance_node() tells a "
              "chance node",
    "version": "no replacement (it keyed the package's own caches): count your steps",
    "check_dice": "use lama_env.engine.check_dice(game.rules, dice)",
    "encoder_view": "use lama_env.observation.encode(game, seat) or game.observe(seat)",
    "to_state": "use lama_env.snapshot.to_state(game)",
    "from_state": "use lama_env.snapshot.from_state(state, num_players, rules)",
}


class _RetiredMember(str):
    """A retired member of :class:`LamaGame`, the one line it answers (a descriptor: no slow ``__getattr__``)."""

    def __get__(self, game: Any, owner: Any = None) -> Any:
        """Raise: the member is retired."""
        raise RetiredMemberError(str(self))


class _Retired:
    """The base of :class:`LamaGame` holding its retired members, set at run time (type checkers flag them)."""

    __slots__ = ()


for _name, _instead in RETIRED_MEMBERS.items():  # (next_round: retired in 0.2.0 with rounds="manual")
    setattr(_Retired, _name, _RetiredMember(retired("LamaGame.next_round()", _instead) if _name == "next_round" else
                                            retired(f"LamaGame.{_name}", _instead, retired_in="0.3.0", last="0.2.0")))


class LamaGame(_Retired):
    """One game for ``num_players`` players (1 = the solo variant): a view over the compiled engine's record.

    Its arguments (players, rules, seed / rng / game_id, start_points, start_player, hands, record, chance,
    rounds, max_rounds): docs/environments.md, The rules engine in Python.
    """

    # _phase, _current and _ended cache what the record says (phase, cur, nround), for the hot path
    __slots__ = ("_chance", "_clog", "_current", "_deal_next", "_ended", "_esps", "_explicit", "_fields", "_fields_v",
                 "_legal", "_legal_v", "_max_rounds", "_n", "_phase", "_rec", "_record", "_rng", "_rr", "_rules",
                 "_start_points", "_version")

    def __init__(self, num_players: int = 2, rules: RulesConfig | dict | None = None, *, seed: int | None = None,
                 rng: Streams | None = None, game_id: int | None = None, start_points: Sequence[int] | None = None,
                 start_player: int = 0, hands: Sequence[Sequence[Any]] | None = None, record: bool = True,
                 chance: str = "sampled", rounds: str = "flow", max_rounds: int | None = None) -> None:
        """Set up the game and deal its first round (GameSetupError, or IllegalActionError for bad ``hands``)."""
        self._n = n = check_num_players(num_players, GameSetupError)
        self._rules = _DEFAULT_RULES if rules is None else RulesConfig.from_dict(rules)
        self._rng = None if rng is None else _check_rng(rng)  # the caller's, moved on with the record's streams
        if rng is not None and game_id is not None:
            raise GameSetupError("give rng or game_id, not both (game_id draws from the compiled engine's streams)")
        streams = self._rng or Streams.of_game(seed, 0 if game_id is None else game_id, GameSetupError)
        self._explicit = _is_explicit(chance)
        _check_rounds(rounds)
        if max_rounds is not None and (isinstance(max_rounds, bool) or not isinstance(max_rounds, (int, np.integer))
                                       or max_rounds < 1):
            raise GameSetupError(f"max_rounds must be an integer >= 1 or None, got {clip(max_rounds)}")
        totals = [0] * n if start_points is None else check_start_points(start_points, n)
        if (type(start_player) is not int and (isinstance(start_player, bool) or not isinstance(
                start_player, (int, np.integer)))) or not 0 <= start_player < n:
            raise GameSetupError(f"start_player must be an integer 0..{n - 1}, got {start_player!r}")
        self._max_rounds, self._start_points = int(max_rounds or 0), list(totals)
        self._rr = _rules_record(n, self._rules)
        self._set_record(s := _new_record())
        s["tot"][0, :n] = totals
        s["es"], s["ps"] = streams.es, streams.ps
        self._chance: tuple[int, ...] | str | None = None
        self._record, self._clog = record, _new_log()
        self._version = self._ended = 0
        self._fresh()
        self._set_modes()
        self._begin(int(start_player), 0, hands)

    def _set_record(self, rec: np.ndarray) -> None:
        """Hold ``rec`` (a one-game record) as the game's state, with a view of its stream states ``es`` and ``ps``."""
        self._rec = rec
        self._esps = rec.view(np.uint8)[:16].view(np.uint64)  # (es and ps lead the record)

    def _set_modes(self) -> None:
        """Whether the compiled step deals the next round itself: chance sampled, and the next round's end not a cut."""
        self._deal_next = not self._explicit and not (self._max_rounds and self._ended + 1 >= self._max_rounds)

    def _fresh(self) -> None:
        """No cached reads."""
        self._fields_v = self._legal_v = -1
        self._fields: list[int] = []
        self._legal: tuple[int, ...] = ()

    def _begin(self, start_player: int, nround: int, hands: Sequence[Sequence[Any]] | None) -> None:
        """Open round ``nround`` for ``start_player``: dealt from the stream, as given, or card by card (explicit)."""
        if hands is None:  # dealt card by card through apply_chance, or by the kernel from the record's stream
            arr = _NO_DEAL if self._explicit else _STREAM_DEAL
        else:
            arr = np.array(check_hands(hands, self._n), np.int64)
        self._make_room()
        _G.begin(self._rec, self._rr, start_player, nround, arr, self._clog)
        self._opened(start_player, arr is _NO_DEAL)

    def _opened(self, start_player: int, explicit_deal: bool) -> None:
        """A round just opened (``explicit_deal``: its deal waits at chance nodes)."""
        self._phase = _TURN
        self._current = start_player
        self._fields_v = self._legal_v = -1  # the record changed under the same version (a step's own deal)
        if explicit_deal:
            self._chance = ()  # the deal's chance node: no card dealt yet
            return
        self._legal = _LEGAL.get(0) or self._list_legal(0)  # (key 0: a turn)
        self._legal_v = self._version
        if self._rng is not None:
            self._rng.es, self._rng.ps = self._esps.tolist()

    def _round_ended(self, player: int, over: bool) -> None:
        """After the round ``player``'s step ended (``over``: a total reached the threshold): deal on, or the end."""
        dealt = self._deal_next and not over  # the compiled step dealt the next round (its end was no cut)
        self._ended += 1
        self._set_modes()
        start = int(self._rec["start"][0])
        if dealt:
            self._opened(start, False)
        elif not over and not (self._max_rounds and self._ended >= self._max_rounds):
            self._begin((start + 1) % self._n, int(self._rec["nround"][0]) + 1, None)
        else:
            self._phase = _GAME_OVER
            self._current = player

    def _make_room(self, always: bool = False) -> None:
        """Double the log (``always``, or when a deal might not fit; the compiled step says so itself: ``FULL``)."""
        if always or self._rec["logpos"][0] + 32 + 8 * self._n > self._clog.shape[1]:
            self._clog = np.concatenate([self._clog, np.zeros_like(self._clog)], axis=1)

    def step(self, action: int, dice: Sequence[Any] | None = None) -> None:
        """Apply ``action`` for the current player (``dice``: a roll's faces); else IllegalActionError, unchanged."""
        ph = self._phase
        if type(action) is not int:
            a = as_action(action)
            if not isinstance(a, int):
                raise IllegalActionError(self._illegal_message(action))
            action = int(a)
        if self._chance is not None or ph == _GAME_OVER or not 0 <= action < _NUM_ACTIONS:
            raise IllegalActionError(self._illegal_message(action))
        x = -1
        if dice is not None:
            if action != _ROLL or ph != _TURN:
                raise IllegalActionError(self._illegal_message(action) if action not in self.legal_actions()
                                         else "dice can only be given with a roll")
            x = _side_index(self._rules, check_dice(self._rules, dice))  # may raise: state unchanged
        elif action == _ROLL and ph == _TURN and self._explicit:  # the roll's chance node: apply_chance gives the dice
            self._version += 1
            self._chance = _ROLL_NODE
            return
        p = self._current
        res = _step(self._rec, self._rr, action, x, self._deal_next, self._clog)
        if res < 0:
            if res != _FULL:
                raise IllegalActionError(self._illegal_message(action))
            self._make_room(True)
            res = _step(self._rec, self._rr, action, x, self._deal_next, self._clog)
        self._applied(p, res, x < 0 and ph == _TURN)

    def _applied(self, p: int, res: int, drew: bool) -> None:
        """After ``p``'s compiled step (``res``; ``drew``: it drew dice): the next decision, or the round's end."""
        self._version += 1
        code = res & 3
        if code:
            self._round_ended(p, code != ROUND_OVER)
        else:
            self._phase = _PHASES[res >> 2 & 3]
            self._current = res >> 4 & 7
            self._legal = _LEGAL.get(res >> 16) or self._list_legal(res >> 16)
            self._legal_v = self._version
        if drew and self._rng is not None:  # the caller's streams move on with the record's
            self._rng.es, self._rng.ps = self._esps.tolist()

    def _illegal_message(self, action: Any) -> str:
        """Why ``action`` is refused: a chance event is pending, the game is over, or it is not legal."""
        if self._chance is not None:
            return (f"no action is legal: the game waits for chance ({self._chance_name()}); "
                    "call apply_chance(outcome) or sample_chance()")
        if self._phase == _GAME_OVER:
            return "no action is legal: the game is over"
        try:
            name = A.describe(int(action))
        except (ValueError, TypeError, OverflowError):
            return f"action {action!r} is not an action (valid: 0..{A.NUM_ACTIONS - 1})"
        legal = ", ".join(A.describe(a) for a in self.legal_actions())
        return f"illegal action {action} ({name}) for player {self._current}; legal: {legal}"

    def legal_actions(self) -> tuple[int, ...]:
        """Legal actions of the current player, sorted (none at a chance node or the game's end)."""
        if self._legal_v == self._version and self._chance is None:
            return self._legal
        if self._chance is not None or self._phase == _GAME_OVER:
            return ()
        legal = self._legal = self._list_legal(None)
        self._legal_v = self._version
        return legal

    def _list_legal(self, key: int | None) -> tuple[int, ...]:
        """The decision's legal actions, sorted, listed by the compiled legality (cached under its ``key``)."""
        legal = tuple(sorted(_G.legal_actions(self._rec, self._rr).tolist()))
        if key is not None:
            _LEGAL[key] = legal
        return legal

    def sample_action(self) -> int:
        """A uniformly random legal action: the compiled ``random`` agent's draw (one per decision, forced or not)."""
        if self._chance is not None or self._phase == _GAME_OVER:
            what = self._chance_name() if self._chance is not None else self._phase.name.lower()
            raise IllegalActionError(f"sample_action: no decision is pending ({what})")
        a = _G.sample(self._rec, self._rr, _RANDOM_AGENT)
        if self._rng is not None:  # the caller's streams move on with the record's
            self._rng.ps = self._esps.tolist()[1]
        return a

    def decision_seed(self, salt: int) -> int:
        """A 64-bit seed for an agent's own draws here: a hash of the streams, the step count and ``salt`` (no draw)."""
        es, ps = self._esps.tolist()
        return decision_key(es, ps, self._version, salt)

    def observe(self, seat: int, out: np.ndarray | None = None) -> np.ndarray:
        """The observation from ``seat`` (:func:`lama_env.observation.encode`) by the vector game's compiled encoder."""
        n = self._n
        if not 0 <= seat < n:
            raise ValueError(f"seat must be 0..{n - 1}, got {seat!r}")
        if out is None:
            out = np.empty(15 * n + 22, np.float32)
        ph = self._phase
        over = ph == _GAME_OVER
        _G.observe(self._rec, self._rr, seat, -1 if over else self._current, _DECISION_NONE if over else int(ph),
                   ph == _DISCARD or ph == _TAKE, out)
        return out

    # the members the record does not hold, read at C speed
    num_players = property(attrgetter("_n"), doc="Players in the game (1..6).")
    rules = property(attrgetter("_rules"), doc="The game's :class:`RulesConfig`.")
    phase = property(attrgetter("_phase"), doc="The decision asked now (turn, discard, take), or the game's end.")
    current_player = property(attrgetter("_current"), doc="Whose decision it is (at the game's end: the last actor).")
    rounds_finished = property(attrgetter("_ended"), doc="How many rounds have ended (a step ended one if it grows).")

    def _v(self) -> list[int]:
        """The record's fields that the properties read, as one flat list (``lama_env._game.view``), per version."""
        if self._fields_v != self._version:
            self._fields = _G.view(self._rec, self._n).tolist()
            self._fields_v = self._version
        return self._fields

    def _turns(self) -> int:
        """Turns taken so far in the round (a quit or a roll is one; ``rules.max_round_turns`` caps them)."""
        return self._v()[10 * self._n + 6] + (self._chance == _ROLL_NODE)

    @property
    def round_index(self) -> int:
        """The current round, 0-based."""
        return self._v()[10 * self._n + 5]

    @property
    def start_player(self) -> int:
        """Start player of the current round."""
        return self._v()[10 * self._n + 3]

    @property
    def totals(self) -> tuple[int, ...]:
        """Chip totals (points so far, lower is better)."""
        n = self._n
        return tuple(self._v()[7 * n:8 * n])

    @property
    def displays(self) -> tuple[tuple[int, ...], ...]:
        """Each player's display as card counts per face index."""
        v = self._v()
        return tuple(tuple(v[i:i + NUM_FACES]) for i in range(0, NUM_FACES * self._n, NUM_FACES))

    @property
    def row(self) -> tuple[int, ...]:
        """The llama row: 1 where the card of that face is still there."""
        return _ROWS[self._v()[10 * self._n]]

    @property
    def quit(self) -> tuple[bool, ...]:
        """Who has quit this round."""
        n = self._n
        return tuple(q == 1 for q in self._v()[8 * n:9 * n])

    @property
    def dice(self) -> tuple[int, ...] | None:
        """The dice of the pending roll (during a discard or take decision), else None."""
        if self._phase != _DISCARD and self._phase != _TAKE:
            return None
        k = 10 * self._n + 7
        return tuple(self._v()[k:k + 3])

    @property
    def game_over(self) -> bool:
        """Whether the game is over."""
        return self._phase == _GAME_OVER

    @property
    def last_round(self) -> dict | None:
        """The round the last step ended (the last one once the game is over; None before): its result dict."""
        results = self._history()
        return results[-1] if results else None

    def statistics(self) -> dict[str, Any]:
        """Per-seat counts so far: rounds, points, busts, went_out, quits and triple_llamas (this round's too)."""
        n, v = self._n, self._v()
        k = 10 * n + VIEW_SCALARS
        return {"rounds": self._ended, **{key: v[k + i * n:k + (i + 1) * n] for i, key in enumerate(_COUNTS)}}

    def is_chance_node(self) -> bool:
        """Whether the game waits for chance: a roll's dice or a deal's next card (no legal actions, phase TURN)."""
        return self._chance is not None

    def chance_outcomes(self) -> tuple[tuple[Any, float], ...]:
        """The pending chance event's outcomes with their exact probabilities (docs/environments.md, The state API)."""
        c = self._chance
        if c is None:
            return ()
        if c == _ROLL_NODE:
            return roll_outcomes(self._rules)
        return deal_outcomes(self._dealt_counts())

    def apply_chance(self, outcome: Any) -> None:
        """Resolve the pending chance event with ``outcome`` (dice faces in die order, or a card's face)."""
        c = self._chance
        if c is None:
            raise IllegalActionError("apply_chance: no chance event is pending (is_chance_node() is False)")
        if c == _ROLL_NODE:
            self._roll_chance(_side_index(self._rules, check_dice(self._rules, outcome)))  # may raise: state unchanged
            return
        f = _to_face(outcome)
        if f is None or self._dealt_counts()[f] >= DECK_COUNTS[f]:
            left = ", ".join(f"{DECK_COUNTS[f] - d} '{FACES[f]}'" for f, d in enumerate(self._dealt_counts()))
            raise IllegalActionError(f"the next card of the deal cannot be {clip(outcome)} (left in the deck: {left})")
        self._deal_card(f)

    def _roll_chance(self, x: int) -> tuple[int, ...]:
        """Resolve the pending roll with ``x`` (a side of each die; -1: drawn from the record's stream)."""
        self._chance = None
        p = self._current
        self._make_room()  # (a step needs at most LOG_ROOM + 8 N entries; applied rolls are not the hot path)
        res = _step(self._rec, self._rr, _ROLL, x, self._deal_next, self._clog)
        self._applied(p, res, x < 0)
        return (res >> 7 & 7, res >> 10 & 7, res >> 13 & 7)

    def sample_chance(self) -> Any:
        """Resolve the pending chance event from the game's stream; return the outcome (IllegalActionError: none)."""
        c = self._chance
        if c is None:
            raise IllegalActionError("sample_chance: no chance event is pending (is_chance_node() is False)")
        if c == _ROLL_NODE:
            return self._roll_chance(-1)
        st = Streams(*self._esps.tolist())  # one draw of the cards left from the record's deal-and-dice stream
        left = [k - d for k, d in zip(DECK_COUNTS, self._dealt_counts(), strict=True)]
        f = int(np.searchsorted(np.cumsum(left), st.draw(sum(left)), "right"))  # the face of the i-th card left
        self._esps[0] = st.es
        if self._rng is not None:
            self._rng.es = st.es
        self._deal_card(f)
        return f

    def _deal_card(self, f: int) -> None:
        assert isinstance(self._chance, tuple)
        self._make_room()
        _G.deal_card(self._rec, self._rr, len(self._chance), f, self._clog)
        dealt = (*self._chance, f)
        self._version += 1
        self._chance = dealt if len(dealt) < self._n * HAND_SIZE else None

    def _dealt_counts(self) -> list[int]:
        """Cards dealt so far in a deal under way (the displays hold nothing else yet), per face."""
        return [sum(col) for col in zip(*self.displays, strict=True)]

    def _chance_name(self) -> str:
        c = self._chance
        if c == _ROLL_NODE:
            return f"the dice of player {self._current}'s roll"
        return f"card {len(c or ()) + 1} of the deal"

    def returns(self, reward: str = "win") -> tuple[float, ...]:
        """Each seat's return so far under ``reward``, ``"win"`` or ``"points"`` (docs/environments.md, Rewards)."""
        if reward == "win":
            return tuple(win_rewards(self.totals)) if self._phase == _GAME_OVER else (0.0,) * self._n
        if reward != "points":
            raise ValueError(f"reward must be one of {', '.join(map(repr, RETURNS))}, got {reward!r}")
        n, v = self._n, self._v()
        ref = v[7 * n:8 * n] if self._phase == _GAME_OVER else v[9 * n:10 * n]  # totals, or the round's start
        return tuple(float(s - t) for s, t in zip(self._start_points, ref, strict=True))

    def clone(self, chance: str | None = None, rng: Streams | None = None, rounds: str | None = None) -> LamaGame:
        """An independent copy, optionally with another ``chance`` or ``rng`` (docs/environments.md, The state API)."""
        _check_rounds("flow" if rounds is None else rounds)
        g = self._copy_with(None if rng is None else _check_rng(rng))  # (None: the record's streams, copied with it)
        if rng is not None:
            g._rec["es"], g._rec["ps"] = rng.es, rng.ps
        if chance is not None:
            g._explicit = _is_explicit(chance)
            g._set_modes()
        return g

    def __deepcopy__(self, memo: dict) -> LamaGame:
        """A :meth:`clone` whose streams (``rng=``) are deep-copied with ``memo``."""
        g = self._copy_with(deepcopy(self._rng, memo))
        memo[id(self)] = g
        return g

    def _copy_with(self, rng: Streams | None) -> LamaGame:
        g = LamaGame.__new__(LamaGame)
        for name in _SHARED:  # immutable values, or replaced (never changed in place) by the step
            setattr(g, name, getattr(self, name))
        g._rng = rng
        g._set_record(_new_record(self._rec))
        g._clog = self._clog.copy()
        return g

    # persistence: lama_env.snapshot's functions, as methods
    __getstate__, __setstate__, serialize = S.getstate, S.setstate, S.serialize
    deserialize = staticmethod(S.deserialize)

    def to_record(self) -> dict:
        """The game so far as a ``lama-dice-record/1`` dict (docs/RULES.md), up to a roll awaiting its decision."""
        if not self._record:
            raise RuntimeError("this game was created with record=False")
        return {**log_to_record(self._clog[0, :self._pending_roll()], self._n, self._rules),
                "start_points": list(self._start_points)}

    def result(self) -> dict:
        """The replay result of the game so far (docs/RULES.md, "Replay results")."""
        over = self._phase == _GAME_OVER
        totals = list(self.totals)
        if self._record and self.dice == (0, 0, 0):  # a triple llama's roll waits (also_match): the total before
            p = self._current  # its chip, back from the round's start by the round's earlier triple llamas
            totals[p] = start = int(self._rec["rstart"][0, p])
            for _, tag, e in iter_log(self._clog[0, :self._pending_roll()], self._n):
                if tag == LOG_END:  # (a round before this one)
                    totals[p] = start
                elif tag == LOG_ROLL and e[0] == p and e[1:4].tolist() == [0, 0, 0]:
                    totals[p] = return_chip(totals[p])
        rounds = log_to_result(self._clog[0, :self._rec["logpos"][0]], self._n)["rounds"]
        if not over and not isinstance(self._chance, tuple):  # (a deal's chance node: no round under way yet)
            rounds.append({"finished": False, "ended_by": None, "went_out": None, "points": None, "totals": totals})
        return {"valid": True, "rounds": rounds, "totals": totals, "game_over": over,
                "winners": winners(totals) if over else []}

    def _pending_roll(self) -> int:
        """Where the roll awaiting its decision begins in the log (the log's length if none is pending)."""
        if self._phase == _DISCARD or self._phase == _TAKE:
            return int(self._rec["pend"][0])
        return int(self._rec["logpos"][0])

    def _history(self) -> list[dict]:
        """The results of the rounds that ended (:attr:`last_round`'s), from the compiled log's entries."""
        out: list[dict] = []
        n = self._n
        quit, triples, roller = [False] * n, [0] * n, -1
        for _, tag, fields in iter_log(self._clog[0, :self._rec["logpos"][0]], n):
            e = fields.tolist()
            if tag == LOG_QUIT:
                quit[e[0]] = True
            elif tag == LOG_ROLL:
                roller = e[0]
                triples[roller] += e[1:4] == [0, 0, 0] and e[4] < 4  # (5, 6: carried in by from_state)
            elif tag == LOG_END:
                r = round_result(fields, n)
                out.append({**r, "busted": roller if r["ended_by"] == "bust" else None, "quit": tuple(quit),
                            "triple_llamas": tuple(triples)})
                quit, triples, roller = [False] * n, [0] * n, -1
        return out

    def __repr__(self) -> str:
        """Show the players, round, phase, current player and totals."""
        return (f"LamaGame(players={self._n}, round={self.round_index}, phase={self._phase.name}, "
                f"current={self._current}, totals={list(self.totals)})")


#: What a pickle of a game holds (the rules record and the cached reads are rebuilt).
_PICKLED = tuple(name for name in LamaGame.__slots__ if name not in ("_rr", "_fields", "_fields_v", "_legal",
                                                                      "_legal_v", "_esps"))
#: What a copy shares with its original (values never changed in place; the rest is copied).
_SHARED = tuple(name for name in LamaGame.__slots__ if name not in ("_rng", "_rec", "_esps", "_clog"))


def _to_face(f: Any) -> int | None:
    if isinstance(f, str):
        return FACES.index(f) if f in FACES else None
    if isinstance(f, (int, np.integer)) and not isinstance(f, bool) and 0 <= f < NUM_FACES:
        return int(f)
    return None


def check_dice(rules: RulesConfig, dice: Sequence[Any]) -> tuple[int, ...]:
    """Validate injected dice (indices or names) against the rules' dice; return face indices."""
    if not isinstance(dice, (list, tuple)) or len(dice) != NUM_DICE:
        raise IllegalActionError(f"dice must list {NUM_DICE} faces, got {dice!r}")
    out = []
    faces = rules.dice_index
    for d, f in enumerate(dice):
        idx = _to_face(f)
        if idx is None:
            raise IllegalActionError(f"die {d} shows an unknown face {f!r}")
        if idx not in faces[d]:
            raise IllegalActionError(f"die {d} has no face '{FACES[idx]}'")
        out.append(idx)
    return tuple(out)


def _side_index(rules: RulesConfig, dice: tuple[int, ...]) -> int:
    """The roll ``x`` (die 0's side * 36 + die 1's * 6 + die 2's) of the dice faces ``dice`` (a side of each)."""
    di = rules.dice_index
    return di[0].index(dice[0]) * 36 + di[1].index(dice[1]) * 6 + di[2].index(dice[2])


def check_start_points(start_points: Any, num_players: int, error: type[Exception] = GameSetupError) -> list[int]:
    """``start_points`` as ``num_players`` ints in ``0..MAX_START_POINTS`` (:mod:`lama_env.reader`), else ``error``."""
    n = num_players
    if (not isinstance(start_points, (list, tuple, np.ndarray)) or len(start_points) != n
            or not all(isinstance(t, (int, np.integer)) and not isinstance(t, bool) and 0 <= t <= MAX_START_POINTS
                       for t in start_points)):
        raise error(f"start_points must list {n} integers 0..{MAX_START_POINTS:,} (chip totals are 32-bit in the "
                    f"engine), got {clip(start_points)}")
    return [int(t) for t in start_points]


def check_hands(hands: Sequence[Sequence[Any]], num_players: int) -> list[list[int]]:
    """Validate a deal (six cards per player, dealable from the deck); return face indices."""
    if not isinstance(hands, (list, tuple)) or len(hands) != num_players:
        got = len(hands) if isinstance(hands, (list, tuple)) else clip(hands)
        raise IllegalActionError(f"hands must list {num_players} hands, got {got}")
    out: list[list[int]] = []
    for p, hand in enumerate(hands):
        if not isinstance(hand, (list, tuple)) or len(hand) != HAND_SIZE:
            got = f"{len(hand)}: {clip(hand)}" if isinstance(hand, (list, tuple)) else clip(hand)
            raise IllegalActionError(f"hand {p} must have {HAND_SIZE} cards, got {got}")
        bad = [f for f in hand if _to_face(f) is None]
        if bad:
            raise IllegalActionError(f"hand {p} has an unknown card {clip(bad[0])}")
        out.append([cast(int, _to_face(f)) for f in hand])
    used = [sum(h.count(f) for h in out) for f in range(NUM_FACES)]
    for f in range(NUM_FACES):
        if used[f] > DECK_COUNTS[f]:
            raise IllegalActionError(f"hands hold {used[f]} cards '{FACES[f]}' but the deck has only {DECK_COUNTS[f]}")
    return out


S.bind(sys.modules[__name__])  # the persistence of a game (lama_env.snapshot) builds LamaGames
