"""A plain, one-game-at-a-time Python implementation of the rules: the speed baseline.

This is the straightforward model a newcomer would write from RULES.md
(default rules: triple llama returns a chip only, a match must discard, the
game ends at 40): displays are :class:`collections.Counter` objects, the
llama row is a set, dice and deals come from :mod:`random`.  It is complete
and independent of ``lama_env`` on purpose (it shares no code with it), and
it is written to be reasonably efficient, not slowed down: the threshold
player caches its odds per set of held faces.

It is not a home of any rule: nothing in the package calls it, and its rules
(the chip returned by :func:`return_chip`, the points of :func:`score`, the
turn flow) are a second, independent reading of RULES.md, which is what a
baseline of "a plain model" must be (importing the package's rules would make
it part of what it measures).  ``tests/test_batched.py`` keeps the two
readings in agreement: the chip and the points on every input, and the final
totals of its games against the compiled engine's, statistically.

``ThresholdPlayer(t)`` plays like ``threshold:T`` of ``lama_dice.agents.heuristics``:
at the start of a turn it quits iff the chance that the next roll shows no
face of its display is at least ``t``; it discards every card it may and
takes the row card that adds the fewest points (ties: lower face value, L
counted as 10).

Usage::

    python -m lama_dice.bench.naive_engine --games 2000 --seed 1
"""

from __future__ import annotations

import argparse
import random
import time
from collections import Counter
from itertools import product

FACES = ["L", "1", "2", "3", "4", "5", "6"]
DICE = [
    ["1", "2", "3", "4", "L", "L"],
    ["3", "4", "5", "6", "L", "L"],
    ["1", "2", "5", "6", "L", "L"],
]
DECK = ["L"] * 6 + [str(v) for v in range(1, 7) for _ in range(5)]
END_THRESHOLD = 40


def score(display: Counter) -> int:
    """10 for any llama plus each number present once."""
    points = 10 if display["L"] > 0 else 0
    for face, count in display.items():
        if face != "L" and count > 0:
            points += int(face)
    return points


def return_chip(total: int) -> int:
    """The total after returning one chip: a black (10 points) if possible, else a white (1 point)."""
    if total >= 10:
        return total - 10
    if total > 0:
        return total - 1
    return 0


def face_value(face: str) -> int:
    """Points of one card of ``face`` (a llama is 10)."""
    return 10 if face == "L" else int(face)


_ODDS: dict[frozenset, float] = {}  # P(no match) per set of held faces, shared by all players


class ThresholdPlayer:
    """Quit when P(no match on the next roll) >= threshold; discard all; take the cheapest card."""

    def __init__(self, threshold: float) -> None:
        """A player that quits once P(no match) reaches ``threshold``."""
        self.threshold = threshold

    def p_no_match(self, display: Counter) -> float:
        """Probability that no die of the next roll matches a face held in ``display`` (memoized)."""
        held = frozenset(f for f, c in display.items() if c > 0)
        if held not in _ODDS:
            misses = sum(1 for roll in product(*DICE) if not any(f in held for f in roll))
            _ODDS[held] = misses / 216
        return _ODDS[held]

    def wants_to_roll(self, display: Counter) -> bool:
        """Whether to roll again rather than quit the round."""
        return self.p_no_match(display) < self.threshold

    def choose_discard(self, display: Counter, dice: list[str]) -> Counter:
        """Discard the held cards that match the roll: per face, as many as the dice show (at most all held)."""
        shown = Counter(dice)
        return Counter({f: min(n, display[f]) for f, n in shown.items() if display[f] > 0})

    def choose_take(self, display: Counter, options: set[str]) -> str:
        """The row card to take that adds the fewest points (ties: the lowest face value)."""
        base = score(display)

        def cost(face: str) -> tuple[int, int]:
            return score(display + Counter([face])) - base, face_value(face)

        return min(options, key=cost)


class NaiveGame:
    """One game: ``play()`` runs rounds until a total reaches the end threshold."""

    def __init__(self, players: list[ThresholdPlayer], rng: random.Random) -> None:
        """A game between ``players``, all randomness drawn from ``rng``."""
        self.players = players
        self.rng = rng
        self.totals = [0] * len(players)
        self.rounds = 0

    def roll(self) -> list[str]:
        """One roll of the three dice."""
        return [self.rng.choice(die) for die in DICE]

    def play_round(self, start: int) -> None:
        """Play one round from player ``start`` and add its scores to the totals."""
        n = len(self.players)
        deck = DECK[:]
        self.rng.shuffle(deck)
        displays = [Counter(deck[i * 6:(i + 1) * 6]) for i in range(n)]
        row = set(FACES)
        in_round = [True] * n
        went_out = None
        current = start
        while True:
            player = self.players[current]
            display = displays[current]
            if not player.wants_to_roll(display):
                in_round[current] = False
                if not any(in_round):
                    break
            else:
                dice = self.roll()
                if dice == ["L", "L", "L"]:
                    self.totals[current] = return_chip(self.totals[current])
                elif any(display[f] > 0 for f in dice):
                    display.subtract(player.choose_discard(display, dice))
                    if sum(display.values()) == 0:
                        went_out = current
                        break
                else:
                    options = {f for f in dice if f in row}
                    if options and sum(in_round) > 1:
                        face = player.choose_take(display, options)
                        row.remove(face)
                        display[face] += 1
                        if not row:
                            break
                    else:  # bust: the whole row joins the display
                        for face in row:
                            display[face] += 1
                        break
            # next player still in the round
            for _ in range(n):
                current = (current + 1) % n
                if in_round[current]:
                    break
        for i in range(n):
            self.totals[i] += score(displays[i])
        if went_out is not None:
            self.totals[went_out] = return_chip(self.totals[went_out])
        self.rounds += 1

    def play(self) -> list[int]:
        """Play rounds until a total reaches the end threshold; return the final totals."""
        start = 0
        while True:
            self.play_round(start)
            if max(self.totals) >= END_THRESHOLD:
                return self.totals
            start = (start + 1) % len(self.players)


def play_games(games: int, threshold: float = 0.2, players: int = 2, seed: int = 0) -> list[list[int]]:
    """Final totals of ``games`` games between ``players`` threshold players."""
    rng = random.Random(seed)
    results = []
    for _ in range(games):
        game = NaiveGame([ThresholdPlayer(threshold) for _ in range(players)], rng)
        results.append(game.play())
    return results


def main() -> None:
    """Command line: play ``--games`` games and print games/s and the mean totals."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=2000)
    parser.add_argument("--players", type=int, default=2)
    parser.add_argument("--threshold", type=float, default=0.2)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    t0 = time.perf_counter()
    results = play_games(args.games, args.threshold, args.players, args.seed)
    dt = time.perf_counter() - t0
    mean = [sum(r[i] for r in results) / len(results) for i in range(args.players)]
    print(f"{args.games} games in {dt:.2f} s: {args.games / dt:,.0f} games/s; mean totals {mean}")


if __name__ == "__main__":
    main()
