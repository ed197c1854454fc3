"""The games people play in the browser: one :class:`WebGame` per id, in a bounded :class:`GameStore`.

A :class:`WebGame` is a :class:`~lama_env.engine.LamaGame` with the agents of
the other seats.  After each of the person's moves the agents play (with
:func:`lama_dice.cli.play.play_agent_turn`, as in the terminal game) until it
is the person's decision again or the game is over.  Rounds flow on in the
game (the step that ends a round deals the next); the page pauses at a round's
end on what the state's ``round_end`` keeps of the last round that ended since
the person's last move: the table as it ended (:class:`lama_env.roundend.RoundEnd`)
and the lines up to it.  The lines of what happened since (and the person's
own roll while its discard or take is pending) are kept for the page.  A discard or take with
a single legal choice is played for the person at once (as ``lama-dice play``
does), and a line says so.  Every action is
checked by the engine (:meth:`LamaGame.step` refuses an illegal one and leaves
the game as it was).

The store holds at most ``max_games`` games.  A game is dropped
``finished_ttl_s`` after its last request once it is over, and
``idle_ttl_s`` after its last request if abandoned; when the store is full,
a new game is never refused: the finished game touched longest ago makes room,
and with none finished the unfinished one touched longest ago (least recently
used first), so that a page that starts games without playing them cannot lock
anyone out.

A request may name the built-in agents (:data:`WEB_AGENTS`) and the shipped
networks; any other spec (``python:``, ``rllib:``, ``ppo:`` with a path: they
load code or files from the server's disk) is refused unless the person who
started the server named it (``--agents``): a web page may ask the server for
games, so a request is data, never a way to run a file (docs/web.md).
"""

from __future__ import annotations

import difflib
import re
import secrets
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from lama_env.engine import LamaGame, Phase
from lama_env.errors import LamaDiceError, clip
from lama_env.picture import status_text
from lama_env.roundend import RoundEnd, step_with_round_end
from lama_env.rules import FACES, winners

from ..play import (
    choice_label,
    choice_outcome,
    make_opponents,
    ordered_choices,
    play_agent_turn,
    player_names,
    resolve_seats,
)
from ..tui import snapshot, turn_text
from .state import roll_odds, table_state

#: The store's bounds: games at once, seconds a finished game is kept, seconds an abandoned one is kept.
MAX_GAMES, FINISHED_TTL_S, IDLE_TTL_S = 256, 600.0, 1800.0
#: The agents a request may name (with any argument): they read no file and run no code named in their spec.
#: Every other spec (``python:``, ``rllib:``, ``ppo:`` with a path; ``mcts:``, whose rollouts may name any spec;
#: an agent added later) is refused unless the server's owner named it (``--agents``), or it is a shipped
#: network (``ppo:2p``).
WEB_AGENTS = ("random", "always-roll", "threshold", "points", "solo-optimal", "optimal", "lookahead")


class WebError(LamaDiceError, ValueError):
    """A request the server refuses; ``status`` is its HTTP status code."""

    status = 400


class NotFoundError(WebError):
    """No game with that id (never created, or dropped)."""

    status = 404


class ConflictError(WebError):
    """The request does not fit the game's state (an illegal action, a stale move)."""

    status = 409


#: The folders of an absolute path in a message (``/usr/lib/.../ppo_2p.safetensors``): the file's name stays.
_FOLDERS = re.compile(r"(?<![\w.:/~-])/(?:[^\s/'\"(),]+/)+(?=[^\s/'\"(),]+)")


def hide_paths(message: str) -> str:
    """``message`` with every absolute path cut to its file's name: a page never learns where the server's files are."""
    return _FOLDERS.sub("", message)


def shipped_specs() -> list[str]:
    """The shipped networks as specs (``ppo:2p`` ...), the current ones before the earlier ``-vN`` ones."""
    from lama_dice.agents.ppo import pretrained_names

    return sorted((f"ppo:{n}" for n in pretrained_names()), key=lambda s: ("-v" in s, s))


