"""Property-based tests: random games with random legal actions, all player counts, both rule settings."""

import random

import numpy as np
from conftest import discarded, play_random
from hypothesis import given, settings
from hypothesis import strategies as st

from lama_env import actions as A
from lama_env.engine import LamaGame, Phase
from lama_env.record import replay
from lama_env.roundend import ended, turns
from lama_env.rules import DECK_COUNTS, RulesConfig

MAX_STEPS_PER_ROUND = 2000
MAX_ROUNDS = 60

games = st.fixed_dictionaries({
    "n": st.integers(1, 6),
    "seed": st.integers(0, 2**32 - 1),
    "triple_llama": st.sampled_from(["chip_only", "also_match"]),
    "must_discard": st.booleans(),
    "end_threshold": st.sampled_from([10, 40, 150]),
    "quit_weight": st.sampled_from([0.02, 0.2, 0.6]),  # how eagerly the random player quits
})
PROFILE = settings(max_examples=80, deadline=None)


def _rules(g: dict) -> RulesConfig:
    return RulesConfig(triple_llama=g["triple_llama"], must_discard=g["must_discard"],
                       end_threshold=g["end_threshold"])


def _pick(rng: random.Random, legal: tuple[int, ...], quit_weight: float) -> int:
    if legal == (A.ROLL, A.QUIT):
        return A.QUIT if rng.random() < quit_weight else A.ROLL
    return rng.choice(legal)


def _check_invariants(game: LamaGame, dealt: np.ndarray) -> None:
    displays = np.array(game.displays)
    row = np.array(game.row)
    # cards are conserved, face by face: dealt + the llama row
    assert (displays.sum(axis=0) + row + np.array(discarded(game)) == dealt + 1).all()
    assert (displays >= 0).all() and set(game.row) <= {0, 1}
    assert all(t >= 0 for t in game.totals)
    legal = game.legal_actions()
    mask = A.legal_mask(legal)
    assert set(np.flatnonzero(mask)) == set(legal)
    if game.game_over:
        assert legal == ()
        return
    # a live player always has a legal action
    assert legal and not game.quit[game.current_player]
    assert game.quit.count(False) >= 1
    if game.phase == Phase.TURN:
        assert legal == (A.ROLL, A.QUIT) and game.dice is None
    elif game.phase == Phase.DISCARD:
        assert all(A.is_discard(a) for a in legal)
    else:
        assert game.phase == Phase.TAKE and game.quit.count(False) > 1  # the last player takes nothing
        assert all(A.is_take(a) and game.row[a - A.TAKE_BASE] for a in legal)


def _play_checked(g: dict, record: bool = True) -> LamaGame:
    """Play ``g`` with random legal actions, checking the invariants before every step and at each round's end.

    Rounds flow: the step that ends a round deals the next one (``rounds_finished`` grows and
    ``last_round`` describes the round it ended).
    """
    game = LamaGame(g["n"], _rules(g), seed=g["seed"], record=record)
    rng = random.Random(g["seed"])
    while True:
        dealt = np.array(game.displays).sum(axis=0)
        assert (dealt <= DECK_COUNTS).all() and dealt.sum() == 6 * g["n"]
        steps, finished = 0, game.rounds_finished
        while game.rounds_finished == finished:
            _check_invariants(game, dealt)
            game.step(_pick(rng, game.legal_actions(), g["quit_weight"]))
            steps += 1
            assert steps < MAX_STEPS_PER_ROUND, "a round did not terminate"
        assert game.rounds_finished == finished + 1
        assert game.last_round["ended_by"] in ("went_out", "row_empty", "bust", "all_quit")
        if game.game_over:
            _check_invariants(game, dealt)  # the game's last round stays on the table
            assert ended(game) == game.last_round
            return game
        # the step that ended the round dealt the next one: a fresh round, its start player to roll or quit
        assert ended(game) is None
        assert game.phase == Phase.TURN and game.dice is None and turns(game) == 0
        assert game.row == (1,) * len(game.row) and not any(discarded(game)) and not any(game.quit)
        assert game.totals == tuple(game.last_round["totals"])
        if game.round_index >= MAX_ROUNDS:
            return game


@PROFILE
@given(games)
def test_random_games_keep_the_invariants_and_replay(g):
    game = _play_checked(g)
    rec = game.to_record()
    assert replay(rec) == game.result()
    assert len(rec["rounds"]) == game.round_index + 1
    if game.game_over:
        assert max(game.totals) >= g["end_threshold"]
        assert game.result()["winners"] == [p for p, t in enumerate(game.totals) if t == min(game.totals)]
    # same seed, same game (and the fast path without a log plays it identically)
    again = _play_checked(g, record=True)
    assert again.to_record() == rec
    assert _play_checked(g, record=False).result() == game.result()


@PROFILE
@given(games, st.integers(0, 10**6))
def test_a_game_in_progress_replays(g, cut):
    """A record cut at any decision replays to the game's result so far (unfinished last round included)."""
    game = LamaGame(g["n"], _rules(g), seed=g["seed"])
    rng = random.Random(cut)
    stop = cut % 150
    for _ in range(stop):
        if game.game_over:
            break
        game.step(_pick(rng, game.legal_actions(), g["quit_weight"]))
    if game.phase in (Phase.DISCARD, Phase.TAKE):
        # a roll waiting for its discard / take is not a whole turn yet: finish it
        game.step(rng.choice(game.legal_actions()))
    result = game.result()
    assert replay(game.to_record()) == result
    if not game.game_over:  # a round that ended has dealt the next one: the record's last round is unfinished
        last = result["rounds"][-1]
        assert last["finished"] is False and last["points"] is None and last["totals"] == list(game.totals)
    # a copy continues exactly like the original
    c = game.clone()
    if not game.game_over:
        play_random(g["n"], g["seed"], game=game, max_rounds=3)
        play_random(g["n"], g["seed"], game=c, max_rounds=3)
        assert c.to_record() == game.to_record()


@settings(max_examples=30, deadline=None)
@given(st.integers(1, 6), st.integers(0, 2**32 - 1))
def test_same_seed_same_record(n, seed):
    a = play_random(n, seed)
    b = play_random(n, seed)
    assert a.to_record() == b.to_record()
    assert len(a.to_record()["rounds"][0]["hands"]) == n
    assert all(len(h) == 6 for h in a.to_record()["rounds"][0]["hands"])


def test_random_play_reaches_every_kind_of_round_end():
    """The random games above are not vacuous: they reach every ending and both triple-llama paths."""
    endings, llama_discards = set(), 0
    for seed in range(40):
        g = {"n": 1 + seed % 6, "seed": seed, "triple_llama": "also_match", "must_discard": seed % 2 == 0,
             "end_threshold": 150, "quit_weight": 0.02 if seed % 3 else 0.6}
        game = _play_checked(g)
        endings |= {r["ended_by"] for r in game.result()["rounds"]}
        llama_discards += sum(t.get("dice") == ["L", "L", "L"] and "discard" in t
                              for r in game.to_record()["rounds"] for t in r["turns"])
    assert endings == {"went_out", "row_empty", "bust", "all_quit"}
    assert llama_discards > 0
