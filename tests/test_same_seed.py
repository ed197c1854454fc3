"""Same seed, same game: LamaGame on the compiled engine's streams plays the compiled engine's games.

``LamaGame(seed=s, game_id=g)`` draws the deals and dice of game ``g`` of seed ``s``
of the compiled engine (``play_batch``, and slot ``g`` of a ``VectorGame`` after
``reset(seed=s)``); its ``sample_action`` draws what the compiled ``random`` agent
draws; and the python evaluation backend with ``streams="compiled"`` gives the fast
backend's result exactly, whatever the chunk size and the workers.
"""

import json
import pickle

import numpy as np
import pytest

from lama_dice.agents.base import RandomPolicy
from lama_dice.cli.main import main as cli_main
from lama_dice.evaluation import EvaluationError, evaluate
from lama_env import _kernel as K
from lama_env import streams as S
from lama_env.actions import DISCARD_ACTION, discard_counts, legal_discards, sample_order
from lama_env.batched import NativePolicy, play_batch
from lama_env.engine import GameSetupError, IllegalActionError, LamaGame
from lama_env.snapshot import StateFormatError
from lama_env.vector import VectorGame

CUSTOM = {"triple_llama": "also_match", "must_discard": True, "end_threshold": 70,
          "dice": [["L", "L", "L", "1", "2", "3"], ["L", "L", "L", "4", "5", "6"], ["L", "L", "6", "6", "1", "1"]]}
RULES = [None, {"triple_llama": "also_match", "must_discard": False}, {"end_threshold": 15}, CUSTOM]
OUTCOME_FIELDS = ("seating", "totals", "round_points", "rounds", "busts", "quits", "went_out")


def _play_random(game: LamaGame) -> LamaGame:
    while not game.game_over:
        game.step(game.sample_action())
    return game


@pytest.mark.parametrize("seed", [0, 7, 2**40 + 3])
def test_python_draws_are_the_compiled_draws(seed):
    b = S.base_seed(seed)
    mixed = S.seed_mix(b)
    assert mixed == int(K.seed_mix(np.uint64(b)))
    rec = K.new_state(1)
    for g in (0, 1, 99, 2**31):
        K.start_streams(rec[0], np.uint64(mixed), g)
        assert S.start_streams(mixed, g) == (int(rec[0]["es"]), int(rec[0]["ps"]))
    st = S.start_streams(mixed, 3)[0]
    for k in (1, 2, 5, 36, 216, 1000, 2**31 + 7):
        want = K.below(np.uint64(st), k)
        assert S.below(st, k) == (int(want[0]), int(want[1]))
        st = int(want[0])


@pytest.mark.parametrize("n", [1, 2, 3, 4, 5, 6])
@pytest.mark.parametrize("rules", RULES, ids=["default", "also_match", "t15", "custom"])
def test_a_game_id_plays_the_compiled_engines_game(n, rules):
    res = play_batch(n, [NativePolicy.random("random")], games=12, seed=11, rules=rules)
    for g in range(12):
        game = _play_random(LamaGame(n, rules, seed=11, game_id=g))
        assert list(game.totals) == res.totals[g].tolist()
        assert game.statistics()["rounds"] == res.rounds[g]


@pytest.mark.parametrize("n", [2, 4])
def test_a_vector_game_slot_plays_the_same_game_as_lama_game(n):
    slots = 6
    want = {}
    for g in range(slots):
        rec = _play_random(LamaGame(n, seed=123, game_id=g)).to_record()
        want[json.dumps(rec["rounds"][0]["hands"])] = rec
    vg = VectorGame(slots, num_players=n, seed=0, record=True)
    vg.reset(seed=123)
    seen: dict[str, dict] = {}
    for _ in range(100_000):  # each slot's first game ends (a slot's later games start from other deals)
        vg.step(vg.sample_actions())
        for rec in vg.records():
            seen.setdefault(json.dumps(rec["rounds"][0]["hands"]), rec)
        if set(want) <= set(seen):
            break
    assert set(want) <= set(seen), "a slot's first game is not the LamaGame of its game id"
    for key, rec in want.items():
        assert seen[key] == rec


