"""Value networks (value files, the shipped value:2p / value:4p) and the ``search:NET`` agent."""

from __future__ import annotations

import json

import gymnasium as gym
import numpy as np
import pytest

from lama_dice.agents.agentfile import CheckpointError, tensor_shapes
from lama_dice.agents.learned import observation_fingerprint
from lama_dice.agents.registry import make_agent
from lama_dice.agents.rollout import RolloutPolicy
from lama_dice.agents.search import STRONGEST, SearchPolicy, parse_options, search_kind
from lama_dice.agents.value import VALUE_FORMAT, ValueNet, load_value, value_names, write_value_file
from lama_dice.cli.main import main
from lama_dice.train.value import calibration, selfplay_positions
from lama_env import LamaGame, Phase
from lama_env.errors import LamaDiceError
from lama_env.observation import encode, observation_size
from lama_env.rules import RulesConfig


def _description(n: int, hidden: list[int]) -> dict:
    return {"num_players": n, "rules": RulesConfig().to_dict(),
            "observation": {"size": observation_size(n), "layout": observation_fingerprint(n)},
            "network": {"kind": "mlp", "inputs": observation_size(n), "hidden": hidden, "activation": "relu",
                        "outputs": n}}


def _random_value_file(path, n: int = 2, hidden: list[int] | None = None, seed: int = 0):
    desc = _description(n, hidden or [16])
    rng = np.random.default_rng(seed)
    tensors = {k: rng.normal(0, 0.5, size=s).astype(np.float32) for k, s in tensor_shapes(desc["network"]).items()}
    write_value_file(path, desc, tensors)
    return path, tensors


def _positions(players: int, count: int, seed: int = 0) -> list[LamaGame]:
    from lama_dice.bench.search_speed import positions

    return positions(count, players=players, seed=seed)


# --------------------------------------------------------------------------- value files

def test_value_file_round_trip_and_seat_order(tmp_path):
    path, tensors = _random_value_file(tmp_path / "v.safetensors", n=3)
    net = load_value(path)
    assert net.num_players == 3 and net.description["format"] == VALUE_FORMAT
    games = _positions(3, 12)
    v = net.values(games)
    assert v.shape == (12, 3) and np.allclose(v.sum(axis=1), 1.0) and (v > 0).all()
    for g, row in zip(games, v, strict=True):  # the network sees the player to act first, the others in turn
        p = g.current_player
        rel = net.win_probabilities(encode(g, p)[None])[0]
        assert np.allclose([row[(p + k) % 3] for k in range(3)], rel, atol=1e-6)
    # the NumPy forward pass computes what an independent one does (one hidden ReLU layer)
    obs = np.stack([encode(g, g.current_player) for g in games])
    hidden = np.maximum(obs @ tensors["hidden.0.weight"].T + tensors["hidden.0.bias"], 0)
    assert np.allclose(hidden @ tensors["logits.weight"].T + tensors["logits.bias"], net.logits(obs), atol=1e-5)


def test_bad_value_files_are_one_line_errors(tmp_path):
    desc = _description(2, [8])
    with pytest.raises(CheckpointError, match="not one per seat"):
        ValueNet({**desc, "network": {**desc["network"], "outputs": 3}}, {})
    shapes = tensor_shapes(desc["network"])
    bad = {k: np.full(s, np.nan, dtype=np.float32) for k, s in shapes.items()}
    with pytest.raises(CheckpointError, match="not all finite numbers"):
        write_value_file(tmp_path / "nan.safetensors", desc, bad)
    with pytest.raises(CheckpointError, match="missing"):
        ValueNet(desc, {k: v for k, v in bad.items() if k != "logits.bias"})
    with pytest.raises(CheckpointError, match="is not a file nor a shipped one"):
        load_value(tmp_path / "nothing.safetensors")
    # a policy's agent file given as a value network says so
    from lama_dice.agents.ppo import PRETRAINED_DIR

    with pytest.raises(CheckpointError, match="a policy's agent file") as e:
        load_value(PRETRAINED_DIR / "ppo_2p.safetensors")
    assert "\n" not in str(e.value)


