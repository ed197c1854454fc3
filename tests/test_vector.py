"""The vector game plays exactly the scalar engine's games, observations, masks, rewards and records.

Each test drives a :class:`lama_env.vector.VectorGame` with random legal
actions and, beside every slot, a scalar :class:`lama_env.engine.LamaGame` fed
the same deals (``hands``) and dice (``rolled``, injected into its rolls) and
the same actions.  Before every step the vector state, observation
(``== encode``, bit for bit), action mask (``== legal_actions``) and player to
act must be the scalar game's; after it the rewards, ``round_ended``,
``terminated`` and ``final_observation`` must follow the Gymnasium env's
definitions; at the end the records must equal the scalar games' records and
replay to their results.
"""

from __future__ import annotations

import numpy as np
import pytest
from conftest import RULES_CONFIG_IDS, RULES_CONFIGS

from lama_env import actions as A
from lama_env.engine import IllegalActionError, LamaGame, Phase
from lama_env.errors import LamaDiceError
from lama_env.observation import encode, observation_layout, observation_size
from lama_env.record import replay
from lama_env.rules import MAX_ROUND_POINTS, RulesConfig, RulesError, win_rewards
from lama_env.rules import game_over as rules_over
from lama_env.vector import VectorGame, VectorGameError, VectorIllegalActionError

CONFIGS, CONFIG_IDS = RULES_CONFIGS, RULES_CONFIG_IDS


def _choose(rng: np.random.Generator, mask: np.ndarray, p_roll: float = 0.8) -> np.ndarray:
    """A random legal action per game; at a turn, roll with probability ``p_roll`` (longer rounds)."""
    a = np.argmax(rng.random(mask.shape) + mask, axis=1)
    turn = mask[:, A.ROLL] & mask[:, A.QUIT]
    a[turn] = np.where(rng.random(int(turn.sum())) < p_roll, A.ROLL, A.QUIT)
    return a


def _scalar(vg: VectorGame, g: int, episode: str = "game") -> LamaGame:
    """A scalar game dealt the hands of slot ``g``'s new game; the next rounds' deals wait at chance nodes.

    ``episode="round"``: the game ends after its first round (``max_rounds=1``), as the slot's episode.
    """
    return LamaGame(vg.num_players, vg.rules, hands=vg.hands[g].tolist(), record=True, chance="explicit",
                    max_rounds=1 if episode == "round" else None)


def _deal(game: LamaGame, hands: np.ndarray) -> None:
    """Deal the next round's ``hands`` (per seat, face indices) at the deal's chance node, card by card."""
    assert game.is_chance_node() and not game.legal_actions()
    for hand in hands.tolist():
        for face in hand:
            game.apply_chance(face)


def _check_state(vg: VectorGame, games: list[LamaGame]) -> None:
    obs, mask, player = vg.observation, vg.action_mask, vg.current_player
    displays, totals, row, quit_ = vg.displays, vg.totals, vg.row, vg.quit
    phase, dice, start, active, rnd = vg.phase, vg.dice, vg.start_player, vg.num_active, vg.round_index
    for g, game in enumerate(games):
        assert not game.game_over and not game.is_chance_node()
        assert player[g] == game.current_player
        assert displays[g].tolist() == [list(d) for d in game.displays]
        assert totals[g].tolist() == list(game.totals)
        assert tuple(row[g]) == game.row
        assert tuple(quit_[g]) == game.quit
        assert phase[g] == game.phase
        assert start[g] == game.start_player and active[g] == game.quit.count(False) and rnd[g] == game.round_index
        assert tuple(dice[g]) == (game.dice if game.dice is not None else (-1, -1, -1))
        assert tuple(np.flatnonzero(mask[g])) == game.legal_actions()
        expected = encode(game, game.current_player)
        assert obs[g].dtype == np.float32 and np.array_equal(obs[g], expected), (g, obs[g] - expected)


