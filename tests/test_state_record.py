"""LamaGame and the compiled record: ``to_state`` is the kernel's record, ``from_state`` plays on as the kernel.

A lockstep differential test: the same actions (random legal ones, and the compiled ``random``
agent's draws) drive a ``LamaGame`` on game ``i``'s streams and the compiled engine's game ``i``
(through :mod:`lama_env._kernel`'s own ``start_streams``, ``new_game``, ``transition``,
``next_round`` and ``native_action``, strung together by the small compiled driver below, as
the batched engine and the vector game string them), and ``lama_env.snapshot.to_state(game)`` is compared
with the kernel's record at every decision, every round, to the game's end.  With ``swap``,
each side now and then continues from the other's record (``from_state`` of the kernel's record,
the kernel on ``to_state``'s), so both conversions are played on, not only compared.
"""

from __future__ import annotations

import copy
import json
import pickle
import random

import numpy as np
import pytest
from conftest import RULES_CONFIG_IDS, RULES_CONFIGS, deal, discarded
from numba import njit

from lama_env import _kernel as K
from lama_env import actions as A
from lama_env import streams as S
from lama_env.engine import GameSetupError, IllegalActionError, LamaGame, Phase
from lama_env.snapshot import StateFormatError, from_state, to_state
from lama_env.streams import Streams

SEED = 2024
#: What the kernel writes only as scratch or for its logs, and what to_state writes neutral.
SCRATCH = ("deck", "cnt", "logpos", "pend", "done_len", "l_player", "l_phase", "l_action", "l_out", "l_detail",
           "l_ended", "l_wo")
_RANDOM_AGENT = K.agents_table(np.array([K.KIND_RANDOM]), np.zeros((1, 128), np.uint8),
                               np.zeros((1, 128, 7), np.int64))


@njit
def _k_new(s, r, mixed, game_id):
    gs = s[0]
    K.start_streams(gs, mixed, game_id)
    K.new_game(gs, r)


@njit
def _k_step(s, r, a):
    """One action of game ``s[0]``, the next round dealt when it ends one (as the compiled engines do)."""
    gs = s[0]
    code = K.transition(gs, r, a)
    if code == K.ROUND_OVER:
        K.next_round(gs, r)
    return code


@njit
def _k_random(s, r, agent):
    """The compiled ``random`` agent's action in game ``s[0]`` (it draws from the game's ``ps``)."""
    gs = s[0]
    st, a = K.native_action(agent[0], gs, r, gs.ps)
    gs.ps = st
    return a


@njit
def _k_legal(s, r):
    gs = s[0]
    count = K.legal(gs, r, -1)[0]
    out = np.empty(count, np.int64)
    for i in range(count):
        out[i] = K.legal(gs, r, i)[1]
    return out


def _neutral(rec: np.ndarray) -> np.ndarray:
    """The kernel's record with to_state's neutral values where its step reads nothing."""
    r = np.array(rec, K.STATE_DTYPE).reshape(())
    for f in SCRATCH:
        r[f] = -1 if f == "pend" else 0
    if r["phase"] == K.TURN:  # the last roll's dice and limits, left over
        r["dice"] = 0
        r["lim"] = 0
    return r


def _differ(a: np.ndarray, b: np.ndarray) -> list[str]:
    return [f for f in K.STATE_DTYPE.names if not np.array_equal(a[f], b[f])]


def _rules_record(n, rules):
    return K.make_rules(n, rules)[()]


def _kernel_game(n, rules, game_id, seed=SEED):
    s = K.new_state(1)
    r = _rules_record(n, rules)
    _k_new(s, r, np.uint64(S.seed_mix(S.base_seed(seed))), game_id)
    return s, r


def _lockstep(n, rules, game_id, swap=False):
    """Play one game both ways; return the number of decisions compared."""
    g = LamaGame(n, rules, seed=SEED, game_id=game_id)
    s, r = _kernel_game(n, rules, game_id)
    pick = random.Random(1000 * n + game_id)
    decisions = 0
    while True:
        got = to_state(g)
        assert got.shape == () and got.dtype == K.STATE_DTYPE
        bad = _differ(got, _neutral(s[0]))
        assert not bad, f"decision {decisions}: to_state() differs from the kernel's record in {bad}"
        if g.game_over:
            break
        assert sorted(_k_legal(s, r).tolist()) == list(g.legal_actions())
        if swap and pick.random() < 0.1:  # the kernel continues from LamaGame's record...
            s[0] = got
        if swap and pick.random() < 0.1:  # ...and LamaGame from the kernel's (its stale dice and limits kept)
            g = from_state(s[0], n, rules)
        if pick.random() < 0.3:  # the compiled random agent, from the policy stream of both
            a = g.sample_action()
            assert _k_random(s, r, _RANDOM_AGENT) == a
        else:
            legal = g.legal_actions()
            a = A.ROLL if legal == (A.ROLL, A.QUIT) and pick.random() < 0.85 else pick.choice(legal)
        g.step(a)
        code = _k_step(s, r, a)
        assert (code == K.GAME_OVER) == g.game_over, decisions
        decisions += 1
    return decisions