@pytest.mark.parametrize("name", ["2p", "4p"])
def test_the_shipped_value_networks_are_calibrated(name):
    assert name in value_names()
    net = load_value(name)
    training = net.description["training"]
    # held-out games: better than the constant 1/N prediction, and the figures the docs quote are its own
    assert training["brier"] < training["brier_constant"]
    assert training["heldout_games"] >= 1000 and training["positions"] >= 100_000
    games = _positions(net.num_players, 20, seed=3)
    v = net.values(games)
    assert np.allclose(v.sum(axis=1), 1.0)


# --------------------------------------------------------------------------- training

def test_win_shares_and_self_play_targets():
    from lama_env.rules import win_shares_of_games  # the targets' shares: the rules' one win rule

    assert win_shares_of_games(np.array([[3, 9], [4, 4]])).tolist() == [[1.0, 0.0], [0.5, 0.5]]
    assert win_shares_of_games(np.array([[2, 2, 7]])).tolist() == [[0.5, 0.5, 0.0]]
    pos = selfplay_positions(2, "ppo:2p", 40, envs=16, keep=0.5, seed=1)
    assert pos.games >= 40 and len(pos.obs) == len(pos.target) == len(pos.game) > 100
    assert np.allclose(pos.target.sum(axis=1), 1.0)
    # the targets are seen from the player to act: the to_act block marks the first seat
    to_act = pos.obs[:, 8 * 2: 9 * 2]
    assert (to_act[:, 0] == 1).all()
    again = selfplay_positions(2, "ppo:2p", 40, envs=16, keep=0.5, seed=1)
    assert np.array_equal(again.obs, pos.obs) and np.array_equal(again.target, pos.target)


def test_calibration_figures():
    pred = np.array([[0.9, 0.1], [0.2, 0.8], [0.6, 0.4], [0.6, 0.4]])
    target = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 0.0], [0.0, 1.0]])
    cal = calibration(pred, target)
    assert cal["brier"] == pytest.approx((0.01 + 0.04 + 0.16 + 0.36) / 4)
    assert cal["brier_constant"] == pytest.approx(0.25)
    assert [(r["count"], r["observed"]) for r in cal["reliability"]] == [(1, 0.0), (2, 0.5), (1, 1.0)]


def test_train_value_command(tmp_path):
    from lama_dice.train.value import main as train_main

    out, report = tmp_path / "v.safetensors", tmp_path / "r.json"
    assert train_main(["--players", "2", "--games", "60", "--envs", "16", "--hidden", "8", "--epochs", "1",
                       "--out", str(out), "--report", str(report)]) == 0
    net = load_value(out)
    data = json.loads(report.read_text())
    assert net.description["training"]["brier"] == round(data["calibration"]["brier"], 5)
    assert data["training"]["heldout_games"] > 0


# --------------------------------------------------------------------------- the search agent

@pytest.fixture(scope="module")
def value2(tmp_path_factory):
    return str(_random_value_file(tmp_path_factory.mktemp("v") / "v2.safetensors", n=2, seed=4)[0])


def test_spec_options():
    assert parse_options("ppo:2p") == {"net": "ppo:2p"}
    assert parse_options("ppo:2p, depth=2,top=0,deals=3,margin=0.01,seed=5,value=4p") == {
        "net": "ppo:2p", "depth": 2, "top": 0, "deals": 3, "margin": 0.01, "seed": 5, "value": "4p"}


def test_the_bare_spec_is_the_strongest_search_and_depth_names_the_tree():
    # issue 51: search:NET as typed plays the strongest search measured (the rollouts), the tree has its own setting
    bare = make_agent("search:ppo:2p")
    assert isinstance(bare, RolloutPolicy)
    assert (bare.rollouts, bare.rounds, bare.z, bare.top) == (STRONGEST["rollouts"], STRONGEST["rounds"],
                                                             STRONGEST["z"], 3) == (128, 1, 1.0, 3)
    assert search_kind(parse_options("ppo:2p,z=2")) == ("rollouts", {"net": "ppo:2p", "rollouts": 128, "rounds": 1,
                                                                      "z": 2.0})
    # rollouts=R spelled out keeps the rollout search's own defaults (z=0), as measured before
    assert search_kind(parse_options("ppo:2p,rollouts=16")) == ("rollouts", {"net": "ppo:2p", "rollouts": 16})
    for spec in ("ppo:2p,depth=1", "ppo:2p,deals=4", "ppo:2p,margin=0.01,top=2"):
        kind, opts = search_kind(parse_options(spec))
        assert kind == "tree" and "rollouts" not in opts
    tree = make_agent("search:ppo:2p,depth=1")
    assert type(tree) is SearchPolicy and tree.depth == 1
    # the bare spec is the spelled-out search, decision for decision (its measurements carry over)
    games = _positions(2, 4, seed=3)
    one, two = (make_agent(spec, seed=4).search_many(games) for spec in ("search:ppo:2p",
                                                                        "search:ppo:2p,rollouts=128,rounds=1,z=1"))
    assert [a for a, _ in one] == [a for a, _ in two]
    assert all(v1.keys() == v2.keys() and all(np.array_equal(v1[k], v2[k]) for k in v1)
               for (_, v1), (_, v2) in zip(one, two, strict=True))


