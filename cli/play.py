r"""A person plays against agents in the terminal (``lama-dice play``).

:class:`TerminalGame` runs the game loop over any input and output streams, so
that tests drive it with scripted keys::

    game = LamaGame(2, seed=1, game_id=0)  # as `lama-dice play` makes it
    players, specs = resolve_seats(2, ["random"], human=0)
    opponents = make_opponents(specs, seed=1, num_players=players)
    result = TerminalGame(game, opponents, human=0, stdin=io.StringIO("r\n1\n" * 500),
                          console=Console(file=io.StringIO(), width=100)).run()

Keys (one per line, case does not matter): ``r`` roll, ``q`` quit; after a
roll the discard or take choices are numbered (``1`` is the largest discard,
``a`` discards all the dice allow); Enter between rounds.  A wrong key is
explained and asked again.  End of input (Ctrl-D) or Ctrl-C ends the game
cleanly; the record is saved either way when a path is given.  Rounds flow on in
the game (the step that ends a round deals the next); the loop pauses at each
round's end on the table as the round ended (:class:`lama_env.roundend.RoundEnd`).

The rules all come from the engine: legal choices from
:meth:`LamaGame.legal_actions`, their names from :func:`lama_env.actions.describe`.
"""

from __future__ import annotations

import json
import os
import signal
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TextIO

import numpy as np
from rich.console import Console
from rich.rule import Rule
from rich.text import Text

from lama_dice.agents.base import Policy
from lama_dice.atomic import WriteError, write_text
from lama_env import actions as A
from lama_env.engine import LamaGame, Phase
from lama_env.errors import LamaDiceError
from lama_env.odds import p_no_match
from lama_env.roundend import RoundEnd, step_with_round_end
from lama_env.rules import FACES, score_display
from lama_env.safetext import safe_text
from lama_env.transitions import WENT_OUT, apply_discard, apply_take

from .tui import Snapshot, cards_text, dice_text, game_summary, round_summary, snapshot, table_view, turn_text

#: The opponent when none is given: the first of these that is registered.
DEFAULT_OPPONENTS: tuple[str, ...] = ("solo-optimal", "random")


class PlayError(LamaDiceError, ValueError):
    """Bad arguments for a terminal game (players, seat, opponents)."""


class _EndOfInput(Exception):  # noqa: N818 (a control-flow signal like StopIteration, not an error)
    """The input stream ended (Ctrl-D, or a script that ran out of keys)."""


@dataclass
class PlayResult:
    """How a terminal game ended.

    Attributes:
        game: the game as it stands.
        finished: whether the game was played to its end.
        stopped: ``"eof"`` (input ended) or ``"interrupt"`` (Ctrl-C) if it was stopped early, else None.
        saved: the path the record was written to, else None.
        save_error: why the record could not be written, else None.
    """

    game: LamaGame
    finished: bool
    stopped: str | None
    saved: str | None
    save_error: str | None = None

    @property
    def exit_code(self) -> int:
        """130 when stopped by Ctrl-C (the shell's convention), 1 if the record could not be saved, else 0."""
        return 130 if self.stopped == "interrupt" else 1 if self.save_error else 0


# ---------------------------------------------------------------- set-up
def default_opponent() -> str:
    """``"solo-optimal"`` if that agent is registered, else ``"random"``."""
    from lama_dice.agents.registry import registered

    names = registered()
    return next((s for s in DEFAULT_OPPONENTS if s in names), "random")


def resolve_seats(players: int | None, specs: Sequence[str] | None, human: int) -> tuple[int, dict[int, str]]:
    """Number of players and the opponent spec of each seat but the human's.

    Args:
        players: the player count, or None for ``len(specs) + 1`` (2 without specs).
        specs: one spec for every opponent, or one per opponent seat (in seat order);
            None for :func:`default_opponent`.
        human: the human's seat.

    Raises:
        PlayError: the counts do not fit together or the seat is out of range.
    """
    specs = list(specs or [])
    if players is None:
        players = len(specs) + 1 if len(specs) > 1 else 2
    if not 1 <= players <= 6:
        raise PlayError(f"--players must be 1..6, got {players}")
    if not 0 <= human < players:
        raise PlayError(f"--seat must be 0..{players - 1}, got {human}")
    seats = [p for p in range(players) if p != human]
    if not seats:
        if specs:
            raise PlayError("a solo game (--players 1) has no opponents")
        return players, {}
    if not specs:
        specs = [default_opponent()]
    if len(specs) == 1:
        specs = specs * len(seats)
    if len(specs) != len(seats):
        raise PlayError(f"--opponents gives {len(specs)} specs for {len(seats)} opponents: "
                        "give one spec for all, or one per opponent")
    return players, dict(zip(seats, specs, strict=True))