def builtin_specs() -> list[str]:
    """The built-in agents a request may name (:data:`WEB_AGENTS` that are registered, aliases left out)."""
    from lama_dice.agents.registry import registered

    names = registered()
    return [name for name in WEB_AGENTS if name in names and not names[name].alias_of]


def check_spec(spec: Any, trusted: Iterable[str] = ()) -> str:
    """Refuse a spec a request may not name (see :data:`WEB_AGENTS`) unless it is ``trusted``; return it stripped.

    Raises:
        WebError: not a string, an unknown agent, or one that loads a file or code and is not ``trusted``.
    """
    if not isinstance(spec, str) or not spec.strip():
        raise WebError(f"an agent spec must be a non-empty string, got {spec!r}")
    spec = spec.strip()
    if spec in trusted:
        return spec
    name = spec.partition(":")[0]
    if name in WEB_AGENTS or spec in shipped_specs():
        return spec
    from lama_dice.agents.registry import registered

    specs = builtin_specs() + shipped_specs() + list(trusted)
    offered = ", ".join(specs)
    arg = spec.partition(":")[2]
    # ppo:NAME that is no shipped network (a typo such as ppo:2pp) is unknown, not a file to offer with --agents
    if name not in registered() or (name == "ppo" and arg and not re.search(r"[/\\.~]", arg)):
        near = difflib.get_close_matches(spec, specs, n=1)
        hint = f" (did you mean {near[0]!r}?)" if near else ""
        raise WebError(f"unknown agent spec {spec!r}{hint}; offered here: {offered}")
    raise WebError(f"agent spec {spec!r} is not offered to web pages (it may load a file or run code from the "
                   f"server's disk): start the server with --agents SPEC to offer it; offered here: {offered}")