@pytest.mark.parametrize(("spec", "words"), [
    ("search", "search needs a policy network: search:NET"),
    ("search:depth=2", "search's first part must be a policy network"),
    ("search:ppo:2p,depth=0", "search option depth must be an integer 1..4, got '0'"),
    ("search:ppo:2p,depth=two", "search option depth must be an integer 1..4, got 'two'"),
    ("search:ppo:2p,top=-1", "search option top must be an integer"),
    ("search:ppo:2p,margin=nan", "search option margin must be a number 0..1"),
    ("search:ppo:2p,width=3", "bad search option 'width=3'; the options are depth=D"),
    ("search:ppo:2p,seed=1,seed=2", "search option 'seed' given twice"),
    ("search:threshold:0.2", "search needs a policy network (ppo:...) as NET"),
    ("search:ppo:2p,value=4p", "the value network '4p' is for 4 players, the policy network 'ppo:2p' for 2"),
    ("search:ppo:solo", "no shipped value network for 1 players"),
])
def test_bad_specs_are_one_line_errors(spec, words):
    with pytest.raises(LamaDiceError) as e:
        make_agent(spec)
    assert words in str(e.value) and "\n" not in str(e.value)


def _expectimax_depth1(game: LamaGame, net: ValueNet, action: int, me: int) -> float:
    """A depth-1 value written independently: every roll in die order (125), explicit chance."""
    def value(g: LamaGame) -> float:
        if g.game_over:
            won = g.result()["winners"]
            return 1.0 / len(won) if me in won else 0.0
        assert not g.is_chance_node()  # the test positions avoid round ends (a next deal's chance node)
        if g.current_player == me and len(g.legal_actions()) == 1:
            c = g.clone()
            c.step(g.legal_actions()[0])
            return value(c)
        return float(net.values([g])[0, me])

    g = game.clone(chance="explicit")
    g.step(action)
    if not g.is_chance_node():
        return value(g)
    total = 0.0
    for dice, p in g.chance_outcomes():
        c = g.clone()
        c.apply_chance(dice)
        total += p * value(c)
    return total


def _rounds_go_on(game: LamaGame) -> bool:
    """No roll or choice from ``game`` ends the round (so the deals drawn play no part)."""
    for a in game.legal_actions():
        g = game.clone(chance="explicit")
        g.step(a)
        outs = [d for d, _ in g.chance_outcomes()] if g.is_chance_node() else [None]
        for d in outs:
            c = g.clone()
            if d is not None:
                c.apply_chance(d)
            if c.rounds_finished > game.rounds_finished:  # the round ended (and, flowing on, dealt the next)
                return False
    return True


def test_depth_one_is_the_exact_expectimax_of_the_value_network(value2):
    agent = make_agent(f"search:ppo:2p,value={value2},depth=1,top=0", seed=0)
    assert isinstance(agent, SearchPolicy) and not isinstance(agent, RolloutPolicy)
    checked = 0
    for game in _positions(2, 80, seed=11):
        if not _rounds_go_on(game):
            continue
        action, values = agent.search(game)
        me = game.current_player
        assert sorted(values) == sorted(game.legal_actions())
        for a, v in values.items():
            assert v[me] == pytest.approx(_expectimax_depth1(game, agent.value_net, a, me), abs=1e-6)
        assert values[action][me] == max(v[me] for v in values.values())
        checked += 1
    assert checked >= 10