def make_opponents(specs: Mapping[int, str], seed: int | None = None,
                   num_players: int | None = None) -> dict[int, Policy]:
    """Build each seat's agent with :func:`lama_dice.agents.registry.make_agent` (seeded per seat from ``seed``).

    With ``num_players``, an agent that cannot play a game of that many players (a
    network trained for another player count) is refused here, before the first move.
    """
    from lama_dice.agents.registry import make_agent

    out = {}
    for p, spec in specs.items():
        s = None if seed is None else int(np.random.SeedSequence([seed, p]).generate_state(1)[0])
        agent = make_agent(spec, seed=s)
        check = getattr(agent, "check_compatible", None)
        if num_players is not None and check is not None:
            check(num_players)
        out[p] = agent
    return out


def player_names(players: int, human: int | None, specs: Mapping[int, str]) -> list[str]:
    """Display names: ``"You"`` for the human, ``"P<seat> <agent>"`` for the others."""
    names = []
    for p in range(players):
        if p == human:
            names.append("You")
        else:
            spec = specs.get(p, "")
            if spec.startswith("ppo:"):  # a path: keep it short
                spec = "ppo:" + os.path.splitext(os.path.basename(spec[4:].rstrip("/\\")))[0]
            names.append(f"P{p} {spec}".strip())
    return names


# ---------------------------------------------------------------- turns and choices (shared with the web app)
def play_agent_turn(game: LamaGame, agent: Policy) -> RoundEnd | None:
    """Play one whole turn of the current player with ``agent``: roll or quit, then its discard or take.

    Returns the table of the round's end if the turn ended a round and the game goes on (else None).
    """
    end = step_with_round_end(game, agent.act(game, game.legal_actions()))
    if end is None and game.phase in (Phase.DISCARD, Phase.TAKE):
        end = step_with_round_end(game, agent.act(game, game.legal_actions()))
    return end


def ordered_choices(game: LamaGame) -> list[int]:
    """The legal actions in the order a person is offered them: takes by face, the largest discard first."""
    legal = list(game.legal_actions())
    if game.phase == Phase.DISCARD:
        legal.sort(key=lambda a: (-sum(A.discard_counts(a)), a))
    else:
        legal.sort()
    return legal


def choice_outcome(game: LamaGame, action: int) -> str:
    """What an action of the current player leads to, in a few words.

    A discard or take: ``"goes out!"`` or ``"display then scores N"``; a roll: how likely it is to match nothing
    (``"a bust 12.5% of the time"`` for the last player in the round); a quit: what the display scores.
    """
    p = game.current_player
    disp = game.displays[p]
    if action == A.ROLL:
        chance = 100 * p_no_match(disp, game.rules)
        if game.quit.count(False) == 1:
            return f"a bust {chance:.1f}% of the time"
        return f"matches nothing {chance:.1f}% of the time (then you take a row card)"
    if action == A.QUIT:
        return f"stop for this round; your display scores {score_display(disp)}"
    if A.is_discard(action):
        after, ended = apply_discard(disp, action)
    else:
        after, _, ended = apply_take(disp, game.row, action)
    return "goes out!" if ended == WENT_OUT else f"display then scores {score_display(after)}"


def choice_label(action: int) -> str:
    r"""A button's name for an action.

    ``Roll``, ``Quit``, ``Take 4``, ``Take L``; a discard names the count of each face: ``Discard 2 \u00d7 5``
    (two 5s), ``Discard L, 2 \u00d7 3``, ``Discard nothing``.  Faces read as the cards print them (``L``, never
    ``l``): only the first letter of the word is raised.
    """
    if not A.is_discard(action):
        words = A.describe(action)
        return words[:1].upper() + words[1:]
    counts = A.discard_counts(action)
    parts = [FACES[f] if k == 1 else f"{k} \u00d7 {FACES[f]}" for f, k in enumerate(counts) if k]
    return "Discard " + (", ".join(parts) if parts else "nothing")


# ---------------------------------------------------------------- records
def write_record(record: dict, path: str) -> None:
    """Write ``record`` as JSON to ``path`` atomically (:func:`lama_dice.atomic.write_text`).

    Raises:
        lama_dice.atomic.WriteError: it could not be written (one line; the old file, if any, is kept).
    """
    write_text(path, json.dumps(record, indent=1) + "\n")