class WebGame:
    """One person's game against agents (see the module docstring).

    Args:
        game_id: the id the API knows it by.
        players: 1..6, the person included (None: one more than ``opponents``).
        seat: the person's seat.
        opponents: one spec for every opponent, or one per opponent seat (as ``lama-dice play --opponents``).
        seed: seeds the deal, the dice and the agents (None: fresh randomness).
        trusted: file agents the server's owner allows (see :func:`check_spec`).

    Raises:
        WebError: bad players, seat or specs; an agent that cannot play this many players.
    """

    def __init__(self, game_id: str, players: int | None, seat: int, opponents: Sequence[str] | None,
                 seed: int | None = None, trusted: Iterable[str] = ()) -> None:
        """Set up the game and let the agents play until it is the person's decision."""
        specs = [check_spec(s, trusted) for s in opponents or []]
        try:
            n, seats = resolve_seats(players, specs or None, seat)
            agents = make_opponents(seats, seed, num_players=n)
            # game 0 of the compiled engine's streams of the seed (as `lama-dice play`, the envs and evaluate
            # --backend fast); the page pauses on each round's end (round_end)
            self.game = LamaGame(n, seed=seed, game_id=0)
        except LamaDiceError as e:  # the command line's option names (--players) become the API's fields
            line = re.sub(r"--(players|seat|opponents)\b", r"\1", str(e).splitlines()[0])
            raise WebError(hide_paths(line)) from None
        self.id = game_id
        self.seed = seed
        self.seat = seat
        self.agents = agents
        self.specs = seats
        self.names = player_names(n, seat, seats)
        self.events: list[str] = []
        self.seq = 0  #: moves the person made (the page sends it back, so that a repeated click changes nothing)
        self.last_dice: list[str] | None = None
        #: the last round that ended since the person's last move (the game going on): its table and lines
        self.round_end: dict[str, Any] | None = None
        self.lock = threading.Lock()
        self.touched = time.monotonic()
        self._advance()

    @property
    def finished(self) -> bool:
        """Whether the game is over."""
        return self.game.game_over

    # -------------------------------------------------------------- moves
    def act(self, action: Any, seq: int | None = None) -> None:
        """The person's action (an int of :mod:`lama_env.actions`); then the agents play.

        Raises:
            ConflictError: not the person's decision, a stale ``seq``, or an action the rules do not allow now.
            WebError: ``action`` is not an integer.
        """
        self._check_seq(seq)
        if isinstance(action, bool) or not isinstance(action, int):
            raise WebError(f"action must be an integer action id, got {action!r}")
        g = self.game
        if g.game_over or g.current_player != self.seat:
            raise ConflictError(f"it is not your decision now ({status_text(g, self.names)})")
        before = snapshot(g)
        end = step_with_round_end(g, action)  # IllegalActionError: the legal actions named; nothing changed
        self.seq += 1
        self.round_end = None  # (the page showed it before offering this move)
        only = None
        if end is None and g.phase in (Phase.DISCARD, Phase.TAKE):  # the person rolled: the discard or take is next
            legal = ordered_choices(g)
            if len(legal) != 1:
                self.events.append(self._roll_line())
                return
            only = f"Only one choice: {choice_label(legal[0])} ({choice_outcome(g, legal[0])}), played for you."
            end = step_with_round_end(g, legal[0])
        self.events = []  # the person's turn is complete
        self._report(before, end)
        if only:
            self.events.append(only)
        if end is not None:
            self._round_ended(end)
        self._advance()

    def _roll_line(self) -> str:
        """The person's roll while its discard or take is pending: ``You: rolls 3 4 5: it matches ...``."""
        g = self.game
        dice = " ".join(FACES[f] for f in g.dice or ())
        what = ("it matches your display: choose what to discard" if g.phase == Phase.DISCARD
                else "it matches nothing in your display: take a card from the llama row")
        return f"{self.names[self.seat]}: rolls {dice}: {what}"

    def _check_seq(self, seq: int | None) -> None:
        if seq is not None and seq != self.seq:
            raise ConflictError(f"the game has moved on (move {self.seq}, the request was for move {clip(seq)}): "
                                "reload its state")

    def _advance(self) -> None:
        """Let the agents play until the person decides or the game ends (through rounds' ends)."""
        g = self.game
        while not g.game_over and g.current_player != self.seat:
            before = snapshot(g)
            end = play_agent_turn(g, self.agents[g.current_player])
            self._report(before, end)
            if end is not None:
                self._round_ended(end)
        if g.game_over:
            self.events.append(status_text(g, self.names))

    def _round_ended(self, end: RoundEnd) -> None:
        """Keep the round's end for the page (its table, the lines up to it); the next round's lines start afresh."""
        self.events.append(status_text(end, self.names))
        earlier = self.round_end["events"] if self.round_end is not None else []  # (a round cut before your turn)
        self.round_end = {"table": table_state(end, self.names, dice=self.last_dice), "events": earlier + self.events}
        self.events = []

    def _report(self, before: Any, end: RoundEnd | None) -> None:
        rounds = self.game.to_record()["rounds"]
        turn = rounds[-2 if end is not None else -1]["turns"][-1]  # (a round's end: the next one is dealt)
        self.events.append(turn_text(turn, before, end or self.game, self.names).plain)
        self.last_dice = turn.get("dice")

    # -------------------------------------------------------------- views
    def choices(self) -> list[dict[str, Any]]:
        """The person's options now: ``action`` (its id), ``label`` (the button's name), ``outcome`` (its result)."""
        g = self.game
        if g.game_over or g.current_player != self.seat:
            return []
        return [{"action": a, "label": choice_label(a), "outcome": choice_outcome(g, a)} for a in ordered_choices(g)]

    def record(self) -> dict:
        """The game so far as a ``lama-dice-record/2`` record: the seat names and specs, the seed, the version."""
        from lama_env import __version__
        from lama_env.record import with_about

        n = self.game.num_players
        return with_about(self.game.to_record(), names=self.names, agents=[self.specs.get(p) for p in range(n)],
                          seed=self.seed, version=__version__)

    def state(self) -> dict[str, Any]:
        """The whole state the page needs (see docs/web.md, "The API")."""
        g = self.game
        out: dict[str, Any] = {
            "id": self.id, "seq": self.seq, "you": self.seat, "names": self.names,
            "opponents": {str(p): s for p, s in self.specs.items()},
            "table": table_state(g, self.names, dice=self.last_dice),
            "choices": self.choices(), "events": list(self.events),
            "odds": roll_odds(g, self.seat) if g.phase == Phase.TURN and g.current_player == self.seat else None,
            "round_end": self.round_end, "game_over": g.game_over,
            "last_round": None, "result": None,
        }
        if self.round_end is not None or g.game_over:  # the round that ended last
            res = g.last_round
            assert res is not None
            out["last_round"] = {"ended_by": res["ended_by"], "points": list(res["points"]),
                                 "totals": list(res["totals"])}
        if g.game_over:
            totals = g.totals
            out["result"] = {"winners": winners(totals), "totals": list(totals), "rounds": g.round_index + 1,
                             "standings": [{"place": 1 + sum(t < totals[p] for t in totals), "seat": p,
                                            "name": self.names[p], "total": totals[p]}
                                           for p in sorted(range(g.num_players), key=lambda q: (totals[q], q))]}
        return out