def _drive(n: int, rules: RulesConfig, *, num_envs: int, steps: int, seed: int, reward: str = "win",
           episode: str = "game", observe_every: int = 25, p_roll: float = 0.8) -> dict:
    """Play ``steps`` steps against the scalar engine; return what was seen (endings, records)."""
    vg = VectorGame(num_envs, n, seed=seed, record=True, reward=reward, episode=episode, rules=rules)
    vg.reset()
    games = [_scalar(vg, g, episode) for g in range(num_envs)]
    round_start = [g.totals for g in games]
    rng = np.random.default_rng(seed)
    expected_records: list[dict] = []
    seen: dict = {"endings": set(), "terminated": 0, "rolls": 0}
    for step in range(steps):
        _check_state(vg, games)
        if step % observe_every == 0:  # every seat's view, not only the player to act's
            seats = rng.integers(0, n, num_envs)
            views = vg.observe(seats)
            for g, game in enumerate(games):
                assert np.array_equal(views[g], encode(game, int(seats[g])))
            assert np.array_equal(vg.observe(vg.current_player), vg.observation)
        actions = _choose(rng, vg.action_mask, p_roll)
        vg.step(actions)
        rolled, rewards, term, final = vg.rolled, vg.rewards, vg.terminated, vg.final_observation
        for g, game in enumerate(games):
            a = int(actions[g])
            finished = game.rounds_finished
            if a == A.ROLL:
                seen["rolls"] += 1
                game.step(A.ROLL, dice=[int(f) for f in rolled[g]])
            else:
                assert tuple(rolled[g]) == (-1, -1, -1)
                game.step(a)
            expected = np.zeros(n)
            ended = game.rounds_finished > finished
            assert vg.round_ended[g] == ended
            if ended:
                last = game.last_round
                totals = last["totals"]
                seen["endings"].add(last["ended_by"])
                if reward == "points":
                    expected -= np.array(totals) - np.array(round_start[g])
                done = game.game_over
                assert term[g] == done and done == (episode == "round" or rules_over(totals, game.rules))
                if done:
                    seen["terminated"] += 1
                    assert list(game.totals) == totals
                    if reward == "win":
                        expected += win_rewards(totals)
                    assert np.array_equal(final[g], encode(game, game.current_player))
                    expected_records.append(game.to_record())
                    games[g] = _scalar(vg, g, episode)
                else:
                    _deal(game, vg.hands[g])
                round_start[g] = games[g].totals
            else:
                assert not term[g]
            if not term[g]:
                assert not final[g].any()
            assert rewards[g].dtype == np.float32
            assert np.array_equal(rewards[g], expected.astype(np.float32)), (g, rewards[g], expected)
    _check_state(vg, games)
    records = vg.records()
    assert records == expected_records
    for rec in records:
        result = replay(rec)
        assert result["valid"], result
        assert rec["rules"] == rules.to_dict()
    assert vg.records() == []
    seen["records"] = records
    return seen


@pytest.mark.parametrize("n", range(1, 7))
@pytest.mark.parametrize("config", range(len(CONFIGS)), ids=CONFIG_IDS)
def test_vector_games_are_the_scalar_engines_games(n, config):
    rules = CONFIGS[config]
    seen = _drive(n, rules, num_envs=16, steps=400, seed=31 * n + config,
                  reward="points" if config % 2 else "win")
    assert seen["terminated"] > 0 and seen["rolls"] > 0


@pytest.mark.parametrize("n", range(1, 7))
def test_the_kernels_observation_offsets_are_the_encoders(n):
    # lama_env._vector_kernel.encode writes the blocks at these fixed offsets (and t_pts scales by 31)
    starts = {e.name: e.start for e in observation_layout(n)}
    assert starts == {"display": 0, "quit": 7 * n, "to_act": 8 * n, "start_player": 9 * n, "total": 10 * n,
                      "to_threshold": 11 * n, "round_points": 12 * n, "would_end_game": 13 * n,
                      "p_no_match": 14 * n, "llama_row": 15 * n, "decision": 15 * n + 7, "dice": 15 * n + 11,
                      "last_player": 15 * n + 18, "active_players": 15 * n + 19, "must_discard": 15 * n + 20,
                      "triple_llama_match": 15 * n + 21}
    assert MAX_ROUND_POINTS == 31


