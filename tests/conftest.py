"""Shared test helpers: hand-built scenarios and random games.

Hands and dice are written as strings of faces, e.g. ``"L33516"`` or ``"345"``
(``"L"`` is the llama, ``"1"``..``"6"`` the numbers).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator
from typing import Any

from lama_env import actions as A
from lama_env.constants import LOG_ROLL
from lama_env.engine import LamaGame
from lama_env.rules import FACES, NUM_FACES, RulesConfig

#: Dice with three llamas on two dice: triple llamas and matches everywhere.
CUSTOM_DICE = (("L", "L", "L", "1", "2", "3"), ("L", "L", "L", "4", "5", "6"), ("L", "L", "6", "6", "1", "1"))
#: The rules configurations every fast path (the batched kernel, the vector game) is compared with the
#: scalar engine under: the defaults, each [choice] of docs/RULES.md changed, custom dice, and a turn cap
#: so small that many rounds are cut (``ended_by == "turn_cap"``).
RULES_CONFIGS = [
    RulesConfig(),
    RulesConfig(triple_llama="also_match", must_discard=False),
    RulesConfig(triple_llama="chip_only", must_discard=False, end_threshold=15),
    RulesConfig(triple_llama="also_match", must_discard=True, end_threshold=70, dice=CUSTOM_DICE),
    RulesConfig(must_discard=False, max_round_turns=5),
]
#: Test ids of :data:`RULES_CONFIGS`.
RULES_CONFIG_IDS = ["default", "also_match-free", "t15", "custom-dice", "cap5"]


def counts(faces: str) -> tuple[int, ...]:
    """Cards per face index of a face string, e.g. ``counts("L55") == (1, 0, 0, 0, 0, 2, 0)``."""
    c = [0] * NUM_FACES
    for f in faces:
        c[FACES.index(f)] += 1
    return tuple(c)


def scenario(*hands: str, rules: Any = None, start_points=None, start_player: int = 0,
             chance: str = "explicit") -> LamaGame:
    """A game whose first round deals ``hands`` (one face string per player).

    ``chance="explicit"`` by default: after a round ends the game waits at the next deal's chance
    node (:func:`deal` gives it the scenario's hands); the ended round is ``game.last_round``.
    """
    return LamaGame(len(hands), rules, seed=0, hands=[list(h) for h in hands],
                    start_points=start_points, start_player=start_player, chance=chance)


def deal(game: LamaGame, *hands: str) -> None:
    """Deal the next round's ``hands`` (one face string per player) at the deal's chance node, card by card."""
    for hand in hands:
        for face in hand:
            game.apply_chance(face)


def roll(game: LamaGame, dice: str) -> None:
    """The current player rolls the injected ``dice`` (die 0, 1, 2)."""
    game.step(A.ROLL, dice=list(dice))


def discard(game: LamaGame, faces: str) -> None:
    """Discard the multiset ``faces`` (``""`` = discard nothing)."""
    game.step(A.discard_action(counts(faces)))


def take(game: LamaGame, face: str) -> None:
    game.step(A.take_action(FACES.index(face)))


def discard_set(*multisets: str) -> set[int]:
    """Discard actions of the given face strings."""
    return {A.discard_action(counts(m)) for m in multisets}


def discarded(game: LamaGame) -> tuple[int, ...]:
    """The cards discarded in the round under way, per face: dealt or in the row at first, neither held nor there."""
    if isinstance(game._chance, tuple):  # a deal under way: nothing discarded yet
        return (0,) * NUM_FACES
    dealt = game._rec["hands"][0, :game.num_players].ravel().tolist()
    return tuple(dealt.count(f) + 1 - game.row[f] - sum(d[f] for d in game.displays) for f in range(NUM_FACES))


def round_triples(game: LamaGame) -> tuple[int, ...]:
    """The triple llamas of the round under way (the last round's once the game is over), from the game's log."""
    if game.game_over:
        return game.last_round["triple_llamas"] if game.last_round else (0,) * game.num_players
    from lama_env.constants import LOG_END
    from lama_env.gamelog import iter_log

    counts = [0] * game.num_players
    for _, tag, f in iter_log(game._clog[0, :game._rec["logpos"][0]], game.num_players):
        if tag == LOG_END:  # (a round before this one)
            counts = [0] * game.num_players
        elif tag == LOG_ROLL and f[1:4].tolist() == [0, 0, 0] and f[4] < 4:  # (5, 6: a roll from_state carried in)
            counts[int(f[0])] += 1
    return tuple(counts)


def play_random(num_players: int, seed: int, rules: Any = None, *, record: bool = True,
                max_rounds: int = 200, game: LamaGame | None = None) -> LamaGame:
    """Play a game with uniformly random legal actions (deals and dice from ``seed``)."""
    g = game if game is not None else LamaGame(num_players, rules, seed=seed, record=record)
    pick = random.Random(seed)
    while not g.game_over and g.round_index < max_rounds:
        g.step(pick.choice(g.legal_actions()))
    return g


def random_moves(game: LamaGame, choose: Callable[[list[int]], int], limit: int = 100_000) -> Iterator[LamaGame]:
    """``game`` before each of at most ``limit`` moves, and at its end.

    A chance node is sampled; a decision plays ``choose(game.legal_actions())``.
    """
    for _ in range(limit):
        yield game
        if game.game_over:
            return
        if game.is_chance_node():
            game.sample_chance()
        else:
            game.step(choose(game.legal_actions()))


def check_seed_plays_game_0(record: dict, seed: int) -> None:
    """Same seed, same game: ``record``'s deals and dice are those of game 0 of ``seed``'s compiled streams.

    Its actions are played on ``LamaGame(seed=seed, game_id=0)``, which draws every deal and die
    itself (nothing injected): the record must be that game's record, and its first deal game 0's
    of the fast engine (``play_batch``, and so ``evaluate --backend fast`` and the envs' ``reset(seed)``).
    """
    from lama_env.batched import NativePolicy, play_batch

    n, rules = record["players"], RulesConfig.from_dict(record["rules"])
    g = LamaGame(n, rules, seed=seed, game_id=0)
    for r in record["rounds"]:
        for t in r["turns"]:
            if t["action"] == "quit":
                g.step(A.QUIT)
                continue
            g.step(A.ROLL)  # (another roll than the record's: the decision below is refused, or the records differ)
            if "discard" in t:
                g.step(A.DISCARD_ACTION[tuple(t["discard"].count(f) for f in FACES)])
            elif "take" in t:
                g.step(A.TAKE_BASE + FACES.index(t["take"]))
    assert g.to_record()["rounds"][:len(record["rounds"])] == record["rounds"]
    fast = play_batch(n, [NativePolicy.random("random")], games=1, seed=seed, rules=rules, log_games=[0])
    assert fast.record(0)["rounds"][0]["hands"] == record["rounds"][0]["hands"]