@pytest.mark.parametrize("n", range(1, 7))
@pytest.mark.parametrize("config", range(len(RULES_CONFIGS)), ids=RULES_CONFIG_IDS)
def test_to_state_is_the_kernels_record_at_every_decision(n, config):
    decisions = sum(_lockstep(n, RULES_CONFIGS[config], game_id) for game_id in (0, 1, 7))
    assert decisions > 20


@pytest.mark.parametrize("n", [1, 2, 4, 6])
@pytest.mark.parametrize("config", range(len(RULES_CONFIGS)), ids=RULES_CONFIG_IDS)
def test_each_side_continues_from_the_others_record(n, config):
    for game_id in (3, 4):
        _lockstep(n, RULES_CONFIGS[config], game_id, swap=True)


def _play_both(a: LamaGame, b: LamaGame, seed: int) -> None:
    pick = random.Random(seed)
    while not a.game_over:
        assert to_state(a).tobytes() == to_state(b).tobytes()
        assert (a.legal_actions(), a.statistics(), a.totals, a.round_index, a.rounds_finished, discarded(a)) == \
               (b.legal_actions(), b.statistics(), b.totals, b.round_index, b.rounds_finished, discarded(b))
        if pick.random() < 0.3:
            x = a.sample_action()
            assert b.sample_action() == x
        else:
            legal = a.legal_actions()
            x = A.ROLL if legal == (A.ROLL, A.QUIT) and pick.random() < 0.85 else pick.choice(legal)
        a.step(x)
        b.step(x)
    assert b.game_over and to_state(a).tobytes() == to_state(b).tobytes()
    assert (a.totals, a.result()["winners"], a.returns(), a.statistics()) == \
           (b.totals, b.result()["winners"], b.returns(), b.statistics())


@pytest.mark.parametrize("n", [1, 3, 5])
@pytest.mark.parametrize("config", [0, 1, 4], ids=[RULES_CONFIG_IDS[i] for i in (0, 1, 4)])
def test_from_state_of_to_state_plays_on_as_the_game(n, config):
    rules = RULES_CONFIGS[config]
    pick = random.Random(n)
    for game_id in range(3):
        g = LamaGame(n, rules, seed=SEED, game_id=game_id)
        for _ in range(pick.randrange(1, 60)):
            if g.game_over:
                break
            g.step(pick.choice(g.legal_actions()))
        h = from_state(to_state(g), n, rules)
        assert to_state(h).tobytes() == to_state(g).tobytes()
        assert (h.phase, h.current_player, h.dice, h.displays, h.row, h.quit, h.totals, h.statistics()) == \
               (g.phase, g.current_player, g.dice, g.displays, g.row, g.quit, g.totals, g.statistics())
        assert h.game_over == g.game_over
        copies = [h.clone(), pickle.loads(pickle.dumps(h)), LamaGame.deserialize(h.serialize()), copy.deepcopy(h)]
        _play_both(g, h, game_id)
        for c in copies:  # the state API keeps what the record carried in (statistics, the deal)
            _play_both(from_state(to_state(c), n, rules), c, game_id)


def test_a_game_on_given_streams_converts_too():
    st = Streams(*S.start_streams(S.seed_mix(S.base_seed(SEED)), 5))
    g = LamaGame(3, rng=st)
    assert to_state(g).tobytes() == to_state(LamaGame(3, seed=SEED, game_id=5)).tobytes()
    s, _ = _kernel_game(3, RULES_CONFIGS[0], 5)
    assert not _differ(to_state(g), _neutral(s[0]))