@pytest.mark.parametrize("reward", ["win", "points"])
@pytest.mark.parametrize("episode", ["game", "round"])
@pytest.mark.parametrize("n", [1, 2, 4])
def test_rewards_and_episodes_follow_the_gym_definitions(n, reward, episode):
    if n == 1 and reward == "win":
        with pytest.warns(UserWarning, match="solo"):
            VectorGame(2, 1, reward="win")
    seen = _drive(n, CONFIGS[0], num_envs=8, steps=150, seed=n, reward=reward, episode=episode)
    assert seen["terminated"] > 0
    if episode == "round":
        assert all(len(r["rounds"]) == 1 for r in seen["records"])


def test_every_round_ending_and_rule_path_is_exercised():
    """The differential games are not vacuous: every round ending, triple llamas, takes, partial discards."""
    endings: set[str] = set()
    seen = {"triple": 0, "take": 0, "partial_discard": 0, "empty_discard": 0, "last_player_bust": 0}
    for n in (1, 2, 4):
        run = _drive(n, CONFIGS[1], num_envs=16, steps=200, seed=100 + n, p_roll=0.95)
        endings |= run["endings"]
        for rec in run["records"]:
            for rnd, rr in zip(rec["rounds"], replay(rec)["rounds"], strict=True):
                for t in rnd["turns"]:
                    seen["triple"] += t.get("dice") == ["L", "L", "L"]
                    seen["take"] += "take" in t
                    seen["empty_discard"] += t.get("discard") == []
                    seen["partial_discard"] += "discard" in t and 0 < len(t["discard"]) < sum(
                        1 for f in t["dice"] if f in t["discard"])
                seen["last_player_bust"] += (rr["ended_by"] == "bust" and n > 1
                                             and any(t["action"] == "quit" for t in rnd["turns"]))
    assert endings == {"went_out", "row_empty", "bust", "all_quit"}
    assert all(v > 0 for v in seen.values()), seen


def _play(vg: VectorGame, steps: int) -> list[tuple[np.ndarray, ...]]:
    """A deterministic policy per slot (the legal action at (step * 7 + slot) mod legal); the outputs seen."""
    out = []
    slots = np.arange(vg.num_envs)
    for step in range(steps):
        mask = vg.action_mask
        counts = mask.sum(axis=1)
        k = (step * 7 + slots) % counts
        actions = np.array([np.flatnonzero(mask[g])[k[g]] for g in slots])
        vg.step(actions)
        out.append(tuple(x.copy() for x in (vg.observation, vg.action_mask, vg.rewards, vg.terminated,
                                              vg.final_observation, vg.rolled)))
    return out


def test_same_seed_same_games_and_slots_do_not_depend_on_num_envs():
    a = VectorGame(3, 2, seed=5)
    a.reset()
    b = VectorGame(7, 2, seed=5)
    b.reset()
    assert np.array_equal(a.observation, b.observation[:3])
    for xa, xb in zip(_play(a, 200), _play(b, 200), strict=True):
        for ya, yb in zip(xa, xb, strict=True):
            assert np.array_equal(ya, yb[:3])
    again, other = _fresh(3, 5), _fresh(3, 6)
    assert not np.array_equal(other.hands, again.hands)
    for xa, xb in zip(_play(_fresh(3, 5), 50), _play(again, 50), strict=True):
        for ya, yb in zip(xa, xb, strict=True):
            assert np.array_equal(ya, yb)


def _fresh(num_envs: int, seed: int) -> VectorGame:
    vg = VectorGame(num_envs, 2, seed=seed)
    vg.reset()
    return vg