class GameStore:
    """The games being played, by id, within the bounds of the module docstring (thread-safe).

    Args:
        max_games: games held at once.
        finished_ttl_s: seconds a finished game is kept after its last request.
        idle_ttl_s: seconds an unfinished game is kept after its last request.
        trusted: file agents the server's owner allows (see :func:`check_spec`).
        clock: the time source (tests pass a fake one).
    """

    def __init__(self, max_games: int = MAX_GAMES, finished_ttl_s: float = FINISHED_TTL_S,
                 idle_ttl_s: float = IDLE_TTL_S, trusted: Iterable[str] = (),
                 clock: Callable[[], float] = time.monotonic) -> None:
        """Set the bounds (see the class docstring)."""
        self.max_games = max_games
        self.finished_ttl_s = finished_ttl_s
        self.idle_ttl_s = idle_ttl_s
        self.trusted = tuple(trusted)
        self.clock = clock
        self._games: dict[str, WebGame] = {}
        self._lock = threading.Lock()

    def __len__(self) -> int:
        """Games held now."""
        return len(self._games)

    def new(self, players: int | None, seat: int, opponents: Sequence[str] | None,
            seed: int | None = None) -> WebGame:
        """Start a game (see :class:`WebGame`) and keep it.

        Raises:
            WebError: bad arguments (a full store makes room: see the module docstring).
        """
        self._make_room()
        game = WebGame(secrets.token_urlsafe(12), players, seat, opponents, seed, self.trusted)
        game.touched = self.clock()
        with self._lock:
            self._make_room_locked()
            self._games[game.id] = game
        return game

    def get(self, game_id: str) -> WebGame:
        """The game ``game_id``, marked as just used.

        Raises:
            NotFoundError: no such game (never created, or dropped).
        """
        self.prune()
        with self._lock:
            game = self._games.get(game_id)
        if game is None:
            raise NotFoundError(f"no game {clip(game_id)}: unknown, or dropped ({self.idle_ttl_s / 60:g} minutes "
                                f"without a request, or the least recently used when {self.max_games} games "
                                "were held)")
        game.touched = self.clock()
        return game

    def prune(self) -> int:
        """Drop finished games idle over ``finished_ttl_s``, others idle over ``idle_ttl_s``; return how many."""
        now = self.clock()
        with self._lock:
            old = [k for k, g in self._games.items()
                   if now - g.touched > (self.finished_ttl_s if g.finished else self.idle_ttl_s)]
            for k in old:
                del self._games[k]
        return len(old)

    def _make_room(self) -> None:
        self.prune()
        with self._lock:
            self._make_room_locked()

    def _make_room_locked(self) -> None:
        """Drop games until one more fits: finished ones first, each time the one touched longest ago."""
        while self._games and len(self._games) >= self.max_games:
            del self._games[min(self._games.values(), key=lambda g: (not g.finished, g.touched)).id]