def test_at_the_games_end_the_record_is_the_kernels_and_converts_back():
    g = LamaGame(2, {"end_threshold": 5}, seed=1, game_id=0)
    while not g.game_over:
        g.step(A.QUIT if g.phase == Phase.TURN else g.legal_actions()[0])
    rec = to_state(g)
    assert rec["phase"] == K.TURN and int(rec["cur"]) == g.current_player
    h = from_state(rec, 2, {"end_threshold": 5})
    assert h.game_over and h.totals == g.totals and h.returns() == g.returns()
    assert h.result()["winners"] == g.result()["winners"]
    saved = json.loads(h.serialize())  # over, with no round result (the record carried its rounds in)
    assert saved["over"] is True and saved["log"] == []
    assert h.last_round is None
    assert h.legal_actions() == ()
    assert to_state(h).tobytes() == rec.tobytes()


def test_a_seed_alone_is_game_0_of_its_streams_and_a_numpy_generator_is_retired():
    g = LamaGame(2, seed=3)
    rec = to_state(g)
    assert rec.tobytes() == to_state(LamaGame(2, seed=3, game_id=0)).tobytes()
    s, _ = _kernel_game(2, RULES_CONFIGS[0], 0, seed=3)
    assert not _differ(rec, _neutral(s[0]))
    h = from_state(rec, 2)
    assert h.displays == g.displays and h.legal_actions() == g.legal_actions()
    with pytest.raises(GameSetupError, match=r"^a game drawing from a numpy.random.Generator was retired in "
                                             r".*pass seed= and game_id=") as e:
        LamaGame(2, rng=np.random.default_rng(3))
    assert "\n" not in str(e.value)


def test_to_state_refuses_chance_nodes_and_old_pickles_and_state_strings_are_retired():
    g = LamaGame(2, seed=0, game_id=0, chance="explicit")
    with pytest.raises(IllegalActionError, match=r"to_state: the game waits for chance \(card 1 of the deal\)"):
        to_state(g)
    while g.is_chance_node():
        g.sample_chance()
    to_state(g)
    g.step(A.ROLL)
    with pytest.raises(IllegalActionError, match=r"waits for chance \(the dice of player 0's roll\)"):
        to_state(g)
    f = LamaGame(2, seed=0, game_id=0)
    f.step(A.QUIT)
    f.step(A.QUIT)
    deals = [r["hands"] for r in f.to_record()["rounds"]]
    e = LamaGame(2, seed=0, game_id=0, chance="explicit")
    deal(e, *map("".join, deals[0]))
    e.step(A.QUIT)
    e.step(A.QUIT)
    assert e.rounds_finished == 1 and e.is_chance_node()  # the round is over: the next deal waits for chance
    with pytest.raises(IllegalActionError, match=r"to_state: the game waits for chance \(card 1 of the deal\)"):
        to_state(e)
    deal(e, *map("".join, deals[1]))  # the flowing game's next deal, card by card
    assert _differ(to_state(e), to_state(f)) == ["es"]  # the same record but the stream f drew its deal from
    state = LamaGame(2, seed=0, game_id=0).__getstate__()
    state["_hands_known"] = False  # as a pickle written before state records
    old = LamaGame.__new__(LamaGame)
    with pytest.raises(GameSetupError, match=r"^unpickling a LamaGame pickled by an earlier engine was retired in "
                                             r"0\.4\.0 .*to_record\(\)"):
        old.__setstate__(state)
    text = json.loads(f.serialize())
    text["format"] = "lama-dice-state/1"  # a state string as 0.3.0 wrote it (the table field by field)
    with pytest.raises(StateFormatError, match=r"^a lama-dice-state/1 string was retired in 0\.4\.0 .*to_record"):
        LamaGame.deserialize(json.dumps(text))
    with pytest.raises(IllegalActionError, match="a total has reached the end threshold"):
        to_state(LamaGame(2, seed=0, game_id=0, start_points=[40, 0]))


def _good() -> np.ndarray:
    g = LamaGame(3, seed=SEED, game_id=0)
    while g.phase != Phase.DISCARD:
        g.step(A.ROLL if g.phase == Phase.TURN else g.legal_actions()[0])
    return to_state(g)


def _set(rec: np.ndarray, key: str, value) -> np.ndarray:
    r = rec.copy()
    r[key] = value
    return r