def test_sample_order_is_the_compiled_random_agents_order():
    for limits, must in [(lim, m) for lim in ((1, 0, 2, 0, 0, 0, 0), (0, 1, 0, 0, 0, 1, 1), (0, 0, 0, 3, 0, 0, 0))
                         for m in (True, False)]:
        order = sample_order(legal_discards(limits, must))
        radix = [sum(c * int(np.prod([m + 1 for m in limits[:f]])) for f, c in enumerate(discard_counts(a)))
                 for a in order]
        assert radix == sorted(radix) and radix[0] == (1 if must else 0)
    assert DISCARD_ACTION[(0,) * 7] == sample_order(legal_discards((1, 0, 2, 0, 0, 0, 0), False))[0]


@pytest.mark.parametrize("agents,rules", [
    (["threshold:0.2", "random"], None),
    (["random", "points:10", "always-roll"], {"triple_llama": "also_match", "must_discard": False}),
    (["random"], None),
    (["threshold:0.35", "random", "random", "threshold:0.2"], CUSTOM),
])
def test_python_backend_on_compiled_streams_gives_the_fast_result(agents, rules):
    fast = evaluate(agents, games=60, seed=5, rules=rules, backend="fast").outcomes
    for chunk_size, workers in ((128, 1), (7, 1), (16, 2)):
        py = evaluate(agents, games=60, seed=5, rules=rules, backend="python", streams="compiled",
                      chunk_size=chunk_size, workers=workers).outcomes
        for f in OUTCOME_FIELDS:
            assert np.array_equal(getattr(py, f), getattr(fast, f)), (f, chunk_size, workers)


def test_numpy_streams_still_depend_on_the_chunk_and_differ_from_fast():
    # the default streams are unchanged (what the figures made so far were measured with)
    a = evaluate(["threshold:0.2", "random"], games=60, seed=5, backend="python").outcomes
    b = evaluate(["threshold:0.2", "random"], games=60, seed=5, backend="python", chunk_size=7).outcomes
    fast = evaluate(["threshold:0.2", "random"], games=60, seed=5, backend="fast").outcomes
    assert not np.array_equal(a.totals, b.totals)
    assert not np.array_equal(a.totals, fast.totals)


def test_cli_streams_compiled_matches_fast(capsys, tmp_path):
    out = {}
    for name, extra in (("fast", ["--backend", "fast"]),
                        ("py", ["--backend", "python", "--streams", "compiled", "--chunk-size", "9"])):
        path = tmp_path / f"{name}.json"
        assert cli_main(["evaluate", "--agents", "threshold:0.2", "random", "--games", "40", "--seed", "5",
                         "--no-progress", "--json", str(path), *extra]) == 0
        out[name] = json.loads(path.read_text())
    assert [a["wins"] for a in out["py"]["agents"]] == [a["wins"] for a in out["fast"]["agents"]]


def test_bad_streams_and_game_id_are_one_line_errors():
    with pytest.raises(EvaluationError, match="streams must be one of"):
        evaluate(["random", "random"], games=2, backend="python", streams="jax")
    for bad in (-1, 1.5, "0", True):
        with pytest.raises(GameSetupError, match="game_id must be an integer >= 0"):
            LamaGame(2, seed=0, game_id=bad)
    with pytest.raises(GameSetupError, match="give rng or game_id, not both"):
        LamaGame(2, rng=np.random.default_rng(0), game_id=0)
    with pytest.raises(IllegalActionError, match="needs a game on the compiled engine's streams"):
        LamaGame(2, seed=0).sample_action()
    g = LamaGame(2, seed=0, game_id=0, chance="explicit")
    with pytest.raises(IllegalActionError, match="no decision is pending"):
        g.sample_action()