def test_reset_with_a_seed_restarts_the_streams_and_without_one_continues_them():
    vg = VectorGame(16, 3, seed=1)
    vg.reset()
    first = vg.hands.copy()
    _play(vg, 30)
    vg.reset(seed=1)
    assert np.array_equal(vg.hands, first)
    vg.reset()
    assert not np.array_equal(vg.hands, first)
    vg.reset(seed=2)
    assert not np.array_equal(vg.hands, first)
    other = VectorGame(16, 3, seed=2)
    other.reset()
    assert np.array_equal(other.hands, vg.hands)


def test_outputs_of_a_step_stay_valid_through_the_next_step():
    vg = VectorGame(64, 2, seed=0)
    vg.reset()
    rng = np.random.default_rng(0)
    obs, mask = vg.observation, vg.action_mask
    kept = obs.copy(), mask.copy()
    vg.step(_choose(rng, mask))
    assert np.array_equal(obs, kept[0]) and np.array_equal(mask, kept[1])
    assert not obs.flags.writeable and not vg.rewards.flags.writeable and not vg.hands.flags.writeable


def test_illegal_actions_raise_and_change_nothing():
    vg = VectorGame(6, 2, seed=3, record=True)
    vg.reset()
    rng = np.random.default_rng(0)
    for _ in range(5):
        vg.step(_choose(rng, vg.action_mask))
    state = (vg.observation.copy(), vg.action_mask.copy(), vg.displays, vg.totals, vg.row, vg.phase, vg.dice)
    actions = _choose(rng, vg.action_mask)
    for g, bad in ((4, int(np.flatnonzero(~vg.action_mask[4])[0])), (2, -1), (0, 129)):
        wrong = actions.copy()
        wrong[g] = bad
        with pytest.raises(VectorIllegalActionError, match=rf"^game {g}: .*action {bad}") as err:
            vg.step(wrong)
        assert isinstance(err.value, IllegalActionError) and isinstance(err.value, LamaDiceError)
        assert "\n" not in str(err.value)
    after = (vg.observation, vg.action_mask, vg.displays, vg.totals, vg.row, vg.phase, vg.dice)
    for x, y in zip(state, after, strict=True):
        assert np.array_equal(x, y)
    vg.step(actions.astype(np.uint8))  # any integer dtype
    with pytest.raises(VectorGameError, match="shape"):
        vg.step(actions[:3])
    with pytest.raises(VectorGameError, match="integers"):
        vg.step(actions.astype(float))


def test_bad_arguments():
    with pytest.raises(VectorGameError, match="reset"):
        VectorGame(2).step(np.zeros(2, dtype=int))
    with pytest.raises(VectorGameError, match="reset"):
        _ = VectorGame(2).observation
    for kwargs, err, match in [
        ({"num_envs": 0}, VectorGameError, "num_envs"),
        ({"num_envs": 2, "num_players": 7}, VectorGameError, "num_players"),
        ({"num_envs": 2, "reward": "score"}, VectorGameError, "reward"),
        ({"num_envs": 2, "episode": "turn"}, VectorGameError, "episode"),
        ({"num_envs": 2, "seed": -1}, VectorGameError, "seed"),
        ({"num_envs": 2, "end_threshold": 0}, RulesError, "end_threshold"),
        ({"num_envs": 2, "frameskip": 4}, TypeError, "unexpected keyword argument 'frameskip'"),
    ]:
        with pytest.raises(err, match=match):
            VectorGame(**kwargs)
    with pytest.raises(VectorGameError, match="record=True"):
        vg = VectorGame(2)
        vg.reset()
        vg.records()
    vg = VectorGame(2, 3, rules={"end_threshold": 20}, must_discard=False)
    assert vg.rules == RulesConfig(end_threshold=20, must_discard=False)
    vg.reset()
    assert vg.observation.shape == (2, observation_size(3)) and vg.action_mask.shape == (2, A.NUM_ACTIONS)
    with pytest.raises(VectorGameError, match="seats"):
        vg.observe(3)


def test_long_games_grow_the_logs():
    vg = VectorGame(4, 2, seed=0, record=True, end_threshold=300)
    vg._log = vg._log[:, :64].copy()  # start tiny, so that the logs must grow during play
    vg.reset()
    rng = np.random.default_rng(1)
    n_records = 0
    for _ in range(1500):
        vg.step(_choose(rng, vg.action_mask, p_roll=0.95))
        if vg.terminated.any():
            for rec in vg.records():
                n_records += 1
                assert replay(rec)["valid"]
    assert vg._log.shape[1] > 64 and n_records > 0


