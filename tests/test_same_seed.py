"""Same seed, same game: LamaGame on the compiled engine's streams plays the compiled engine's games.

``LamaGame(seed=s, game_id=g)`` draws the deals and dice of game ``g`` of seed ``s``
of the compiled engine (``play_batch``, and slot ``g`` of a ``VectorGame`` after
``reset(seed=s)``); its ``sample_action`` draws what the compiled ``random`` agent
draws; and the python evaluation backend, on the compiled streams (its only ones: the
NumPy streams are retired), gives the fast backend's result exactly, whatever the chunk
size and the workers, and any agent without randomness of its own one result whatever
the chunk size and the workers.
"""

import json
import pickle

import numpy as np
import pytest

from lama_dice.agents.base import RandomPolicy
from lama_dice.cli.main import main as cli_main
from lama_dice.evaluation import evaluate
from lama_env import _kernel as K
from lama_env import streams as S
from lama_env.actions import DISCARD_ACTION, discard_counts, legal_discards, sample_order
from lama_env.batched import NativePolicy, play_batch
from lama_env.engine import GameSetupError, IllegalActionError, LamaGame
from lama_env.errors import RetiredError
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
        py = evaluate(agents, games=60, seed=5, rules=rules, backend="python",
                      chunk_size=chunk_size, workers=workers).outcomes
        for f in OUTCOME_FIELDS:
            assert np.array_equal(getattr(py, f), getattr(fast, f)), (f, chunk_size, workers)


@pytest.mark.parametrize("streams", ["numpy", "compiled"])
def test_the_streams_argument_is_retired_in_one_line(streams):
    """``evaluate(streams=...)`` (the NumPy streams' switch): one line naming the replacement and 0.1.0."""
    with pytest.raises(RetiredError, match=r"streams.* was retired in 0\.2\.0 \(0\.1\.0 was the last version "
                                           r"with it\): the compiled engine's streams are the only ones") as e:
        evaluate(["threshold:0.2", "random"], games=2, seed=5, backend="python", streams=streams)
    assert "\n" not in str(e.value)


@pytest.mark.parametrize("command", [
    ["evaluate", "--agents", "threshold:0.2", "random", "--games", "4"],
    ["evaluate", "--league", "random", "threshold:0.2", "--games", "4"],
    ["exploit", "random"],
    ["curves", "runs/none", "--evaluate", "random"],
])
@pytest.mark.parametrize("value", [["numpy"], ["compiled"], []])
def test_the_streams_option_is_retired_in_one_line(capsys, command, value):
    """``--streams`` on every command that had it: a usage error of one line naming the replacement."""
    with pytest.raises(SystemExit) as e:
        cli_main([*command, "--streams", *value])
    assert e.value.code == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "Traceback" not in err
    assert (f"lama-dice {command[0]}: error: --streams (the python backend's NumPy streams) was retired in 0.2.0 "
            "(0.1.0 was the last version with it): the compiled engine's streams are the only ones") in err
    assert "drop it" in err


def test_the_streams_option_is_hidden_from_help(capsys):
    with pytest.raises(SystemExit):
        cli_main(["evaluate", "--help"])
    assert "--streams" not in capsys.readouterr().out


# ----------------------------------------------------------------- the default streams: one game everywhere
def _report(res):
    """Everything an evaluation reports but the backend's name and the time."""
    data = res.to_json()
    data.pop("backend")
    return data, {f: getattr(res.outcomes, f).tolist() for f in OUTCOME_FIELDS}


@pytest.mark.parametrize("agents,games", [
    (["threshold:0.2", "random"], 400),
    (["threshold:0.2", "random", "points:10"], 300),
])
def test_the_default_plays_the_same_games_on_either_backend(agents, games):
    """``evaluate`` with no ``streams=``: the python backend gives the fast backend's report, figure for figure."""
    fast = evaluate(agents, games=games, seed=5, backend="fast")
    py = evaluate(agents, games=games, seed=5, backend="python")
    assert (fast.backend, py.backend) == ("fast", "python")
    assert _report(py) == _report(fast)
    if len(agents) == 2:  # the example: 367 vs 370 wins before
        assert [a.wins for a in py.agents] == [a.wins for a in fast.agents] == [370.0, 30.0]


def test_the_default_gives_one_result_whatever_the_chunk_size_and_the_workers():
    agents = ["threshold:0.2", "random", "always-roll"]
    want = _report(evaluate(agents, games=150, seed=11, backend="fast"))
    for chunk_size, workers in ((1, 1), (7, 1), (64, 1), (7, 0), (64, 2), (128, 2)):
        got = evaluate(agents, games=150, seed=11, backend="python", chunk_size=chunk_size, workers=workers)
        assert _report(got) == want, (chunk_size, workers)