def test_compiled_streams_survive_copy_clone_serialize_and_pickle():
    g = LamaGame(3, seed=4, game_id=2)
    for _ in range(9):
        g.step(g.sample_action())
    copies = [g.copy(), g.clone(), LamaGame.deserialize(g.serialize()), pickle.loads(pickle.dumps(g))]
    want = _play_random(g.copy()).to_record()
    for c in copies:
        assert c.on_compiled_streams
        assert _play_random(c).to_record() == want
    state = json.loads(g.serialize())
    assert set(state["random"]) == {"streams"}
    state["random"]["streams"]["es"] = "xyz"
    with pytest.raises(StateFormatError, match=r"random\.streams\.es must be 16 hexadecimal digits"):
        LamaGame.deserialize(json.dumps(state))
    # a planner's own generator takes over (clone(rng=...)): the copy no longer draws the compiled streams
    assert not g.clone(rng=np.random.default_rng(0)).on_compiled_streams


def test_random_policy_draws_from_the_games_policy_stream():
    pol = RandomPolicy()
    pol.seed(1)
    a, b = LamaGame(2, seed=9, game_id=0), LamaGame(2, seed=9, game_id=0)
    while not a.game_over:
        x = pol.act(a, a.legal_actions())
        assert x == b.sample_action()
        a.step(x)
        b.step(x)


def test_explicit_chance_sample_chance_on_compiled_streams_is_seeded():
    recs = []
    for _ in range(2):
        g = LamaGame(2, seed=3, game_id=1, chance="explicit")
        while not g.game_over:
            if g.is_chance_node():
                g.sample_chance()
            else:
                g.step(g.sample_action())
        recs.append(g.to_record())
    assert recs[0] == recs[1]


# ------------------------------------------------------------------ the envs (v1): their seeds play the same games
@pytest.mark.parametrize("n", [1, 2, 3, 5])
def test_aec_env_v1_plays_game_zero_of_its_seed_then_goes_on_along_the_streams(n):
    from lama_env import lama_dice_v1

    env = lama_dice_v1.env(num_players=n, record=True, end_threshold=25, reward="points")
    first = None
    streams = None
    for episode in range(3):
        env.reset(seed=40 + n) if episode == 0 else env.reset()
        if episode == 0:
            first = env.unwrapped.game.to_record()["rounds"][0]["hands"]
            streams = S.Streams.of_game(40 + n, 0)
        game = LamaGame(n, {"end_threshold": 25}, rng=streams, rounds="manual")
        for _agent in env.agent_iter():
            obs, _, term, trunc, _ = env.last()
            if term or trunc:
                env.step(None)
                continue
            a = int(np.flatnonzero(obs["action_mask"])[-1])  # a fixed choice: the largest legal action
            env.step(a)
            game.step(a)
            if game.phase.name == "ROUND_OVER" and not game.game_over:
                game.next_round()
        assert env.unwrapped.game.to_record() == game.to_record()
    assert first == LamaGame(n, seed=40 + n, game_id=0).to_record()["rounds"][0]["hands"]


def test_gym_env_v1_deals_game_zero_of_its_seed():
    import gymnasium as gym

    env = gym.make("LamaDice-v1", num_players=3, opponents=["random"], learner_seat=0)
    for seed in (0, 9, 2**33):
        env.reset(seed=seed)
        game = env.unwrapped.game
        want = LamaGame(3, seed=seed, game_id=0, record=False)
        assert game.displays == want.displays and game.dice == want.dice


def test_retired_env_versions_name_the_new_one():
    import gymnasium as gym

    from lama_env.errors import LamaDiceError
    from lama_env.options import DeprecatedEnvError

    with pytest.raises(gym.error.DeprecatedEnv, match="LamaDice-v1"):
        gym.make("LamaDice-v0")
    with pytest.raises(DeprecatedEnvError, match="lama_dice_v1") as e:
        from lama_env import lama_dice_v0  # noqa: F401
    assert isinstance(e.value, ImportError) and isinstance(e.value, LamaDiceError)
    assert "\n" not in str(e.value)
    with pytest.raises(DeprecatedEnvError, match="lama_dice_v1"):
        import lama_env.lama_dice_v0
    import lama_env

    with pytest.raises(AttributeError):
        _ = lama_env.lama_dice_v9