def test_top_k_prunes_by_the_prior_and_margin_keeps_the_prior(value2):
    agent = make_agent(f"search:ppo:2p,value={value2},depth=1,top=1", seed=0)
    prior = make_agent("ppo:2p")
    games = _positions(2, 30, seed=5)
    for g in games:  # one choice searched: the network's own
        assert agent.act(g, g.legal_actions()) == prior.act(g, g.legal_actions())
    sticky = make_agent(f"search:ppo:2p,value={value2},margin=1", seed=0)
    assert [sticky.act(g, g.legal_actions()) for g in games] == [prior.act(g, g.legal_actions()) for g in games]


def test_deterministic_batched_and_leaves_the_game_alone(value2):
    games = _positions(2, 25, seed=7)
    spec = f"search:ppo:2p,value={value2},depth=2,deals=2"
    one = make_agent(spec, seed=3)
    before = [g.serialize() for g in games]
    singly = [one.act(g, g.legal_actions()) for g in games]
    assert [g.serialize() for g in games] == before
    many = make_agent(spec, seed=3).act_batch(games, [g.legal_actions() for g in games])
    assert singly == many
    assert all(a in g.legal_actions() for a, g in zip(singly, games, strict=True))
    fixed = f"search:ppo:2p,value={value2},depth=1,seed=9"  # a seed of the spec wins over the tool's
    a, b = make_agent(fixed, seed=1), make_agent(fixed, seed=2)
    assert a.rng.integers(2**63) == b.rng.integers(2**63)


def test_four_players_and_deeper_trees_cost_more(value2, tmp_path):
    v4 = _random_value_file(tmp_path / "v4.safetensors", n=4, seed=2)[0]
    agent = make_agent(f"search:ppo:4p,value={v4},depth=1", seed=0)
    game = _positions(4, 1, seed=2)[0]
    assert agent.act(game, game.legal_actions()) in game.legal_actions()
    shallow, deep = (make_agent(f"search:ppo:2p,value={value2},depth={d}", seed=0) for d in (1, 2))
    turns = [g for g in _positions(2, 40, seed=1) if g.phase is Phase.TURN][:5]
    for a in (shallow, deep):
        for g in turns:
            a.act(g, g.legal_actions())
    assert deep.leaves_valued > 2 * shallow.leaves_valued > 0


def test_the_search_beats_random():
    # a real value network: the shipped one, in a few games against random
    from lama_dice.evaluation import evaluate

    result = evaluate(["search:ppo:2p", "random"], games=4, seed=1)
    assert result.agents[0].win_rate >= 0.75


def test_in_evaluate_score_and_as_an_env_opponent(tmp_path, value2):
    spec = f"search:ppo:2p,value={value2}"
    out = tmp_path / "e.json"
    assert main(["evaluate", "--agents", spec, "ppo:2p", "--games", "2", "--no-progress", "--json", str(out)]) == 0
    data = json.loads(out.read_text())
    assert [a["spec"] for a in data["agents"]] == [spec, "ppo:2p"] and data["games"] == 2
    env = gym.make("LamaDice-v1", num_players=2, opponents=[spec])
    _, info = env.reset(seed=0)
    done = False
    while not done:
        _, _, term, trunc, info = env.step(int(np.flatnonzero(info["action_mask"])[0]))
        done = term or trunc
    from lama_dice.cli.play import make_opponents, resolve_seats

    _, seats = resolve_seats(2, [spec], 0)
    assert isinstance(make_opponents(seats, 0)[1], SearchPolicy)


def test_served_only_when_the_server_offers_it():
    # search: may read a value file from the server's disk (value=PATH): a web page may not ask for it
    from lama_dice.cli.web.games import WebError, check_spec

    with pytest.raises(WebError, match="is not offered to web pages"):
        check_spec("search:ppo:2p")
    assert check_spec(" search:ppo:2p ", trusted=["search:ppo:2p"]) == "search:ppo:2p"


# --------------------------------------------------------------------------- the rollout search


def test_rollout_spec_options_and_errors():
    assert parse_options("ppo:2p,rollouts=8,rounds=2,playout=sample,z=1.5,top=0") == {
        "net": "ppo:2p",
        "rollouts": 8,
        "rounds": 2,
        "playout": "sample",
        "z": 1.5,
        "top": 0,
    }
    for spec, words in [
        ("search:ppo:2p,rollouts=0", "search option rollouts must be an integer 1..4096"),
        ("search:ppo:2p,rollouts=4,depth=2", "search option 'depth' is not one of the rollout"),
        ("search:ppo:2p,depth=1,z=1", "search option 'z' is one of the rollout search, not of the tree"),
        ("search:ppo:2p,rollouts=4,playout=best", "search option playout must be greedy or sample"),
        ("search:ppo:2p,rollouts=4,z=-1", "search option z must be a number 0..10"),
    ]:
        with pytest.raises(LamaDiceError) as e:
            make_agent(spec)
        assert words in str(e.value) and "\n" not in str(e.value)