def test_bench_section_runs():
    from lama_dice.bench import vector_speed

    res = vector_speed.run(aec_steps=200, vector_steps=4, repeats=1, seed=0, warmup=50, slices=1, num_envs=64,
                           scaling_envs=(16, 64), scaling_players=(2, 3), scaling_agent_steps=200)
    assert {"vector", "aec_env"} <= set(res["results"])
    assert res["results"]["vector"]["per_s"] > 0
    assert res["ratios"]["vector_vs_aec"]["ratio"] > 0
    assert set(res["scaling"]) == {"envs_16_players_2", "envs_64_players_2", "envs_64_players_3"}
    assert 0 < res["results"]["vector"]["step_share"] <= 1
    mask = np.zeros((3, A.NUM_ACTIONS), dtype=bool)
    mask[0, 5] = mask[1, [0, 1]] = mask[2, 128] = True
    picks = {tuple(vector_speed.sample_actions(np.random.default_rng(i), mask)) for i in range(50)}
    assert picks == {(5, 0, 128), (5, 1, 128)}


# ------------------------------------------------------------------ sample_actions
@pytest.mark.parametrize("n", range(1, 7))
@pytest.mark.parametrize("config", range(len(CONFIGS)), ids=CONFIG_IDS)
def test_sampled_actions_are_legal(n, config):
    vg = VectorGame(64, n, seed=n + 10 * config, reward="points", rules=CONFIGS[config])
    vg.reset()
    rng = np.random.default_rng(config)
    phases = set()
    for t in range(300):
        a = vg.sample_actions() if t % 2 else vg.sample_actions(rng)
        assert a.dtype == np.int64 and a.shape == (64,)
        assert vg.action_mask[np.arange(64), a].all()
        phases |= set(vg.phase.tolist())
        vg.step(a)
    assert phases == {int(Phase.TURN), int(Phase.DISCARD), int(Phase.TAKE)} or n == 1


def _chi2_bound(df: int, z: float = 4.265) -> float:
    """The chi-square quantile of ``df`` degrees of freedom at the normal quantile ``z`` (Wilson-Hilferty).

    ``z = 4.265``: a one-sided p-value of 1e-5.
    """
    return df * (1 - 2 / (9 * df) + z * (2 / (9 * df)) ** 0.5) ** 3


def test_sampled_actions_are_uniform_over_the_legal_actions():
    # many games in varied decisions (turns, discards of up to dozens of options, takes); the same
    # decision sampled again and again (the game's stream moves on, the game does not)
    for rules in (CONFIGS[0], CONFIGS[1]):
        vg = VectorGame(512, 3, seed=5, rules=rules)
        vg.reset()
        for _ in range(37):
            vg.step(vg.sample_actions())
        mask = vg.action_mask.copy()
        draws = 600
        counts = np.zeros(mask.shape, dtype=np.int64)
        for _ in range(draws):
            a = vg.sample_actions()
            counts[np.arange(512), a] += 1
        assert (counts[~mask] == 0).all()
        legal = mask.sum(axis=1)
        assert legal.max() >= 7  # some discards of three faces
        multi = legal > 1
        expected = draws / legal[multi][:, None]
        stat = (((counts[multi] - expected) ** 2 / expected) * mask[multi]).sum()
        df = int((legal[multi] - 1).sum())
        assert stat < _chi2_bound(df), (stat, df)
        # and no option is starved: a sampler that never quits, or never takes the empty discard, fails here
        turn = vg.phase == int(Phase.TURN)
        assert counts[turn, A.QUIT].sum() > 0.45 * draws * turn.sum()


