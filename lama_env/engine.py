"""The rules engine: one game of *Don't L.L.A.M.A. Dice* as ``docs/RULES.md`` specifies it.

Pure Python/NumPy (no gym, torch or I/O).  A :class:`LamaGame` is a state
machine driven by integer actions from :mod:`lama_env.actions`::

    game = LamaGame(num_players=2, seed=7)
    while not game.game_over:
        game.step(random.choice(game.legal_actions()))
    print(game.totals, game.winners)

Every state is a decision, a chance node (``chance="explicit"``) or the end of
the game: rounds flow on, the step that ends a round deals the next one (the
ended round: :attr:`LamaGame.last_round`).  ``LamaGame(rounds="manual")`` is
the compatibility path: the game stops at :attr:`Phase.ROUND_OVER` until
:meth:`LamaGame.next_round` deals.

Dice and deals are drawn from a seeded :class:`numpy.random.Generator`, or
injected (``step(ROLL, dice=...)``, ``LamaGame(hands=...)``, explicit chance,
``next_round(hands=...)`` in the manual mode) for tests and replay.  The state is exposed
read-only through properties; :meth:`LamaGame.copy` is cheap.

For search (the state API, a table in docs/environments.md): with
``LamaGame(..., chance="explicit")`` the deal (card by card) and every roll stop
at a chance node (:meth:`~LamaGame.is_chance_node`, :meth:`~LamaGame.chance_outcomes`,
:meth:`~LamaGame.apply_chance`, :meth:`~LamaGame.sample_chance`); :meth:`~LamaGame.clone`,
:meth:`~LamaGame.serialize` / :meth:`LamaGame.deserialize`, pickling and
:meth:`~LamaGame.returns` work in both modes.  :meth:`~LamaGame.to_state` and
:meth:`LamaGame.from_state` convert a game to and from the compiled engine's one-game record
(:mod:`lama_env._kernel`), which the kernel's step continues as this game would.

What each action does (a roll, a discard, a take, a quit, the end of a round)
is worked out by the pure functions of :mod:`lama_env.transitions`; this
module strings them together and keeps the books (phases, whose turn, the
turn log, per-round results and statistics, the random stream).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from enum import IntEnum
from operator import add
from typing import Any

import numpy as np

from . import actions as A
from . import snapshot as S
from .errors import LamaDiceError, clip
from .rules import (
    DECK,
    DECK_COUNTS,
    FACES,
    HAND_SIZE,
    MAX_PLAYERS,
    NUM_DICE,
    NUM_FACES,
    RulesConfig,
    check_num_players,
    game_over,
    return_chip,
    score_display,
    win_rewards,
)
from .rules import winners as _winners
from .streams import Streams, decision_key
from .transitions import (  # noqa: F401  (ROUND_ENDINGS, ROLL_*, match_limits, resolve_roll: re-exported)
    EMPTY_ROW,
    FULL_ROW,
    ROLL_BUST,
    ROLL_DISCARD,
    ROLL_TAKE,
    ROLL_TRIPLE_LLAMA,
    ROUND_ENDINGS,
    apply_discard,
    apply_quit,
    apply_roll,
    apply_take,
    cut_round,
    deal_outcomes,
    deal_seat,
    match_limits,
    next_player,
    resolve_roll,
    score_round,
)
from .transitions import chance_outcomes as roll_outcomes

RECORD_FORMAT = "lama-dice-record/1"
#: The format of :meth:`LamaGame.serialize` strings and of pickled games.
STATE_FORMAT = "lama-dice-state/1"

_TURN_ACTIONS = (A.ROLL, A.QUIT)
_ROLL, _QUIT, _DISCARDS, _DISCARD_BASE, _TAKE_BASE = A.ROLL, A.QUIT, A.DISCARDS, A.DISCARD_BASE, A.TAKE_BASE
_FACE_RANGE = range(NUM_FACES)
_EMPTY_DISPLAY: tuple[int, ...] = (0,) * NUM_FACES
_DECK_LIST: list[int] = list(DECK)
#: Per player count: the bounds of a deal's draws (card i is swapped with one of the cards i .. 35).
_DECK_POSITIONS = range(len(DECK))  # the deck's positions
_DEAL_DRAWS: tuple[tuple[int, ...], ...] = tuple(tuple(len(DECK) - i for i in range(n * HAND_SIZE)) for n in range(7))
#: Random numbers: a game draws uniform floats in [0, 1) from its generator in
#: blocks (``rng.random(size)``, one NumPy call per block) and spends them on
#: deals (a partial Fisher-Yates shuffle of the deck: card ``i`` swaps with
#: ``i + floor(u * (cards left))``) and dice (face ``floor(6 u)`` of the die).
#: The first block holds ``_RANDOM_BLOCK`` numbers (a deal and 20-odd rolls,
#: enough for most games), each later one twice the previous, up to
#: ``_RANDOM_BLOCK_MAX``: a new game stays cheap and a long one needs few
#: refills.  ``floor(m u)`` of a double ``u`` is uniform on ``0..m-1`` to within
#: 2**-52; the stream is a function of the generator alone (same seed, same game).
_RANDOM_BLOCK = 96
_RANDOM_BLOCK_MAX = 3 * 512
#: The rules of a game created without any (a frozen dataclass: one shared instance saves building one per game).
_DEFAULT_RULES = RulesConfig()
#: How chance is resolved: ``"sampled"`` (the default: deals and dice are drawn from the game's random
#: stream as they happen) or ``"explicit"`` (they wait at a chance node for :meth:`LamaGame.apply_chance`).
CHANCE_MODES = ("sampled", "explicit")
#: What happens when a round ends: ``"flow"`` (the default: the same step deals the next round, so every
#: state is a decision, a chance node or the end of the game) or ``"manual"`` (the compatibility path: the
#: game waits at :attr:`Phase.ROUND_OVER` until :meth:`LamaGame.next_round`).
ROUNDS_MODES = ("flow", "manual")
#: The chance node of a roll (``_chance``; a deal's node is the tuple of the faces dealt so far).
_ROLL_NODE = "roll"
#: The llama row as a bit set (a state record's ``row``) when every card is there.
_FULL_MASK = (1 << NUM_FACES) - 1
#: The per-seat counts of :meth:`LamaGame.statistics`, in the order of the compiled record's ``stats`` rows.
_COUNTS = ("points", "busts", "quits", "went_out", "triple_llamas")
#: What :meth:`LamaGame.returns` can measure (the environments' ``reward`` modes).
RETURNS = ("win", "points")


def _is_explicit(chance: Any) -> bool:
    """Whether a ``chance`` argument (one of :data:`CHANCE_MODES`) asks for explicit chance nodes."""
    if chance not in CHANCE_MODES:
        raise GameSetupError(f"chance must be one of {', '.join(map(repr, CHANCE_MODES))}, got {clip(chance)}")
    return bool(chance == "explicit")


def _is_flow(rounds: Any) -> bool:
    """Whether a ``rounds`` argument (one of :data:`ROUNDS_MODES`) asks for rounds that flow on."""
    if rounds not in ROUNDS_MODES:
        raise GameSetupError(f"rounds must be one of {', '.join(map(repr, ROUNDS_MODES))}, got {clip(rounds)}")
    return bool(rounds == "flow")


class Phase(IntEnum):
    """The decision the current player faces (or the end of a round / game)."""

    TURN = 0  #: roll or quit
    DISCARD = 1  #: choose which matched cards to discard
    TAKE = 2  #: choose which llama-row card to take
    ROUND_OVER = 3  #: only with ``rounds="manual"``: the round has ended; call :meth:`LamaGame.next_round`
    GAME_OVER = 4  #: the game has ended


# The members as module globals: ``Phase.TURN`` is a (slow) enum class attribute lookup.
_TURN, _DISCARD, _TAKE, _ROUND_OVER, _GAME_OVER = (
    Phase.TURN, Phase.DISCARD, Phase.TAKE, Phase.ROUND_OVER, Phase.GAME_OVER)


class IllegalActionError(LamaDiceError, ValueError):
    """An action (or injected dice / hands) that the rules do not allow now."""


class GameSetupError(LamaDiceError, ValueError):
    """A bad argument to :class:`LamaGame` (player count, start points, start player)."""


class LamaGame:
    """One game for ``num_players`` players (1 = the solo variant).

    Args:
        num_players: 1..6.
        rules: a :class:`RulesConfig` (or a mapping of its fields); defaults of docs/RULES.md.
        seed: the seed of the game's random stream (an integer >= 0, or None: fresh entropy).
        rng: a :class:`numpy.random.Generator` to draw deals and dice from, or a
            :class:`lama_env.streams.Streams` (the compiled engine's streams, drawn from and moved
            on in place: how an env plays its games one after another on one stream); not with ``game_id``.
        game_id: draw from the compiled engine's streams of ``(seed, game_id)``
            (:class:`lama_env.streams.Streams`): the deals and dice of game ``game_id`` of
            :func:`lama_env.batched.play_batch` with ``seed`` (and of slot ``game_id`` of a
            :class:`lama_env.vector.VectorGame` after ``reset(seed=seed)``), so the same
            actions play the same game there and here; :meth:`sample_action` draws as the
            compiled engine's ``random`` agent.  None (default): a
            :class:`numpy.random.Generator` seeded with ``seed``.
        start_points: chip totals at the start (a record may start mid-game).
        start_player: who starts the first round.
        hands: the first round's deal (per player, six face indices or names); dealt at random if None.
        record: keep the turn log so that :meth:`to_record` works (a little slower).
        chance: ``"sampled"`` (default: deals and dice come from the random stream as they
            happen) or ``"explicit"`` (each card of a deal and each roll waits at a chance
            node for :meth:`apply_chance`); see :meth:`is_chance_node`.
        rounds: ``"flow"`` (default: the step that ends a round deals the next one, from the
            random stream or, with explicit chance, as the next chance node; the ended round
            is :attr:`last_round`) or ``"manual"`` (the compatibility path: the game stops at
            :attr:`Phase.ROUND_OVER` until :meth:`next_round`).
    """

    __slots__ = (
        "_active",
        "_buf",
        "_buf_state",
        "_bufpos",
        "_busted",
        "_carried",
        "_chance",
        "_current",
        "_dice",
        "_dice_faces",
        "_discarded",
        "_displays",
        "_ended_by",
        "_explicit",
        "_flow",
        "_hands",
        "_legal",
        "_n",
        "_pending",
        "_phase",
        "_quit",
        "_record",
        "_results",
        "_rng",
        "_round",
        "_round_points",
        "_rounds",
        "_row",
        "_rules",
        "_start",
        "_start_points",
        "_totals",
        "_triples",
        "_turns_in_round",
        "_version",
        "_went_out",
    )

    def __init__(
        self,
        num_players: int = 2,
        rules: RulesConfig | dict | None = None,
        *,
        seed: int | None = None,
        rng: np.random.Generator | Streams | None = None,
        game_id: int | None = None,
        start_points: Sequence[int] | None = None,
        start_player: int = 0,
        hands: Sequence[Sequence[Any]] | None = None,
        record: bool = True,
        chance: str = "sampled",
        rounds: str = "flow",
    ) -> None:
        """Set up the game and deal its first round (see the class docstring).

        Raises:
            GameSetupError: a bad player count, ``seed``, ``game_id``, ``start_points``, ``start_player``,
                ``chance`` or ``rounds``.
            IllegalActionError: ``hands`` is not a deal of the deck.
            lama_env.rules.RulesError: bad ``rules``.
        """
        self._n = n = check_num_players(num_players, GameSetupError)
        self._rules = rules if type(rules) is RulesConfig else _DEFAULT_RULES if rules is None \
            else RulesConfig.from_dict(rules)
        self._rng: np.random.Generator | Streams
        if game_id is None:
            self._rng = rng if rng is not None else np.random.default_rng(seed)
        elif rng is not None:
            raise GameSetupError("give rng or game_id, not both (game_id draws from the compiled engine's streams)")
        else:
            self._rng = Streams.of_game(seed, game_id, GameSetupError)
        self._buf: list[float] = []
        self._buf_state: Mapping[str, Any] | None = None  # the generator's state just before it drew _buf
        self._bufpos = 0
        self._explicit = _is_explicit(chance)
        self._chance: tuple[int, ...] | str | None = None
        self._dice_faces = self._rules.dice_index
        if start_points is None:
            self._totals = [0] * n
        else:
            if (not isinstance(start_points, (list, tuple, np.ndarray)) or len(start_points) != n
                    or not all(isinstance(t, (int, np.integer)) and not isinstance(t, bool) and t >= 0
                               for t in start_points)):
                raise GameSetupError(f"start_points must be {n} non-negative integers, got {start_points!r}")
            self._totals = [int(t) for t in start_points]
        self._start_points = list(self._totals)
        if type(start_player) is not int and (
                isinstance(start_player, bool) or not isinstance(start_player, (int, np.integer))):
            raise GameSetupError(f"start_player must be an integer 0..{n - 1}, got {start_player!r}")
        if not 0 <= start_player < n:
            raise GameSetupError(f"start_player must be an integer 0..{n - 1}, got {start_player!r}")
        self._record = record
        self._flow = _is_flow(rounds)
        self._rounds: list[dict] = []
        self._results: list[dict] = []
        self._pending: dict | None = None
        self._carried: dict[str, Any] | None = None  # statistics carried in from a state record (from_state)
        self._round = -1
        self._version = 0
        self._start = int(start_player)
        self._begin_round(self._start, hands)

    # ------------------------------------------------------------------ rounds
    def _begin_round(self, start_player: int, hands: Sequence[Sequence[Any]] | None) -> None:
        n = self._n
        hand_faces: list[list[int]] | None
        if hands is None and self._explicit:
            hand_faces = None  # dealt card by card through apply_chance
        elif hands is None and type(self._rng) is Streams:
            hand_faces = _stream_deal(self._rng, n)
        elif hands is None:
            k = n * HAND_SIZE
            pos = self._bufpos
            buf = self._buf
            if pos + k > len(buf):
                buf = self._refill()
                pos = 0
            self._bufpos = pos + k
            deck = _DECK_LIST[:]
            left = len(deck)
            for i in range(k):  # partial Fisher-Yates: the first k cards are a uniform deal
                j = i + int(buf[pos + i] * (left - i))
                deck[i], deck[j] = deck[j], deck[i]
            hand_faces = [deck[i:i + HAND_SIZE] for i in range(0, k, HAND_SIZE)]
        else:
            hand_faces = check_hands(hands, n)
        self._round += 1
        self._start = start_player
        # each display: its hand's cards counted by face (none yet before an explicit deal)
        self._displays = [tuple(map(hand.count, _FACE_RANGE)) for hand in hand_faces] if hand_faces is not None \
            else [_EMPTY_DISPLAY] * n
        self._row = FULL_ROW
        self._quit = [False] * n
        self._active = n
        self._discarded: list[int] = []  # the discard actions of this round
        self._current = start_player
        self._phase = _TURN
        self._dice: tuple[int, ...] | None = None
        self._legal: tuple[int, ...] = _TURN_ACTIONS
        self._round_points: list[int] | None = None
        self._ended_by: str | None = None
        self._went_out: int | None = None
        self._busted: int | None = None
        self._triples = [0] * n
        self._turns_in_round = 0
        self._hands: Sequence[Sequence[int]] | None = hand_faces  # the round's deal (fresh lists, never changed)
        if hand_faces is None:
            self._chance = ()  # the deal's chance node: no card dealt yet
            self._legal = ()
        elif self._record:
            self._rounds.append({
                "start_player": start_player,
                "hands": [[FACES[f] for f in h] for h in hand_faces],
                "turns": [],
            })

    def next_round(self, hands: Sequence[Sequence[Any]] | None = None) -> None:
        """Deal the next round (after :attr:`Phase.ROUND_OVER`, ``rounds="manual"`` only); the start player rotates.

        With ``rounds="flow"`` (the default) the step that ends a round deals the next one, so there
        is never a round-over state to call this in.
        """
        if self._phase != _ROUND_OVER:
            if self._phase == _GAME_OVER:
                raise IllegalActionError("the game is over")
            raise IllegalActionError("the round is still in progress" + (
                " (rounds='flow': the next round is dealt by the step that ends a round; "
                "next_round() is for rounds='manual')" if self._flow else ""))
        self._begin_round((self._start + 1) % self._n, hands)
        self._version += 1

    def _end_round(self, ended_by: str, went_out: int | None = None) -> None:
        pts, totals, over = score_round(self._displays, self._totals, went_out, self._rules)
        self._totals = totals
        self._round_points = pts
        self._ended_by = ended_by
        self._went_out = went_out
        self._dice = None
        self._legal = ()
        self._phase = _GAME_OVER if over else _ROUND_OVER
        self._results.append({
            "finished": True, "ended_by": ended_by, "went_out": went_out,
            "points": list(pts), "totals": list(totals),
            "busted": self._busted, "quit": tuple(self._quit), "triple_llamas": tuple(self._triples),
        })
        if self._flow and not over:  # rounds flow on: deal now, at the point of the stream next_round() drew at
            self._begin_round((self._start + 1) % self._n, None)

    # ------------------------------------------------------------------- turns
    def step(self, action: int, dice: Sequence[Any] | None = None) -> None:
        """Apply ``action`` for the current player.

        ``dice`` (three faces, indices or names, in die order) may be given
        with :data:`~lama_env.actions.ROLL` to inject the roll.

        Raises:
            IllegalActionError: the action is not legal now; the state is unchanged.
        """
        if action not in self._legal:
            raise IllegalActionError(self._illegal_message(action))
        if dice is not None and action != _ROLL:
            raise IllegalActionError("dice can only be given with a roll")
        self._version += 1
        phase = self._phase
        p = self._current
        if phase == _TURN:
            if action == _QUIT:
                self._turns_in_round += 1
                if self._record:
                    self._rounds[-1]["turns"].append({"player": p, "action": "quit"})
                self._quit[p] = True
                self._active, ended = apply_quit(self._active)
                if ended:
                    self._end_round(ended)
                else:
                    self._advance()
            elif dice is None and self._explicit:  # the roll's chance node: apply_chance gives the dice
                self._turns_in_round += 1
                self._chance = _ROLL_NODE
                self._legal = ()
            else:
                rolled = self._draw_dice() if dice is None else self.check_dice(dice)  # may raise: state unchanged
                self._turns_in_round += 1
                self._roll(p, rolled)
        elif phase == _DISCARD:
            self._displays[p], ended = apply_discard(self._displays[p], action)
            self._discarded.append(action)
            if self._pending is not None:
                counts = _DISCARDS[action - _DISCARD_BASE]
                self._pending["discard"] = [FACES[f] for f in _FACE_RANGE for _ in range(counts[f])]
                self._pending = None
            if ended:
                self._end_round(ended, p)
            else:
                self._advance()
        else:  # Phase.TAKE
            self._displays[p], self._row, ended = apply_take(self._displays[p], self._row, action)
            if self._pending is not None:
                self._pending["take"] = FACES[action - _TAKE_BASE]
                self._pending = None
            if ended:
                self._end_round(ended)
            else:
                self._advance()

    def _roll(self, p: int, dice: tuple[int, ...]) -> None:
        self._dice = dice
        if self._record:
            self._pending = {"player": p, "action": "roll", "dice": [FACES[f] for f in dice]}
            self._rounds[-1]["turns"].append(self._pending)
        kind, legal, chip, disp, row = apply_roll(self._displays[p], self._row, dice, self._active == 1, self._rules)
        if chip:
            self._totals[p] = return_chip(self._totals[p])
            self._triples[p] += 1
        if kind is ROLL_DISCARD:
            self._phase = _DISCARD
            self._legal = legal
            return
        if kind is ROLL_TAKE:
            self._phase = _TAKE
            self._legal = legal
            return
        if kind is ROLL_TRIPLE_LLAMA:
            self._pending = None
            self._advance()
            return
        # bust: the whole row went into the display; the round ends at once
        self._displays[p] = disp
        self._row = row
        self._busted = p
        self._pending = None
        self._end_round(kind)

    def _advance(self) -> None:
        """The turn is over and the round goes on: the next player's turn, unless the turn cap cuts the round."""
        cut = cut_round(self._turns_in_round, self._rules)
        if cut:
            self._end_round(cut)
            return
        self._current = next_player(self._current, self._quit)
        self._phase = _TURN
        self._dice = None
        self._legal = _TURN_ACTIONS

    def _draw_dice(self) -> tuple[int, ...]:
        df = self._dice_faces
        if type(self._rng) is Streams:  # one draw of 6**3, as the compiled engine rolls
            x = self._rng.draw(216)
            return (df[0][x // 36], df[1][(x // 6) % 6], df[2][x % 6])
        pos = self._bufpos
        buf = self._buf
        if pos + NUM_DICE > len(buf):
            buf = self._refill()
            pos = 0
        self._bufpos = pos + NUM_DICE
        return (df[0][int(buf[pos] * 6.0)], df[1][int(buf[pos + 1] * 6.0)], df[2][int(buf[pos + 2] * 6.0)])

    def _refill(self) -> list[float]:
        """A new block of random numbers (see ``_RANDOM_BLOCK``); the rest of the old one is dropped."""
        size = min(2 * len(self._buf), _RANDOM_BLOCK_MAX) if self._buf else _RANDOM_BLOCK
        rng = self._rng
        assert not isinstance(rng, Streams)  # a game on the compiled streams draws no blocks
        self._buf_state = rng.bit_generator.state
        buf = self._buf = rng.random(size).tolist()
        self._bufpos = 0
        return buf

    def check_dice(self, dice: Sequence[Any]) -> tuple[int, ...]:
        """Validate injected dice (indices or names) against the rules' dice; return indices."""
        if not isinstance(dice, (list, tuple)) or len(dice) != NUM_DICE:
            raise IllegalActionError(f"dice must list {NUM_DICE} faces, got {dice!r}")
        out = []
        for d, f in enumerate(dice):
            idx = _to_face(f)
            if idx is None:
                raise IllegalActionError(f"die {d} shows an unknown face {f!r}")
            if idx not in self._dice_faces[d]:
                raise IllegalActionError(f"die {d} has no face '{FACES[idx]}'")
            out.append(idx)
        return tuple(out)

    def _illegal_message(self, action: Any) -> str:
        if self._chance is not None:
            return (f"no action is legal: the game waits for chance ({self._chance_name()}); "
                    "call apply_chance(outcome) or sample_chance()")
        ph = self._phase
        if ph in (_ROUND_OVER, _GAME_OVER):
            return f"no action is legal: {'the game is over' if ph == _GAME_OVER else 'the round is over'}"
        try:
            name = A.describe(int(action))
        except (ValueError, TypeError):
            return f"action {action!r} is not an action (valid: 0..{A.NUM_ACTIONS - 1})"
        legal = ", ".join(A.describe(a) for a in self._legal)
        return f"illegal action {action} ({name}) for player {self._current}; legal: {legal}"

    # --------------------------------------------------------------- queries
    def legal_actions(self) -> tuple[int, ...]:
        """Legal actions of the current player, sorted (empty at a chance node and once the round or game is over)."""
        return self._legal

    @property
    def on_compiled_streams(self) -> bool:
        """Whether the game draws from the compiled engine's streams (it was given a ``game_id``)."""
        return type(self._rng) is Streams

    def sample_action(self) -> int:
        """A uniformly random legal action from the game's policy stream, as the compiled ``random`` agent draws.

        Only for a game on the compiled engine's streams (``game_id=...``): the draw is the
        one that :func:`lama_env.batched.play_batch`'s native ``random`` agent (and
        :meth:`lama_env.vector.VectorGame.sample_actions`) makes in that game, so a
        ``random`` seat plays the same there and here (:func:`lama_env.actions.sample_order`
        lists the actions in the order of its draw).  One draw at every decision, forced or not.

        Raises:
            IllegalActionError: no decision is pending, or the game draws from a NumPy generator.
        """
        rng = self._rng
        if type(rng) is not Streams:
            raise IllegalActionError("sample_action needs a game on the compiled engine's streams "
                                     "(LamaGame(..., game_id=...)); this one draws from a NumPy generator")
        if not self._legal:
            what = self._chance_name() if self._chance is not None else self._phase.name.lower()
            raise IllegalActionError(f"sample_action: no decision is pending ({what})")
        order = A.sample_order(self._legal)
        return order[rng.draw_policy(len(order))]

    def decision_seed(self, salt: int) -> int | None:
        """A 64-bit seed for an agent's own draws at this decision, or None off the compiled engine's streams.

        For a game given a ``game_id`` (:attr:`on_compiled_streams`) the seed is a hash of the
        game's stream states, its :attr:`version` and ``salt`` (the agent's; see
        :meth:`lama_dice.agents.base.Policy.decision_rng`): the same at the same point of the same
        game, whatever other games are played beside it, in which order, chunk or process.  It
        draws nothing from the game's streams, so the game and its other seats are unchanged.
        A game on a NumPy generator has no such identity (None: the agent draws from its own
        generator).
        """
        rng = self._rng
        if type(rng) is not Streams:
            return None
        return decision_key(rng.es, rng.ps, self._version, salt)

    def action_mask(self) -> np.ndarray:
        """int8 mask over :data:`~lama_env.actions.NUM_ACTIONS`."""
        return A.legal_mask(self._legal)

    @property
    def num_players(self) -> int:
        """Players in the game (1..6)."""
        return self._n

    def encoder_view(self) -> tuple:
        """The state an observation encoder reads, in one call (:func:`lama_env.observation.encode`).

        Returns:
            ``(num_players, rules, version, displays, totals, quit, current_player,
            start_player, row, phase, dice, num_active)``.  ``displays`` (a list of
            per-player lists of counts per face), ``totals``, ``quit`` and ``row``
            are the game's own lists, not copies, for speed: read them at once,
            never change or keep them (the properties of the same names return
            copies).
        """
        return (self._n, self._rules, self._version, self._displays, self._totals, self._quit, self._current,
                self._start, self._row, self._phase, self._dice, self._active)

    @property
    def version(self) -> int:
        """A counter that grows with every change of the state (:meth:`step`, :meth:`apply_chance`, :meth:`next_round`).

        Together with the game's identity it keys caches of derived data: the
        observation encoder reuses its last result while ``(game, version, seat)``
        is unchanged.  A :meth:`copy` starts with the same value.
        """
        return self._version

    @property
    def rules(self) -> RulesConfig:
        """The game's :class:`RulesConfig`."""
        return self._rules

    @property
    def phase(self) -> Phase:
        """The decision asked now (turn, discard, take), or that the game (``rounds="manual"``: the round) is over."""
        return self._phase

    @property
    def current_player(self) -> int:
        """Whose decision it is (the last actor once the round is over)."""
        return self._current

    @property
    def round_index(self) -> int:
        """The current round, 0-based."""
        return self._round

    @property
    def start_player(self) -> int:
        """Start player of the current round."""
        return self._start

    @property
    def totals(self) -> tuple[int, ...]:
        """Chip totals (points so far, lower is better)."""
        return tuple(self._totals)

    @property
    def displays(self) -> tuple[tuple[int, ...], ...]:
        """Each player's display as card counts per face index."""
        return tuple(self._displays)

    def display(self, player: int) -> tuple[int, ...]:
        """``player``'s display as card counts per face index."""
        return self._displays[player]

    @property
    def row(self) -> tuple[int, ...]:
        """The llama row: 1 where the card of that face is still there."""
        return self._row

    @property
    def quit(self) -> tuple[bool, ...]:
        """Who has quit this round."""
        return tuple(self._quit)

    @property
    def num_active(self) -> int:
        """Players who have not quit this round."""
        return self._active

    @property
    def last_player_rule(self) -> bool:
        """Whether the current player is the only one left (no takes: a non-matching roll busts)."""
        return self._active == 1

    @property
    def dice(self) -> tuple[int, ...] | None:
        """The dice of the pending roll (during a discard or take decision), else None."""
        return self._dice

    @property
    def discarded(self) -> tuple[int, ...]:
        """Cards discarded this round, per face."""
        pile = EMPTY_ROW
        for a in self._discarded:
            pile = tuple(map(add, pile, _DISCARDS[a - _DISCARD_BASE]))
        return pile

    @property
    def turns_in_round(self) -> int:
        """Turns taken so far in the current round (a quit or a roll is one; ``rules.max_round_turns`` caps them)."""
        return self._turns_in_round

    @property
    def round_over(self) -> bool:
        """Whether the current round is over (also once the game is; with ``rounds="flow"`` only then)."""
        return self._phase >= _ROUND_OVER

    @property
    def game_over(self) -> bool:
        """Whether the game is over."""
        return self._phase == _GAME_OVER

    @property
    def last_round(self) -> dict | None:
        """The last finished round's result (one of :meth:`round_results`), None before the first ends.

        With ``rounds="flow"`` this is how a caller sees the round that the last step ended
        (its ``points``, ``ended_by``, ``went_out``, ``busted``, ``totals`` after it, ...): the
        game has dealt the next round already; its totals before it are ``totals`` minus
        ``points`` (and a chip returned for going out or a triple llama).
        """
        if not self._results:
            return None
        r = self._results[-1]
        return dict(r, points=list(r["points"]), totals=list(r["totals"]))

    @property
    def rounds_finished(self) -> int:
        """How many rounds have ended (a step ended one when this grows; :meth:`from_state`: since the game began)."""
        return len(self._results) + (self._carried["rounds"] if self._carried is not None else 0)

    @property
    def rounds(self) -> str:
        """What happens when a round ends: ``"flow"`` or ``"manual"`` (see :data:`ROUNDS_MODES`)."""
        return "flow" if self._flow else "manual"

    @property
    def round_points(self) -> tuple[int, ...] | None:
        """Points each player scored in the round just ended (at a round-over or game-over state), else None.

        With ``rounds="flow"`` a round-over state never lasts: see :attr:`last_round`.
        """
        return None if self._round_points is None else tuple(self._round_points)

    @property
    def ended_by(self) -> str | None:
        """How the round just ended (one of :data:`ROUND_ENDINGS`; at a round-over or game-over state), else None."""
        return self._ended_by

    @property
    def went_out(self) -> int | None:
        """Who went out to end the round just ended (at a round-over or game-over state), else None."""
        return self._went_out

    @property
    def busted(self) -> int | None:
        """Who busted to end the round just ended (``ended_by == "bust"``), else None."""
        return self._busted

    @property
    def triple_llamas(self) -> tuple[int, ...]:
        """Triple llamas each player has rolled this round."""
        return tuple(self._triples)

    @property
    def winners(self) -> list[int]:
        """Seats tied for the fewest points once the game is over, else ``[]``."""
        return _winners(self._totals) if self._phase == _GAME_OVER else []

    def round_results(self) -> list[dict]:
        """The finished rounds' results.

        Each holds the replay result's ``finished``, ``ended_by``, ``went_out``,
        ``points`` and ``totals`` (see :meth:`result`), and also ``busted`` (who
        busted, else None), ``quit`` (who had quit, per seat) and
        ``triple_llamas`` (triple llamas rolled, per seat).
        """
        return [dict(r) for r in self._results]

    def statistics(self) -> dict[str, Any]:
        """Per-seat counts over the game so far (the episode statistics of the environments and the evaluator).

        Returns:
            ``{"rounds": int, "points": [...], "busts": [...], "quits": [...],
            "went_out": [...], "triple_llamas": [...]}``: the finished rounds and
            each seat's round points, busts, rounds gone out (from the finished
            rounds) and quits and triple llamas (also those of the round in
            progress), lists indexed by seat.  A game made by :meth:`from_state` also counts what its
            record carried in (the record's ``stats`` and rounds before it).
        """
        st = round_statistics(self._results, self._n,
                              None if self._phase >= _ROUND_OVER else (self._quit, self._triples))
        carried = self._carried
        if carried is not None:
            st["rounds"] += carried["rounds"]
            for k in _COUNTS:
                st[k] = list(map(add, st[k], carried[k]))
        return st

    def current_points(self, player: int) -> int:
        """What ``player``'s display would score if the round ended now."""
        return score_display(self._displays[player])

    # ---------------------------------------------------------------- chance
    @property
    def chance(self) -> str:
        """How chance is resolved: ``"sampled"`` or ``"explicit"`` (see :meth:`is_chance_node`)."""
        return "explicit" if self._explicit else "sampled"

    def is_chance_node(self) -> bool:
        """Whether the game waits for chance: a roll was chosen and its dice are not known yet, or a deal is under way.

        Only with ``chance="explicit"``; then :meth:`legal_actions` is empty, :attr:`phase`
        is :attr:`Phase.TURN` (the roller's turn, or the start player's first turn once
        the deal is done) and :meth:`chance_outcomes` lists what can happen.
        """
        return self._chance is not None

    def chance_outcomes(self) -> tuple[tuple[Any, float], ...]:
        """The outcomes of the pending chance event with their exact probabilities (sum 1); ``()`` if none.

        At a roll: every distinct roll as three face indices in die order
        (:func:`lama_env.transitions.chance_outcomes`). During a deal: the next
        card's face index (:func:`lama_env.transitions.deal_outcomes`; the deal
        goes card by card, six to each seat in seat order, at most seven outcomes a card).
        """
        c = self._chance
        if c is None:
            return ()
        if c == _ROLL_NODE:
            return roll_outcomes(self._rules)
        return deal_outcomes(self._dealt_counts())

    def apply_chance(self, outcome: Any) -> None:
        """Resolve the pending chance event with ``outcome`` (one of :meth:`chance_outcomes`' outcomes).

        A roll's outcome is three faces in die order (indices or names, as
        ``step(ROLL, dice=...)`` takes them); a deal's is one face (index or name).

        Raises:
            IllegalActionError: no chance event is pending, or ``outcome`` cannot happen; the state is unchanged.
        """
        c = self._chance
        if c is None:
            raise IllegalActionError("apply_chance: no chance event is pending (is_chance_node() is False)")
        if c == _ROLL_NODE:
            rolled = self.check_dice(outcome)  # may raise: state unchanged
            self._chance = None
            self._version += 1
            self._roll(self._current, rolled)
            return
        f = _to_face(outcome)
        if f is None or self._dealt_counts()[f] >= DECK_COUNTS[f]:
            raise IllegalActionError(f"the next card of the deal cannot be {clip(outcome)} "
                                     f"(left in the deck: {self._deck_left_text()})")
        self._deal_card(f)

    def sample_chance(self) -> Any:
        """Resolve the pending chance event from the game's own random stream; return the outcome applied.

        Dice are drawn as in the sampled mode; a deal card uniformly from the deck left.

        Raises:
            IllegalActionError: no chance event is pending.
        """
        c = self._chance
        if c is None:
            raise IllegalActionError("sample_chance: no chance event is pending (is_chance_node() is False)")
        if c == _ROLL_NODE:
            rolled = self._draw_dice()
            self.apply_chance(rolled)
            return rolled
        left = [k - d for k, d in zip(DECK_COUNTS, self._dealt_counts(), strict=True)]
        if type(self._rng) is Streams:
            i = self._rng.draw(sum(left))
        else:
            pos = self._bufpos
            buf = self._buf
            if pos + 1 > len(buf):
                buf = self._refill()
                pos = 0
            self._bufpos = pos + 1
            i = int(buf[pos] * sum(left))
        f = 0
        while i >= left[f]:
            i -= left[f]
            f += 1
        self._deal_card(f)
        return f

    def _deal_card(self, f: int) -> None:
        dealt = self._chance
        assert isinstance(dealt, tuple)
        p = deal_seat(len(dealt))
        d = list(self._displays[p])
        d[f] += 1
        self._displays[p] = tuple(d)
        dealt = (*dealt, f)
        self._version += 1
        if len(dealt) < self._n * HAND_SIZE:
            self._chance = dealt
            return
        self._chance = None
        self._legal = _TURN_ACTIONS
        self._hands = tuple(dealt[i:i + HAND_SIZE] for i in range(0, len(dealt), HAND_SIZE))
        if self._record:
            self._rounds.append({
                "start_player": self._start,
                "hands": [[FACES[f] for f in dealt[i:i + HAND_SIZE]] for i in range(0, len(dealt), HAND_SIZE)],
                "turns": [],
            })

    def _dealt_counts(self) -> list[int]:
        """Cards dealt so far in a deal under way (the displays hold nothing else yet), per face."""
        return [sum(col) for col in zip(*self._displays, strict=True)]

    def _deck_left_text(self) -> str:
        dealt = self._dealt_counts()
        return ", ".join(f"{DECK_COUNTS[f] - dealt[f]} '{FACES[f]}'" for f in _FACE_RANGE)

    def _chance_name(self) -> str:
        c = self._chance
        if c == _ROLL_NODE:
            return f"the dice of player {self._current}'s roll"
        return f"card {len(c or ()) + 1} of the deal"

    # ------------------------------------------------------------- returns
    def returns(self, reward: str = "win") -> tuple[float, ...]:
        """Each seat's return so far under the environments' ``reward`` mode (docs/environments.md, Rewards).

        Args:
            reward: ``"win"``: once the game is over, the zero-sum win/loss shares
                (:func:`lama_env.rules.win_rewards`), all 0 before; ``"points"``: minus
                each seat's chip total change over the finished rounds (the sum of the
                per-round ``"points"`` rewards so far).

        Raises:
            ValueError: an unknown ``reward``.
        """
        if reward == "win":
            return tuple(win_rewards(self._totals)) if self._phase == _GAME_OVER else (0.0,) * self._n
        if reward != "points":
            raise ValueError(f"reward must be one of {', '.join(map(repr, RETURNS))}, got {reward!r}")
        if self._phase >= _ROUND_OVER:
            ref = self._totals
        else:
            ref = self._results[-1]["totals"] if self._results else self._start_points
        return tuple(float(s - t) for s, t in zip(self._start_points, ref, strict=True))

    # ----------------------------------------------------------- copy/record
    def clone(self, chance: str | None = None, rng: np.random.Generator | Streams | None = None,
              rounds: str | None = None) -> LamaGame:
        """An independent copy, as :meth:`copy`, optionally in another chance mode or on another random stream.

        Args:
            chance: ``"sampled"`` or ``"explicit"``: the copy's chance mode for what
                follows (a chance event already pending stays pending: resolve it with
                :meth:`apply_chance` or :meth:`sample_chance`); None keeps this game's.
            rng: a generator the copy draws its future deals and dice from, or streams of the
                compiled engine's scheme (:class:`~lama_env.streams.Streams`; used as it is,
                not copied: a planner's own stream for its playouts); None: a copy of this
                game's stream, which continues the same way.
            rounds: ``"flow"`` or ``"manual"``: the copy's round mode for the rounds that end
                from now on (a planner that values a round's end asks for ``"manual"``); None
                keeps this game's.
        """
        if rng is None:
            g = self.copy()
        else:
            g = self._copy_with(rng)
            g._buf, g._buf_state, g._bufpos = [], None, 0
        if chance is not None:
            g._explicit = _is_explicit(chance)
        if rounds is not None:
            g._flow = _is_flow(rounds)
        return g

    def copy(self) -> LamaGame:
        """An independent copy (its random stream continues the same way as this one's)."""
        own = self._rng
        if isinstance(own, Streams):
            return self._copy_with(own.copy())
        rng = np.random.Generator(type(own.bit_generator)())
        rng.bit_generator.state = own.bit_generator.state
        return self._copy_with(rng)

    def __deepcopy__(self, memo: dict) -> LamaGame:
        """A :meth:`copy` whose random generator is ``deepcopy``'d with ``memo``.

        So a generator shared with other objects copied together (an environment's
        ``np_random``) stays shared between the copies.
        """
        from copy import deepcopy

        g = self._copy_with(deepcopy(self._rng, memo))
        memo[id(self)] = g
        return g

    def __getstate__(self) -> dict[str, Any]:
        """Pickle every slot (with the state format, checked on loading)."""
        state = {name: getattr(self, name) for name in LamaGame.__slots__}
        state["format"] = STATE_FORMAT
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        """Restore a pickled game (see :meth:`__getstate__`)."""
        if not isinstance(state, dict) or state.get("format") != STATE_FORMAT:
            got = state.get("format") if isinstance(state, dict) else type(state).__name__
            raise GameSetupError(f"cannot unpickle a LamaGame of state format {clip(got)} (this version reads "
                                 f"{STATE_FORMAT!r})")
        for name in LamaGame.__slots__:
            # a game pickled before rounds flowed on stopped between rounds; one pickled before state
            # records has no deal kept (None: unknown) and nothing carried
            setattr(self, name, state.get(name, False) if name == "_flow" else
                    state.get(name) if name in ("_hands", "_carried") else state[name])

    def _copy_with(self, rng: np.random.Generator | Streams) -> LamaGame:
        g = LamaGame.__new__(LamaGame)
        for name in LamaGame.__slots__:
            setattr(g, name, getattr(self, name))
        g._rng = rng
        g._buf = self._buf  # never mutated in place, only replaced
        g._totals = list(self._totals)
        g._displays = list(self._displays)  # of tuples
        g._quit = list(self._quit)
        g._triples = list(self._triples)
        g._discarded = list(self._discarded)
        g._results = [dict(r) for r in self._results]
        if self._record:
            g._rounds = [dict(r, turns=[dict(t) for t in r["turns"]]) for r in self._rounds]
            g._pending = g._rounds[-1]["turns"][-1] if self._pending is not None else None
        return g

    # ---------------------------------------------------------- serialize
    def serialize(self) -> str:
        """The whole state as a stable, versioned string (JSON of format :data:`STATE_FORMAT`).

        It keeps everything: whose turn, the phase and pending dice, quits, the
        llama row, the displays, chips, the round and its start player, the
        finished rounds' results, the turn log (with ``record=True``), the rules,
        the chance and round modes and any pending chance event, and the random stream's
        exact position, so :meth:`deserialize` gives a game that continues the
        same way (same future deals and dice).  The same state gives the same text.
        """
        n = self._n
        c = self._chance
        data = {
            "format": STATE_FORMAT, "players": n, "rules": self._rules.to_dict(include_dice=True),
            "chance": self.chance, "rounds": self.rounds, "record": self._record, "version": self._version,
            "start_points": self._start_points, "totals": self._totals, "round": self._round,
            "start_player": self._start, "current_player": self._current, "phase": self._phase.name.lower(),
            "displays": [list(d) for d in self._displays], "row": list(self._row), "quit": self._quit,
            "dice": None if self._dice is None else list(self._dice), "discarded": self._discarded,
            "triple_llamas": self._triples, "turns_in_round": self._turns_in_round,
            "round_points": self._round_points, "ended_by": self._ended_by, "went_out": self._went_out,
            "busted": self._busted, "hands": None if self._hands is None else [list(h) for h in self._hands],
            "carried": self._carried,
            "chance_node": None if c is None else "roll" if c == _ROLL_NODE else {"deal": list(c)},
            "results": [dict(r, quit=list(r["quit"]), triple_llamas=list(r["triple_llamas"])) for r in self._results],
            "log": self._rounds if self._record else None, "log_pending": self._pending is not None,
            "random": S.random_state(self._rng, self._buf_state, len(self._buf), self._bufpos),
        }
        return S.dumps(data)

    @classmethod
    def deserialize(cls, text: str) -> LamaGame:
        """The game that :meth:`serialize` wrote ``text`` from (its own random generator, in the same state).

        Raises:
            lama_env.snapshot.StateFormatError: ``text`` is not a readable
                :data:`STATE_FORMAT` string (the message names the bad field).
        """
        data = S.parse(text, STATE_FORMAT)
        g = cls.__new__(cls)
        try:
            g._restore_setup(data)
            g._restore_round(data)
            g._restore_history(data)
        except LamaDiceError as e:
            if isinstance(e, S.StateFormatError):
                raise
            raise S.StateFormatError(f"serialized game state: {e}") from None
        return g

    def _restore_setup(self, data: dict[str, Any]) -> None:
        self._n = n = S.check_int(S.field(data, "players"), "players", 1, MAX_PLAYERS)
        rules = S.field(data, "rules")
        if not isinstance(rules, dict):
            raise S.StateFormatError("serialized game state: rules must be an object")
        self._rules = RulesConfig.from_dict(rules)
        self._dice_faces = self._rules.dice_index
        self._explicit = S.check_choice(S.field(data, "chance"), "chance", CHANCE_MODES) == "explicit"
        # a state written before rounds flowed on (no "rounds" field) stopped between rounds
        self._flow = S.check_choice(data.get("rounds", "manual"), "rounds", ROUNDS_MODES) == "flow"
        self._record = S.check_bool(S.field(data, "record"), "record")
        self._version = S.check_int(S.field(data, "version"), "version", 0)
        self._start_points = S.check_ints(S.field(data, "start_points"), "start_points", n, 0)
        self._totals = S.check_ints(S.field(data, "totals"), "totals", n, 0)
        self._round = S.check_int(S.field(data, "round"), "round", 0)
        self._rng, self._buf_state, self._buf, self._bufpos = S.restore_random(S.field(data, "random"))

    def _restore_round(self, data: dict[str, Any]) -> None:
        n = self._n
        self._start = S.check_int(S.field(data, "start_player"), "start_player", 0, n - 1)
        self._current = S.check_int(S.field(data, "current_player"), "current_player", 0, n - 1)
        phases = tuple(p.name.lower() for p in Phase)
        self._phase = Phase[S.check_choice(S.field(data, "phase"), "phase", phases).upper()]
        displays = S.field(data, "displays")
        if not isinstance(displays, list) or len(displays) != n:
            raise S.StateFormatError(f"serialized game state: displays must list {n} displays")
        self._displays = [tuple(S.check_ints(d, "displays", NUM_FACES, 0, HAND_SIZE + NUM_FACES)) for d in displays]
        self._row = tuple(S.check_ints(S.field(data, "row"), "row", NUM_FACES, 0, 1))
        self._quit = [S.check_bool(q, "quit") for q in S.check_list(S.field(data, "quit"), "quit", n)]
        self._active = n - sum(self._quit)
        dice = S.field(data, "dice")
        self._dice = None if dice is None else self.check_dice(S.check_ints(dice, "dice", NUM_DICE, 0, NUM_FACES - 1))
        self._discarded = S.check_ints(S.field(data, "discarded"), "discarded", None, _DISCARD_BASE,
                                       A.NUM_ACTIONS - 1)
        self._triples = S.check_ints(S.field(data, "triple_llamas"), "triple_llamas", n, 0)
        self._turns_in_round = S.check_int(S.field(data, "turns_in_round"), "turns_in_round", 0)
        pts = S.field(data, "round_points")
        self._round_points = None if pts is None else S.check_ints(pts, "round_points", n, 0)
        self._ended_by = S.check_choice(S.field(data, "ended_by"), "ended_by", (None, *ROUND_ENDINGS))
        self._went_out = S.check_optional_int(S.field(data, "went_out"), "went_out", 0, n - 1)
        self._busted = S.check_optional_int(S.field(data, "busted"), "busted", 0, n - 1)
        node = S.field(data, "chance_node")
        if node is None or node == "roll":
            self._chance = None if node is None else _ROLL_NODE
        elif isinstance(node, dict) and set(node) == {"deal"}:
            self._chance = tuple(S.check_ints(node["deal"], "chance_node.deal", None, 0, NUM_FACES - 1))
        else:
            raise S.StateFormatError(f"serialized game state: bad chance_node {clip(node)}")
        # the round's deal (absent from a state written before state records: unknown, so no to_state)
        hands = data.get("hands")
        self._hands = None if hands is None else tuple(
            tuple(S.check_ints(h, "hands", HAND_SIZE, 0, NUM_FACES - 1)) for h in S.check_list(hands, "hands", n))
        self._legal = self._derive_legal()

    def _derive_legal(self, what: str = "serialized game state") -> tuple[int, ...]:
        """The legal actions of the restored state (worked out again, and checked against its phase)."""
        ph = self._phase
        if self._chance is not None or ph >= _ROUND_OVER:
            return ()
        if ph == _TURN:
            if self._dice is not None:
                raise S.StateFormatError(f"{what}: dice are shown at the start of a turn")
            return _TURN_ACTIONS
        if self._dice is None:
            raise S.StateFormatError(f"{what}: no dice for a {ph.name.lower()} decision")
        kind, legal, _, _, _ = apply_roll(self._displays[self._current], self._row, self._dice, self._active == 1,
                                          self._rules)
        if kind != (ROLL_DISCARD if ph == _DISCARD else ROLL_TAKE):
            raise S.StateFormatError(f"{what}: the dice {list(self._dice)} ask for a {kind}, "
                                     f"not a {ph.name.lower()} decision")
        return legal

    def _restore_history(self, data: dict[str, Any]) -> None:
        results = S.check_list(S.field(data, "results"), "results", None)
        keys = {"finished", "ended_by", "went_out", "points", "totals", "busted", "quit", "triple_llamas"}
        for r in results:
            if not isinstance(r, dict) or set(r) != keys:
                raise S.StateFormatError(f"serialized game state: a round result must have the fields "
                                         f"{', '.join(sorted(keys))}")
        self._results = [dict(r, quit=tuple(r["quit"]), triple_llamas=tuple(r["triple_llamas"])) for r in results]
        carried = data.get("carried")  # the statistics a game made by from_state carried in (absent: none)
        if carried is not None:
            if not isinstance(carried, dict) or set(carried) != {"rounds", *_COUNTS}:
                raise S.StateFormatError(f"serialized game state: carried must have the fields rounds, "
                                         f"{', '.join(_COUNTS)}")
            carried = {"rounds": S.check_int(carried["rounds"], "carried.rounds", 0),
                       **{k: S.check_ints(carried[k], f"carried.{k}", self._n, 0) for k in _COUNTS}}
        self._carried = carried
        self._rounds = []
        self._pending = None
        if self._record:
            log = S.check_list(S.field(data, "log"), "log", None)
            for r in log:
                if (not isinstance(r, dict) or set(r) != {"start_player", "hands", "turns"}
                        or not isinstance(r["turns"], list) or not all(isinstance(t, dict) for t in r["turns"])):
                    raise S.StateFormatError("serialized game state: a log round must have start_player, hands "
                                             "and a list of turns")
            self._rounds = log
            if S.check_bool(S.field(data, "log_pending"), "log_pending"):
                if not log or not log[-1]["turns"]:
                    raise S.StateFormatError("serialized game state: log_pending without a turn")
                self._pending = log[-1]["turns"][-1]

    # ---------------------------------------------------------- the compiled engine's record
    def to_state(self) -> np.ndarray:
        """The game now as the compiled engine's record of it: a 0-d array of ``lama_env._kernel.STATE_DTYPE``.

        The record holds what the compiled engine (:mod:`lama_env._kernel`, the one record that
        :func:`lama_env.batched.play_batch` and :class:`lama_env.vector.VectorGame` keep per game)
        holds at the same point of the same game, field for field, so its step continues the game.
        For a game on the compiled streams (``game_id=...``, or ``rng=`` a
        :class:`~lama_env.streams.Streams`) ``es`` and ``ps`` are the streams' positions: the
        kernel then draws the deals, dice and ``random`` agent actions this game would draw.  For a
        game on a NumPy generator they are 0 and mean nothing (a generator is no splitmix64
        stream; :meth:`from_state` of that record plays on the streams at 0, another future).

        A decision converts, and so does the game's end (the record's ``phase`` is then ``TURN``
        and ``cur`` whoever acted last, as the kernel leaves them).  Fields the kernel's step
        never reads get neutral values: ``deck`` and ``cnt`` (scratch), the ``l_*`` fields,
        ``logpos`` and ``done_len`` (its logs) 0, ``pend`` -1; ``dice`` and ``lim`` are 0 outside a
        discard or take decision (the kernel leaves the last roll's there); per-seat entries past
        the players, 0.  ``stats`` are :meth:`statistics` (round points, busts, quits, rounds gone
        out, triple llamas), ``rstart`` the totals the round began with, ``hands`` its deal in deal
        order, ``nround`` :attr:`round_index`, ``nturn`` :attr:`turns_in_round`.

        Raises:
            IllegalActionError: the game waits for chance, stands at :attr:`Phase.ROUND_OVER`
                (``rounds="manual"``: call :meth:`next_round` first), its round's deal is unknown (a
                game restored from a state or pickle written before state records), or a total has
                reached the end threshold while it goes on (``start_points``: such a record is a
                finished game).
        """
        from . import _kernel as K  # (Numba: loaded on first use only)

        if self._chance is not None:
            raise IllegalActionError(f"to_state: the game waits for chance ({self._chance_name()}); "
                                     "a state record holds a decision or the game's end")
        ph = self._phase
        if ph == _ROUND_OVER:
            raise IllegalActionError("to_state: the round is over (rounds='manual'): call next_round() first; "
                                     "a state record holds a decision or the game's end")
        hands = self._hands
        if hands is None:
            raise IllegalActionError("to_state: the round's deal is unknown (a game restored from a state or "
                                     "pickle written before state records)")
        over = ph == _GAME_OVER
        if not over and game_over(self._totals, self._rules):
            raise IllegalActionError(f"to_state: a total has reached the end threshold ({self._rules.end_threshold}) "
                                     "while the game goes on; a record with one is a finished game")
        n = self._n
        s = np.zeros((), K.STATE_DTYPE)
        s["pend"] = -1
        rng = self._rng
        if type(rng) is Streams:
            s["es"], s["ps"] = rng.es, rng.ps
        row = self._row
        s["row"] = sum(1 << f for f in _FACE_RANGE if row[f])
        s["active"], s["cur"], s["start"] = self._active, self._current, self._start
        s["phase"] = K.TURN if over else (K.TURN, K.DISCARD, K.TAKE)[ph]
        s["nround"], s["nturn"] = self._round, self._turns_in_round
        if ph == _DISCARD or ph == _TAKE:
            dice = self._dice
            assert dice is not None  # a discard or take decision follows a roll
            s["dice"] = dice
            if ph == _DISCARD:
                s["lim"] = match_limits(self._displays[self._current], dice)
        s["quit"][:n] = self._quit
        s["tot"][:n] = self._totals
        res = self._results
        if over:  # the round that ended the game began with the totals after the round before it
            s["rstart"][:n] = res[-2]["totals"] if len(res) > 1 else self._start_points
        else:
            s["rstart"][:n] = res[-1]["totals"] if res else self._start_points
        s["disp"][:n] = self._displays
        s["hands"][:n] = hands
        st = self.statistics()
        for k, key in enumerate(_COUNTS):
            s["stats"][k, :n] = st[key]
        return s

    @classmethod
    def from_state(cls, state: Any, num_players: int, rules: RulesConfig | dict | None = None, *,
                   chance: str = "sampled", rounds: str = "flow") -> LamaGame:
        """The game that a compiled-engine record holds (:meth:`to_state`'s inverse), on the record's streams.

        ``state``: one record of ``lama_env._kernel.STATE_DTYPE`` (a 0-d or one-element array, or
        an element of a batch); ``num_players`` and ``rules`` are the game's (a record does not
        hold them).  The game draws from :class:`~lama_env.streams.Streams` at the record's
        ``es`` and ``ps``, so it plays on exactly as the kernel's step plays the record under the
        same actions (deals, dice, :meth:`sample_action`), and :meth:`to_state` gives the
        kernel's record again at every decision.  A record whose totals reach the end threshold
        is the game's end (:attr:`Phase.GAME_OVER`; its ``round_points`` are what the displays
        score, how the round ended is unknown).  The fields that :meth:`to_state` writes
        neutral are not read (``dice`` and ``lim`` only at a discard or take decision).

        What a record does not hold starts there: the game keeps no turn log (``record=False``:
        no :meth:`to_record`), :meth:`round_results` and :meth:`returns` ``("points")`` count
        from the totals the round began with (``rstart``), the round's triple llamas so far are
        counted in :meth:`statistics` (from ``stats``) but not in :attr:`triple_llamas`, and
        :attr:`discarded` is the pile the displays, the deal and the row imply.

        Raises:
            lama_env.snapshot.StateFormatError: ``state`` is not such a record, or a field is out of
                range or disagrees with the others (the message names it).
            GameSetupError: a bad player count, ``chance`` or ``rounds``.
            lama_env.rules.RulesError: bad ``rules``.
        """
        from . import _kernel as K  # (Numba: loaded on first use only)

        n = check_num_players(num_players, GameSetupError)
        rc = rules if type(rules) is RulesConfig else _DEFAULT_RULES if rules is None else RulesConfig.from_dict(rules)
        explicit, flow = _is_explicit(chance), _is_flow(rounds)
        rec = _one_record(state, K.STATE_DTYPE)
        phase = _record_ints(rec, "phase", 0, 2)
        row = _record_ints(rec, "row", 0, _FULL_MASK)
        cur = _record_ints(rec, "cur", 0, n - 1)
        start = _record_ints(rec, "start", 0, n - 1)
        active = _record_ints(rec, "active", 0, n)
        nround = _record_ints(rec, "nround", 0)
        nturn = _record_ints(rec, "nturn", 0, rc.max_round_turns)
        quit = _record_ints(rec, "quit", 0, 1, n)
        tot = _record_ints(rec, "tot", 0, None, n)
        rstart = _record_ints(rec, "rstart", 0, None, n)
        disp = _record_ints(rec, "disp", 0, HAND_SIZE + NUM_FACES, n)
        hands = _record_ints(rec, "hands", 0, NUM_FACES - 1, n)
        stats = [_record_ints(rec, "stats", 0, None, n, k) for k in range(len(_COUNTS))]
        bad = "state record: "
        if active != n - sum(quit):
            raise S.StateFormatError(f"{bad}active must count the players who have not quit ({n - sum(quit)}), "
                                     f"got {active}")
        dealt = [sum(h.count(f) for h in hands) for f in _FACE_RANGE]
        pile = []
        for f in _FACE_RANGE:
            if dealt[f] > DECK_COUNTS[f]:
                raise S.StateFormatError(f"{bad}hands deal {dealt[f]} cards '{FACES[f]}' but the deck has only "
                                         f"{DECK_COUNTS[f]}")
            left = dealt[f] + 1 - (row >> f & 1) - sum(d[f] for d in disp)  # dealt and taken from the row, not held
            if left < 0:
                raise S.StateFormatError(f"{bad}the displays hold more cards '{FACES[f]}' than the deal and the "
                                         "row gave them")
            pile += [A.DISCARD_ACTION[tuple(int(i == f) for i in _FACE_RANGE)]] * left
        over = game_over(tot, rc)
        if over and phase != K.TURN:
            raise S.StateFormatError(f"{bad}a finished game (a total at the end threshold {rc.end_threshold}) stands "
                                     f"at a turn (phase {K.TURN}), got phase {phase}")
        if not over and (quit[cur] or row == 0):
            raise S.StateFormatError(f"{bad}no decision to take: " + (
                f"the player to act ({cur}) has quit" if quit[cur] else "the row is empty (the round is over)"))
        if any(stats[2][p] < quit[p] for p in range(n)):
            raise S.StateFormatError(f"{bad}stats count fewer quits than the players who have quit")
        g = cls.__new__(cls)
        g._n, g._rules, g._dice_faces = n, rc, rc.dice_index
        g._rng = Streams(int(rec["es"]), int(rec["ps"]))
        g._buf, g._buf_state, g._bufpos = [], None, 0
        g._explicit, g._flow, g._chance = explicit, flow, None
        g._record, g._rounds, g._pending, g._results, g._version = False, [], None, [], 0
        g._round, g._start, g._current, g._turns_in_round = nround, start, cur, nturn
        g._phase = _GAME_OVER if over else Phase(phase)
        g._totals, g._start_points = tot, rstart
        g._displays = [tuple(d) for d in disp]
        g._row = tuple(row >> f & 1 for f in _FACE_RANGE)
        g._quit = [bool(q) for q in quit]
        g._active = active
        g._discarded = pile
        g._triples = [0] * n
        g._hands = tuple(tuple(h) for h in hands)
        g._round_points = list(map(score_display, g._displays)) if over else None
        g._ended_by = g._went_out = g._busted = None
        g._carried = {"rounds": nround + over, **{k: stats[i] for i, k in enumerate(_COUNTS)}}
        if not over:
            g._carried["quits"] = [q - x for q, x in zip(stats[2], quit, strict=True)]  # the round's: in _quit
        g._dice = None
        if phase != K.TURN and not over:
            try:
                g._dice = g.check_dice([int(x) for x in rec["dice"]])
            except IllegalActionError as e:
                raise S.StateFormatError(f"{bad}dice: {e}") from None
            lim = [int(x) for x in rec["lim"]]
            if phase == K.DISCARD and tuple(lim) != match_limits(g._displays[cur], g._dice):
                raise S.StateFormatError(f"{bad}lim must be the roll's discard limits per face "
                                         f"{list(match_limits(g._displays[cur], g._dice) or ())}, got {lim}")
        g._legal = g._derive_legal("state record")
        return g

    def to_record(self) -> dict:
        """The game so far as a ``lama-dice-record/1`` dict (see docs/RULES.md).

        A roll still waiting for its discard or take is left out (a record's
        rolls always carry their decision), so the record ends just before it.
        """
        if not self._record:
            raise RuntimeError("this game was created with record=False")
        rec: dict[str, Any] = {
            "format": RECORD_FORMAT,
            "players": self._n,
            "rules": self._rules.to_dict(),
            "start_points": list(self._start_points),
            "rounds": [
                {"start_player": r["start_player"], "hands": [list(h) for h in r["hands"]],
                 "turns": [dict(t, **({"dice": list(t["dice"])} if "dice" in t else {})) for t in r["turns"]]}
                for r in self._rounds
            ],
        }
        if self._pending is not None:
            rec["rounds"][-1]["turns"].pop()
        return rec

    def result(self) -> dict:
        """The replay result of the game so far (docs/RULES.md, "Replay results")."""
        rounds = [{"finished": r["finished"], "ended_by": r["ended_by"], "went_out": r["went_out"],
                   "points": list(r["points"]), "totals": list(r["totals"])} for r in self._results]
        if not self.round_over:
            rounds.append({"finished": False, "ended_by": None, "went_out": None,
                           "points": None, "totals": list(self._totals)})
        return {"valid": True, "rounds": rounds, "totals": list(self._totals),
                "game_over": self.game_over, "winners": self.winners}

    def __repr__(self) -> str:
        """Show the players, round, phase, current player and totals."""
        return (f"LamaGame(players={self._n}, round={self._round}, phase={self._phase.name}, "
                f"current={self._current}, totals={self._totals})")


def round_statistics(results: Sequence[dict], num_players: int,
                     in_progress: tuple[Sequence[bool], Sequence[int]] | None = None) -> dict[str, Any]:
    """Per-seat counts over finished rounds (:meth:`LamaGame.round_results`); see :meth:`LamaGame.statistics`.

    Args:
        results: the finished rounds' results, with ``busted``, ``quit`` and ``triple_llamas``.
        num_players: seats.
        in_progress: the ``(quit, triple_llamas)`` of a round still being played, counted too.
    """
    n = num_players
    points = [0] * n
    busts = [0] * n
    quits = [0] * n
    went_out = [0] * n
    triples = [0] * n
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


def _stream_deal(streams: Streams, n: int) -> list[list[int]]:
    """A round's hands drawn as the compiled engine deals them: a partial Fisher-Yates shuffle, one draw a card."""
    deck = _DECK_LIST[:]
    for i, j in enumerate(map(add, _DECK_POSITIONS, streams.draw_each(_DEAL_DRAWS[n]))):  # j = i + the draw
        deck[i], deck[j] = deck[j], deck[i]
    return [deck[i:i + HAND_SIZE] for i in range(0, n * HAND_SIZE, HAND_SIZE)]


def _one_record(state: Any, dtype: np.dtype) -> np.ndarray:
    """``state`` (one record of ``dtype``: 0-d or one-element, or an element of a batch) as a 0-d copy."""
    if isinstance(state, (np.ndarray, np.void)) and state.dtype == dtype and np.shape(state) in ((), (1,)):
        return np.array(state, dtype).reshape(())
    got = (f"shape {np.shape(state)} of dtype {clip(str(state.dtype))}" if isinstance(state, (np.ndarray, np.void))
           else clip(state))
    raise S.StateFormatError("state record: must be one record of lama_env._kernel.STATE_DTYPE (a 0-d or "
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
        raise S.StateFormatError(f"state record: {key} must hold integers {span}, got {int(a[out].flat[0])}")
    return a.tolist()


def _to_face(f: Any) -> int | None:
    if isinstance(f, str):
        return FACES.index(f) if f in FACES else None
    if isinstance(f, (int, np.integer)) and not isinstance(f, bool) and 0 <= f < NUM_FACES:
        return int(f)
    return None


def check_hands(hands: Sequence[Sequence[Any]], num_players: int) -> list[list[int]]:
    """Validate a deal (six cards per player, dealable from the deck); return face indices."""
    if not isinstance(hands, (list, tuple)) or len(hands) != num_players:
        got = len(hands) if isinstance(hands, (list, tuple)) else clip(hands)
        raise IllegalActionError(f"hands must list {num_players} hands, got {got}")
    out = []
    used = [0] * NUM_FACES
    for p, hand in enumerate(hands):
        if not isinstance(hand, (list, tuple)) or len(hand) != HAND_SIZE:
            got = f"{len(hand)}: {clip(hand)}" if isinstance(hand, (list, tuple)) else clip(hand)
            raise IllegalActionError(f"hand {p} must have {HAND_SIZE} cards, got {got}")
        idx = []
        for f in hand:
            i = _to_face(f)
            if i is None:
                raise IllegalActionError(f"hand {p} has an unknown card {clip(f)}")
            idx.append(i)
            used[i] += 1
        out.append(idx)
    for f in range(NUM_FACES):
        if used[f] > DECK_COUNTS[f]:
            raise IllegalActionError(
                f"hands hold {used[f]} cards '{FACES[f]}' but the deck has only {DECK_COUNTS[f]}"
            )
    return out