@pytest.mark.parametrize("playout", ["greedy", "sample"])
def test_rollouts_deterministic_batched_and_leave_the_game_alone(value2, playout):
    from lama_dice.agents.rollout import RolloutPolicy

    games = _positions(2, 12, seed=7)
    spec = f"search:ppo:2p,value={value2},rollouts=4,rounds=1,playout={playout}"
    one = make_agent(spec, seed=3)
    assert isinstance(one, RolloutPolicy)
    before = [g.serialize() for g in games]
    singly = [one.act(g, g.legal_actions()) for g in games]
    assert [g.serialize() for g in games] == before
    many = make_agent(spec, seed=3).act_batch(games, [g.legal_actions() for g in games])
    assert singly == many and all(a in g.legal_actions() for a, g in zip(singly, games, strict=True))
    assert one.steps_played > 0


def test_rollouts_common_numbers_and_the_network_kept(value2):
    prior = make_agent("ppo:2p")
    games = [g for g in _positions(2, 30, seed=5) if len(g.legal_actions()) > 1][:10]
    one = make_agent(f"search:ppo:2p,value={value2},rollouts=4,top=1", seed=0)  # one candidate: the network's
    assert [one.act(g, g.legal_actions()) for g in games] == [prior.act(g, g.legal_actions()) for g in games]
    # z: another choice than the network's only where its mean beats the network's by more than z standard errors
    sticky = make_agent(f"search:ppo:2p,value={value2},rollouts=4,z=10", seed=0)
    kept = 0
    for g in games:
        net = prior.act(g, g.legal_actions())
        choice, values = sticky.search(g)
        if choice == net:
            kept += 1
        else:
            assert values[choice][0] - values[net][0] > 10 * values[choice][1]
    assert kept >= 8
    # the same candidate twice (top=0 lists each action once): the paired differences of a candidate with
    # itself vanish, so a rollout's score depends on its stream alone; a second search, same seed, same scores
    a, b = (make_agent(f"search:ppo:2p,value={value2},rollouts=6,top=0", seed=1) for _ in range(2))
    ra, rb = a.search_many(games), b.search_many(games)
    for (act_a, va), (act_b, vb), g in zip(ra, rb, games, strict=True):
        assert act_a == act_b and sorted(va) == sorted(g.legal_actions())
        assert all(np.array_equal(va[x], vb[x]) for x in va)
        first = next(iter(va))
        assert va[first][1] == 0.0  # the network's choice against itself


def test_rollouts_to_the_game_end_need_no_value_at_the_end(value2):
    # in a game about to end, rollouts to its end score exact shares (0, 1/2 or 1 each)
    agent = make_agent(f"search:ppo:2p,value={value2},rollouts=3,rounds=100,top=0", seed=0)
    game = LamaGame(2, seed=1, start_points=[38, 38])
    _, values = agent.search(game)
    for mean, _ in values.values():
        assert mean * 6 == pytest.approx(round(mean * 6))


def test_rollouts_and_the_tree_search_a_game_of_explicit_chance_as_a_sampled_one(value2):
    # the rollouts play on their own streams whatever the searched game's chance mode, and the tree values
    # a round's end on its own deals: the same position, sampled or explicit, gets the same scores from
    # searches that cross a round's end
    choices = [g for g in _positions(2, 300, seed=11) if len(g.legal_actions()) > 1]
    ending = [g for g in choices if not _rounds_go_on(g)][:3]  # some choice (or roll) ends the round
    assert len(ending) == 3
    games = choices[:3] + ending
    for spec in (f"search:ppo:2p,value={value2},rollouts=4,rounds=3,top=0", f"search:ppo:2p,value={value2},top=0"):
        sampled = make_agent(spec, seed=2).search_many([g.clone(chance="sampled") for g in games])
        explicit = make_agent(spec, seed=2).search_many([g.clone(chance="explicit") for g in games])
        for (act_s, vs), (act_e, ve) in zip(sampled, explicit, strict=True):
            assert act_s == act_e and all(np.array_equal(vs[x], ve[x]) for x in ve)