def test_sampled_actions_are_seeded():
    def run(seed, rng=None):
        vg = VectorGame(32, 2, seed=seed)
        vg.reset()
        acts = []
        for _ in range(100):
            a = vg.sample_actions(rng)
            acts.append(a)
            vg.step(a)
        return np.array(acts)

    assert np.array_equal(run(1), run(1))
    assert not np.array_equal(run(1), run(2))
    assert np.array_equal(run(1, np.random.default_rng(3)), run(1, np.random.default_rng(3)))
    assert not np.array_equal(run(1, np.random.default_rng(3)), run(1))
    # a generator leaves the games' own streams alone
    vg = VectorGame(16, 2, seed=4)
    vg.reset()
    before = vg.state()
    vg.sample_actions(np.random.default_rng(0))
    first = vg.sample_actions()
    vg.set_state(before)
    assert np.array_equal(vg.sample_actions(), first)
    with pytest.raises(VectorGameError, match="Generator"):
        vg.sample_actions(3)


@pytest.mark.parametrize("n", [2, 5])
def test_random_play_is_the_batched_engines_random_agent(n):
    """The vector game stepped by sample_actions plays the batched engine's games of the random agent."""
    from lama_dice.agents.native import play_batch

    games = 24
    vg = VectorGame(games, n, seed=9, record=True)
    vg.reset()
    first: dict[int, dict] = {}
    while len(first) < games:
        vg.step(vg.sample_actions())
        ended = np.flatnonzero(vg.terminated)
        for g, rec in zip(ended, vg.records(), strict=True):
            first.setdefault(int(g), rec)
    res = play_batch(n, ["random"], games=games, seed=9, log_games=range(games))
    for g in range(games):
        assert first[g] == res.record(g)


# ------------------------------------------------------------------ state / set_state
@pytest.mark.parametrize("n", [1, 2, 4, 6])
def test_restoring_a_state_replays_the_same_games(n, tmp_path):
    vg = VectorGame(48, n, seed=n, record=True, reward="points", rules=CONFIGS[1 + n % 3])
    vg.reset()
    for _ in range(40):
        vg.step(vg.sample_actions())
    vg.records()
    saved = vg.state()
    np.savez(tmp_path / "state.npz", **saved)
    names = ("observation", "action_mask", "current_player", "rewards", "terminated", "truncated",
             "final_observation", "round_ended", "rolled")

    def branch():
        seen, acts = [], []
        for _ in range(150):
            a = vg.sample_actions()  # drawn from the restored streams too
            acts.append(a)
            vg.step(a)
            seen.append([getattr(vg, k).copy() for k in names] + [vg.displays, vg.totals])
        return seen, acts, vg.records()

    one, acts1, recs1 = branch()
    assert any(x[4].any() for x in one) and any(x[8].max() >= 0 for x in one)  # games ended, dice rolled
    with np.load(tmp_path / "state.npz") as f:
        vg.set_state(dict(f))
    two, acts2, recs2 = branch()
    assert all(np.array_equal(a, b) for a, b in zip(acts1, acts2, strict=True))
    for x, y in zip(one, two, strict=True):
        for a, b in zip(x, y, strict=True):
            assert np.array_equal(a, b)
    assert recs1 == recs2 and recs1
    for rec in recs1:
        assert replay(rec)["valid"]
    # the observation right after a restore is the saved one
    vg.set_state(saved)
    assert np.array_equal(vg.observation, saved["observation"])
    assert np.array_equal(vg.action_mask, saved["action_mask"])


def test_set_state_refuses_other_games_states():
    vg = VectorGame(8, 2, seed=0)
    vg.reset()
    other = VectorGame(9, 2, seed=0)
    other.reset()
    with pytest.raises(VectorGameError, match="games"):
        vg.set_state(other.state())
    state = vg.state()
    del state["seed"]
    with pytest.raises(VectorGameError, match="missing seed"):
        vg.set_state(state)
    three = VectorGame(8, 3, seed=0)
    three.reset()
    with pytest.raises(VectorGameError, match="shape"):
        vg.set_state(three.state())
    with pytest.raises(VectorGameError, match="reset"):
        VectorGame(8, 2).state()