# ---------------------------------------------------------------- the game loop
class TerminalGame:
    """The interactive loop: the human's prompts, the opponents' moves, the summaries.

    Args:
        game: a fresh :class:`LamaGame` (or one in progress).
        opponents: the agent of every seat but the human's.
        human: the human's seat.
        stdin: where keys are read from (one per line).
        console: where the game is drawn.
        save: write the record here when the game ends or is stopped.
        names: display names per seat (default: :func:`player_names`).
        seed: the seed the game and agents were made with (None: fresh randomness), kept in the record.
        specs: the agent spec per opponent seat, kept in the record (default: each agent's ``spec``).
    """

    def __init__(
        self,
        game: LamaGame,
        opponents: Mapping[int, Policy],
        *,
        human: int = 0,
        stdin: TextIO,
        console: Console,
        save: str | None = None,
        names: Sequence[str] | None = None,
        seed: int | None = None,
        specs: Mapping[int, str] | None = None,
    ) -> None:
        """Check the seats and the save path (see the class docstring).

        Raises:
            PlayError: a seat but the human's has no agent, or ``save`` is a folder or in no folder.
        """
        missing = [p for p in range(game.num_players) if p != human and p not in opponents]
        if missing:
            raise PlayError(f"no agent for seat {missing[0]}")
        if save:
            folder = os.path.dirname(os.path.abspath(save))
            if not os.path.isdir(folder) or os.path.isdir(save):
                raise PlayError(f"cannot save the record to {save}: "
                                + ("it is a folder" if os.path.isdir(save) else f"no folder {folder}"))
        self.game = game
        self.opponents = dict(opponents)
        self.human = human
        self.stdin = stdin
        self.console = console
        self.save = save
        self.specs = dict(specs) if specs is not None else {
            p: str(getattr(a, "spec", type(a).__name__)) for p, a in opponents.items()}
        self.seed = seed
        self.names = [safe_text(x) for x in (names if names is not None else
                                             player_names(game.num_players, human, self.specs))]
        self._dirty = True  # something happened since the table was last drawn
        self._last_dice: list[str] | None = None
        self._round_start = game.totals
        self._paused: RoundEnd | None = None  # the round whose end the loop waits on (Enter = next round)
        self._save_error: str | None = None

    # -------------------------------------------------------------- running
    def run(self) -> PlayResult:
        """Play until the game ends, the input ends or Ctrl-C; save the record if asked."""
        stopped = None
        try:
            self._intro()
            self._loop()
        except _EndOfInput:
            stopped = "eof"
        except KeyboardInterrupt:
            stopped = "interrupt"
        finally:
            saved = self._save(final=True)
        if stopped:
            why = "end of input" if stopped == "eof" else "Ctrl-C"
            self.console.print()
            at = self._paused or self.game  # stopped at a round's end: that round (the next one is not shown)
            self.console.print(Text(f"Game stopped ({why}) in round {at.round_index + 1}.", style="bold"))
        if saved:
            self.console.print(Text(f"Record saved to {saved}  (watch it again: lama-dice show {saved})"),
                               soft_wrap=True)  # keep the path in one piece
        if self._save_error:
            self.console.print(Text(f"Could not save the record: {self._save_error}", style="bold red"),
                               soft_wrap=True)
        return PlayResult(self.game, self.game.game_over, stopped, saved, self._save_error)

    def record(self) -> dict:
        """The game so far as a ``lama-dice-record/2`` record: who played (names, specs), the seed, the version."""
        from lama_env import __version__
        from lama_env.record import with_about

        n = self.game.num_players
        rec = self.game.to_record()
        if self._paused is not None:  # the next round is dealt but not shown yet: not in the record
            del rec["rounds"][-1]
        return with_about(rec, names=self.names, agents=[self.specs.get(p) for p in range(n)],
                          seed=self.seed, version=__version__)

    def _save(self, final: bool = False) -> str | None:
        """Write the record so far (at every prompt, and at the end): a game stopped anyhow leaves its record.

        The final write ignores Ctrl-C (a wrapper such as ``timeout --foreground`` sends SIGINT
        twice: the second must not cut the write short); the one before each prompt means that
        even a Ctrl-C that lands before it leaves the record up to the last question.
        """
        if not self.save:
            return None
        quiet = final and threading.current_thread() is threading.main_thread()
        before = signal.signal(signal.SIGINT, signal.SIG_IGN) if quiet else None
        try:
            write_record(self.record(), self.save)
        except OSError as e:
            self._save_error = str(e) if isinstance(e, WriteError) else f"{self.save}: {e.strerror or e}"
            return None
        finally:
            if quiet:
                signal.signal(signal.SIGINT, signal.default_int_handler if before is None else before)
        self._save_error = None
        return self.save

    def _intro(self) -> None:
        g = self.game
        who = ", ".join(self.names[p] for p in range(g.num_players) if p != self.human) or "nobody (solo)"
        self.console.print(Text.assemble(("Don't L.L.A.M.A. Dice", "bold"), f" — you are seat {self.human}, "
                                         f"against {who}. Lowest total wins; the game ends when a total "
                                         f"reaches {g.rules.end_threshold}."))
        self.console.print(Text("Keys: r = roll, q = quit, numbers for choices, Enter to go on; "
                                "Ctrl-C or Ctrl-D leaves.", style="dim"))
        self._round_header()

    def _loop(self) -> None:
        g = self.game
        while True:
            if g.game_over:
                self.console.print(game_summary(g, self.names))
                return
            end = self._human_turn() if g.current_player == self.human else self._opponent_turn()
            if end is not None or g.game_over:
                self.console.print(round_summary(end or g, self.names, self._round_start))
            if end is not None:  # rounds flow on: pause on the round's end, then show the next deal
                self._paused = end
                self._ask_enter("Enter = next round")
                self._paused = None
                self._round_header()

    def _round_header(self) -> None:
        g = self.game
        self._round_start = g.totals
        self._last_dice = None
        self.console.print(Rule(Text(f"Round {g.round_index + 1} · first to play: {self.names[g.start_player]}"),
                                style="cyan"))
        self.console.print(table_view(g, self.names, you=self.human))
        self._dirty = False

    # -------------------------------------------------------------- turns
    def _opponent_turn(self) -> RoundEnd | None:
        g = self.game
        before = snapshot(g)
        end = play_agent_turn(g, self.opponents[g.current_player])
        self._report(before, end)
        return end

    def _human_turn(self) -> RoundEnd | None:
        g = self.game
        p = self.human
        if self._dirty:
            self.console.print(table_view(g, self.names, dice=self._last_dice, you=p))
            self._dirty = False
        disp = g.displays[p]
        chance = p_no_match(disp, g.rules)
        miss = "busts" if g.quit.count(False) == 1 else "matches nothing"
        hint = f"(your display scores {score_display(disp)}; a roll {miss} {100 * chance:.0f}% of the time)"
        before = snapshot(g)
        key = self._ask("Your turn: r = roll, q = quit", {"r": A.ROLL, "roll": A.ROLL, "q": A.QUIT, "quit": A.QUIT},
                        "type r to roll or q to quit", hint)
        end = step_with_round_end(g, key)
        if end is None and g.phase in (Phase.DISCARD, Phase.TAKE):
            end = self._choose(p)
        self._report(before, end)
        return end

    def _choose(self, p: int) -> RoundEnd | None:
        """The discard or take after the human's roll."""
        g = self.game
        disp = g.displays[p]
        dice = g.dice or ()
        take = g.phase == Phase.TAKE
        line = Text("You rolled ").append_text(dice_text(dice))
        line.append("   your display ").append_text(cards_text(disp, [f for f in set(dice) if disp[f]]))
        self.console.print(line)
        legal = ordered_choices(g)
        if take:
            self.console.print("Nothing matches your display: you must take a card from the llama row.")
        labels = [f"{A.describe(a):<16} → {choice_outcome(g, a)}" for a in legal]
        if len(legal) == 1:
            self.console.print(Text(f"Only one choice: {' '.join(labels[0].split())}.", style="italic"))
            return step_with_round_end(g, legal[0])
        for i, label in enumerate(labels, 1):
            self.console.print(f"  {i}  {label}")
        keys = {str(i): a for i, a in enumerate(legal, 1)}
        valid = f"type a number 1-{len(legal)}"
        if not take:
            keys["a"] = keys["all"] = legal[0]
            valid += " (a = discard all you can)"
        return step_with_round_end(g, self._ask("Your choice" + (", a = all" if not take else ""), keys, valid))

    def _report(self, before: Snapshot, end: RoundEnd | None) -> None:
        """Print the line of the turn just completed (from the game's record; ``end``: the round it ended)."""
        g = self.game
        turn = g.to_record()["rounds"][-2 if end is not None else -1]["turns"][-1]  # (a round's end: the next dealt)
        self.console.print(turn_text(turn, before, end or g, self.names))
        self._last_dice = turn.get("dice")
        self._dirty = True

    # -------------------------------------------------------------- input
    def _readline(self, prompt: str) -> str:
        self._save()  # the record up to this question, before the program waits
        self.console.print(Text(prompt + " > ", style="bold cyan"), end="")
        self.console.file.flush()
        line = self.stdin.readline()
        if not line:
            raise _EndOfInput
        if not self.console.is_terminal:  # echo scripted keys so that a transcript reads well
            self.console.print(line.rstrip("\r\n"), markup=False, highlight=False)
        return line.strip().lower()

    def _ask(self, prompt: str, keys: Mapping[str, int], valid: str, hint: str | None = None) -> int:
        """Ask until a line is one of ``keys``; explain a wrong key."""
        if hint:
            self.console.print(Text(hint, style="dim"))
        while True:
            key = self._readline(prompt)
            if key in keys:
                return keys[key]
            what = f"'{key}' is not a choice here" if key else "Nothing typed"
            self.console.print(Text(f"{what}: {valid}.", style="yellow"))

    def _ask_enter(self, prompt: str) -> None:
        self._readline(prompt)