# --------------------------------------------------------------------------- the compiled rollouts
_NETS = {1: "ppo:solo", 2: "ppo:2p", 3: "ppo:3p", 4: "ppo:4p"}


@pytest.fixture(scope="module")
def values_by_players(tmp_path_factory):
    """A value network per player count: the shipped one, else a random one (the rollouts only need one)."""
    folder = tmp_path_factory.mktemp("values")
    return {n: f"{n}p" if f"{n}p" in value_names() else str(_random_value_file(folder / f"v{n}.safetensors", n=n,
                                                                                seed=n)[0]) for n in _NETS}


def test_the_compiled_encoder_reads_records_as_the_networks_were_trained():
    # the rollouts' observations: the vector game's encoder on to_state() records, bit-equal to encode()
    from lama_env import _kernel as K
    from lama_env._vector_kernel import encode as encode_record
    from lama_env.snapshot import to_state
    from lama_env.vector import encoder_rules

    for n in _NETS:
        assert make_agent(_NETS[n]).sidecar["observation"]["layout"] == observation_fingerprint(n)
        rec = encoder_rules(n, RulesConfig())[()]
        for g in _positions(n, 40, seed=n):
            out = np.zeros(observation_size(n), dtype=np.float32)
            state = to_state(g)
            ph = state["phase"]
            encode_record(out, state[()], rec, g.current_player, g.current_player, ph, ph != K.TURN)
            assert np.array_equal(out, encode(g, g.current_player))


@pytest.mark.parametrize("players", [1, 2, 3, 4])
@pytest.mark.parametrize(("rounds", "z"), [(1, 0), (100, 1)])
def test_the_compiled_rollouts_are_the_python_ones(values_by_players, players, rounds, z):
    # the reference: the same rollouts on LamaGame copies (engine=python), on the same random numbers; the
    # same means bit for bit (the networks' forward passes give a row the same bits in any batch: MLP.invariant)
    games = [g for g in _positions(players, 60, seed=20 + players) if len(g.legal_actions()) > 1][:30]
    spec = f"search:{_NETS[players]},value={values_by_players[players]},rollouts=4,rounds={rounds},z={z},top=0"
    compiled, python = make_agent(spec, seed=5), make_agent(spec + ",engine=python", seed=5)
    assert compiled.compiled and not python.compiled
    fast, slow = compiled.search_many(games), python.search_many(games)
    assert compiled.steps_played == python.steps_played
    for (a, va), (b, vb) in zip(fast, slow, strict=True):
        assert a == b and sorted(va) == sorted(vb)
        assert all(np.array_equal(va[x], vb[x]) for x in va)
    again = make_agent(spec, seed=5).search_many(games)  # deterministic for a seed
    assert all(a == b and all(np.array_equal(va[x], vb[x]) for x in va)
               for (a, va), (b, vb) in zip(fast, again, strict=True))


def test_the_compiled_rollouts_are_the_default_where_they_apply(value2):
    base = f"search:ppo:2p,value={value2},rollouts=2"
    assert make_agent(base).compiled
    assert not make_agent(base + ",engine=python").compiled
    assert not make_agent(base + ",playout=sample").compiled  # its late draws: a generator per move, in Python
    with pytest.raises(LamaDiceError, match="search option engine must be compiled or python"):
        make_agent(base + ",engine=gpu")
    # the Python engine gives the compiled one's result
    g = _positions(2, 3, seed=1)[2]
    (a, va), (b, vb) = make_agent(base + ",engine=python", seed=1).search(g), make_agent(base, seed=1).search(g)
    assert a == b and all(np.array_equal(va[x], vb[x]) for x in va)


def test_the_speed_bench_times_engines_alternately(value2):
    from lama_dice.bench.search_speed import compare

    games = _positions(2, 3, seed=2)
    fast, ref, net = compare([f"search:ppo:2p,value={value2},rollouts=2", f"search:ppo:2p,value={value2},rollouts=2,"
                              "engine=python", "ppo:2p"], games, batch=2, repeat=2)
    assert fast["decisions"] == ref["decisions"] == net["decisions"] == 6
    assert fast["steps_per_decision"] == ref["steps_per_decision"] > 0 and "steps_per_decision" not in net