DETERMINISTIC_POLICY = '''
from lama_dice.agents.base import Policy
from lama_env import actions as A


class QuitAtFour(Policy):
    """Quits once it holds four cards or more, else plays its last legal action (no randomness of its own)."""

    def act(self, game, legal):
        if A.QUIT in legal and sum(game.displays[game.current_player]) >= 4:
            return A.QUIT
        return legal[-1]
'''


@pytest.mark.parametrize("agents", [
    ["lookahead", "random"],
    ["python:quit_at_four.py:QuitAtFour", "threshold:0.2"],
    ["ppo:2p", "random"],
])
def test_a_python_backend_agent_gives_one_result_whatever_the_chunk_size_and_the_workers(agents, tmp_path,
                                                                                           monkeypatch):
    """Agents only the python backend plays: on the default streams, chunks and workers change nothing."""
    (tmp_path / "quit_at_four.py").write_text(DETERMINISTIC_POLICY, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    games = 24 if agents[0] == "lookahead" else 60
    runs = [evaluate(agents, games=games, seed=3, chunk_size=c, workers=w) for c, w in ((128, 1), (1, 1), (5, 2))]
    assert {r.backend for r in runs} == {"python"}
    first = _report(runs[0])
    for r in runs[1:]:
        assert _report(r) == first


def test_the_cli_default_gives_the_fast_result_on_the_python_backend(tmp_path):
    """``lama-dice evaluate --agents threshold:0.2 random --games 400 --seed 5``, either backend, any chunk size."""
    out = {}
    for name, extra in (("fast", ["--backend", "fast"]), ("py", ["--backend", "python"]),
                        ("py9", ["--backend", "python", "--chunk-size", "9", "--workers", "2"])):
        path = tmp_path / f"{name}.json"
        assert cli_main(["evaluate", "--agents", "threshold:0.2", "random", "--games", "400", "--seed", "5",
                         "--no-progress", "--json", str(path), *extra]) == 0
        data = json.loads(path.read_text())
        assert data.pop("backend") == ("fast" if name == "fast" else "python")
        out[name] = data
    assert out["py"] == out["fast"] == out["py9"]
    assert [a["wins"] for a in out["fast"]["agents"]] == [370.0, 30.0]


def test_a_league_on_the_default_streams_is_the_same_on_either_backend():
    from lama_dice.evaluation import league

    pool = ["random", "threshold:0.2", "points:10"]
    fast = league(pool, games=20, seed=2, backend="fast").to_json()
    py = league(pool, games=20, seed=2, backend="python", chunk_size=7).to_json()
    assert fast.pop("backend") == "fast" and py.pop("backend") == "python"
    assert py == fast


def test_cli_python_backend_matches_fast(capsys, tmp_path):
    out = {}
    for name, extra in (("fast", ["--backend", "fast"]),
                        ("py", ["--backend", "python", "--chunk-size", "9"])):
        path = tmp_path / f"{name}.json"
        assert cli_main(["evaluate", "--agents", "threshold:0.2", "random", "--games", "40", "--seed", "5",
                         "--no-progress", "--json", str(path), *extra]) == 0
        out[name] = json.loads(path.read_text())
    assert [a["wins"] for a in out["py"]["agents"]] == [a["wins"] for a in out["fast"]["agents"]]


def test_bad_game_id_is_a_one_line_error():
    for bad in (-1, 1.5, "0", True):
        with pytest.raises(GameSetupError, match="game_id must be an integer >= 0"):
            LamaGame(2, seed=0, game_id=bad)
    with pytest.raises(GameSetupError, match="give rng or game_id, not both"):
        LamaGame(2, rng=S.Streams.of_game(0, 0), game_id=0)
    assert LamaGame(2, seed=0).sample_action() == LamaGame(2, seed=0, game_id=0).sample_action()  # seed alone: game 0
    g = LamaGame(2, seed=0, game_id=0, chance="explicit")
    with pytest.raises(IllegalActionError, match="no decision is pending"):
        g.sample_action()


def test_compiled_streams_survive_clone_serialize_and_pickle():
    g = LamaGame(3, seed=4, game_id=2)
    for _ in range(9):
        g.step(g.sample_action())
    copies = [g.clone(), LamaGame.deserialize(g.serialize()), pickle.loads(pickle.dumps(g))]
    want = _play_random(g.clone()).to_record()
    for c in copies:
        assert _play_random(c).to_record() == want
    state = json.loads(g.serialize())
    assert len(state["state"]["es"]) == len(state["state"]["ps"]) == 16
    state["state"]["es"] = "xyz"
    with pytest.raises(StateFormatError, match=r"state\.es must be 16 hexadecimal digits"):
        LamaGame.deserialize(json.dumps(state))
    # a planner's own streams take over (clone(rng=...)): the copy draws them, not the game's
    mine = S.Streams.of_game(99, 0)
    assert _play_random(g.clone(rng=mine)).to_record() != want
    assert mine.es != S.Streams.of_game(99, 0).es  # (used as it is: moved on by the copy's deals and dice)


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
        game = LamaGame(n, {"end_threshold": 25}, rng=streams)
        for _agent in env.agent_iter():
            obs, _, term, trunc, _ = env.last()
            if term or trunc:
                env.step(None)
                continue
            a = int(np.flatnonzero(obs["action_mask"])[-1])  # a fixed choice: the largest legal action
            env.step(a)
            game.step(a)
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
    assert isinstance(e.value, ImportError) and isinstance(e.value, RetiredError) and isinstance(e.value, LamaDiceError)
    assert "\n" not in str(e.value) and "retired in 0.2.0 (0.1.0 was the last version with it)" in str(e.value)
    with pytest.raises(DeprecatedEnvError, match="lama_dice_v1"):
        import lama_env.lama_dice_v0
    import lama_env

    with pytest.raises(AttributeError):
        _ = lama_env.lama_dice_v9




# ----------------------------------------------------------------- agents with randomness of their own
RANDOM_DRAWING_POLICY = '''
from lama_dice.agents.base import Policy


class DecisionCoin(Policy):
    """Draws every choice from decision_rng(game): one result whatever the chunk size."""

    def act(self, game, legal):
        return legal[int(self.decision_rng(game).integers(len(legal)))]
'''


def _sampling_net():
    from lama_dice.agents.registry import make_agent

    net = make_agent("ppo:2p")
    net.deterministic = False  # samples its masked distribution
    return net


@pytest.mark.parametrize("first", ["sampling-net", "search:ppo:2p,deals=2", "search:ppo:2p,rollouts=3,top=2",
                                   "python:coin.py:DecisionCoin", "mcts:4"])
def test_an_agent_drawing_randomness_gives_one_result_whatever_the_chunk_size_and_the_workers(first, tmp_path,
                                                                                                monkeypatch):
    """mcts, the searches, a sampling network and a python: agent draw from decision_rng: chunks change nothing."""
    if first.startswith("mcts"):
        pytest.importorskip("pyspiel", reason="OpenSpiel is not installed (the openspiel extra)")
    (tmp_path / "coin.py").write_text(RANDOM_DRAWING_POLICY, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    agent = _sampling_net() if first == "sampling-net" else first
    games = 6 if first.startswith(("search", "mcts")) else 40
    runs = [evaluate([agent, "threshold:0.2"], games=games, seed=3, chunk_size=c, workers=w)
            for c, w in ((128, 1), (1, 1), (4, 2))]
    first_run = _report(runs[0])
    for r in runs[1:]:
        assert _report(r) == first_run
    # the draws matter: another salt for the agent (another seed of its own) plays other games
    if first == "sampling-net":
        other = _sampling_net()
        other.decision_salt = 12345

        class Salted(type(other)):  # keeps its salt when the evaluator sets one
            def seed_decisions(self, salt):
                pass

        other.__class__ = Salted
        assert _report(evaluate([other, "threshold:0.2"], games=games, seed=3))[1] != first_run[1]


def test_decision_seed_is_the_games_and_the_decisions_only():
    g = LamaGame(2, seed=4, game_id=9)
    same = LamaGame(2, seed=4, game_id=9)
    assert g.decision_seed(1) == same.decision_seed(1) == g.clone().decision_seed(1)
    assert pickle.loads(pickle.dumps(g)).decision_seed(1) == g.decision_seed(1)
    assert g.decision_seed(1) != g.decision_seed(2)  # the salt: one agent's draws are not another's
    assert g.decision_seed(1) != LamaGame(2, seed=4, game_id=10).decision_seed(1)
    before = g.decision_seed(1)
    g.step(g.legal_actions()[0])
    assert g.decision_seed(1) != before  # every decision its own key
    assert LamaGame(2, seed=4).decision_seed(1) == LamaGame(2, seed=4, game_id=0).decision_seed(1)  # seed alone: game 0
    # the policy side: seeded -> keyed by the game; unseeded -> its own rng
    pol = RandomPolicy()
    assert pol.decision_seed(g) is None and pol.decision_rng(g) is pol.rng
    pol.seed(5)
    assert pol.decision_seed(g) == g.decision_seed(5)
    a, b = pol.decision_rng(g).integers(2**62), pol.decision_rng(g).integers(2**62)
    assert a == b  # the same decision, the same draws
    pol.seed_decisions(None)
    assert pol.decision_rng(g) is pol.rng
    other = LamaGame(2, seed=4)
    pol.seed(5)
    rows = pol.decision_integers([g, other, g], 100, 3)
    assert rows.shape == (3, 3) and rows[0].tolist() == rows[2].tolist()
    assert rows[1].tolist() == np.random.default_rng(other.decision_seed(5)).integers(100, size=3).tolist()