@pytest.mark.parametrize(("make", "words"), [
    (lambda r: r["tot"], "must be one record of lama_env._kernel.STATE_DTYPE"),
    (lambda r: np.stack([r, r]), r"got shape \(2,\)"),
    (lambda r: "state", "got 'state'"),
    (lambda r: np.zeros((), np.dtype(K.STATE_DTYPE.descr[:-1])), "must be one record"),
    (lambda r: _set(r, "phase", 5), "phase must hold integers 0..2, got 5"),
    (lambda r: _set(r, "cur", 3), "cur must hold integers 0..2, got 3"),
    (lambda r: _set(r, "row", 200), "row must hold integers 0..127, got 200"),
    (lambda r: _set(r, "tot", [0, -4, 0, 0, 0, 0]), "tot must hold integers 0..2000000000, got -4"),
    (lambda r: _set(r, "quit", [0, 2, 0, 0, 0, 0]), "quit must hold integers 0..1, got 2"),
    (lambda r: _set(r, "nturn", 5000), "nturn must hold integers 0..1000, got 5000"),
    (lambda r: _set(r, "hands", np.full((6, 6), 9)), "hands must hold integers 0..6, got 9"),
    (lambda r: _set(r, "hands", np.zeros((6, 6))), "hands deal 18 cards 'L' but the deck has only 6"),
    (lambda r: _set(r, "active", 2), r"active must count the players who have not quit \(3\), got 2"),
    (lambda r: _set(r, "disp", np.full((6, 7), 5)), "the displays hold more cards 'L'"),
    (lambda r: _set(r, "lim", [3, 3, 3, 3, 3, 3, 3]), "lim must be the roll's discard limits per face"),
    (lambda r: _set(r, "dice", [6, 6, 6]), "dice: die 0 has no face '6'"),
    (lambda r: _set(r, "phase", K.TAKE), "ask for a discard, not a take decision"),
    (lambda r: _set(r, "tot", [50, 0, 0, 0, 0, 0]), "a finished game .* stands at a turn"),
    (lambda r: _set(_set(r, "phase", K.TURN), "row", 0), r"no decision to take: the row is empty"),
])
def test_from_state_refuses_a_bad_record_in_one_line(make, words):
    with pytest.raises(StateFormatError, match=words) as e:
        from_state(make(_good()), 3)
    assert "\n" not in str(e.value)


def test_from_state_checks_its_other_arguments():
    rec = _good()
    with pytest.raises(GameSetupError, match="num_players must be"):
        from_state(rec, 9)
    with pytest.raises(GameSetupError, match="chance must be one of"):
        from_state(rec, 3, chance="often")
    assert to_state(from_state(rec[()], 3)).tobytes() == rec.tobytes()  # an element of a batch
    assert to_state(from_state(rec.reshape(1), 3)).tobytes() == rec.tobytes()
    with pytest.raises(RuntimeError, match="created with record=False"):
        from_state(rec, 3).to_record()


def test_from_state_takes_the_chance_mode_and_refuses_manual_rounds():
    g = LamaGame(2, seed=SEED, game_id=9)
    rec = to_state(g)
    with pytest.raises(GameSetupError, match=r"^rounds='manual' was retired in .*rounds always flow"):
        from_state(rec, 2, chance="explicit", rounds="manual")
    e = from_state(rec, 2, chance="explicit", rounds="flow")
    assert e._explicit and not g._explicit
    e.step(A.ROLL)
    assert e.is_chance_node()
    e.sample_chance()  # the roll drawn from the record's stream, as the sampled game rolls it
    g.step(A.ROLL)
    assert e.dice == g.dice and e.phase == g.phase and e.displays == g.displays


@pytest.mark.parametrize("dealt", [1, 7, 11])
def test_a_state_saved_mid_deal_logs_the_whole_deal(dealt):
    """A game serialized between the cards of an explicit deal logs, once dealt, the cards dealt before it was saved.

    (The log's deal is read from the record's hands: the deck the kernel shuffles in is scratch, not saved.)
    """
    g = LamaGame(2, seed=5, game_id=1, chance="explicit")
    for _ in range(dealt):
        g.sample_chance()
    h = LamaGame.deserialize(g.serialize())
    rng = random.Random(dealt)
    for game in (g, h):
        rng.seed(dealt)
        while not game.game_over:
            if game.is_chance_node():
                outcomes, probs = zip(*game.chance_outcomes(), strict=True)
                game.apply_chance(rng.choices(outcomes, probs)[0])
            else:
                game.step(rng.choice(game.legal_actions()))
    assert h.to_record() == g.to_record()
    assert LamaGame.deserialize(h.serialize()).serialize() == h.serialize()
