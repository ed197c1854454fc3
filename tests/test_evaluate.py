"""Tests of the evaluation harness (lama_dice.evaluation: evaluate, run_games, backends) and `lama-dice evaluate`."""

from __future__ import annotations

import json
import sys
from collections import Counter
from itertools import permutations

import numpy as np
import pytest

from lama_dice.agents.base import Policy
from lama_dice.agents.registry import AgentSpecError
from lama_dice.cli.main import main
from lama_dice.evaluation import (
    Backend,
    EvaluationError,
    GameOutcomes,
    agent_stats,
    backends,
    evaluate,
    rotation_seating,
    run_games,
)
from lama_dice.evaluation.saving import INDEX_FILE
from lama_env import actions as A
from lama_env.errors import LamaDiceError
from lama_env.record import replay

PY = {"backend": "python"}  # the scalar backend: what these tests are about


class FirstLegal(Policy):
    """Deterministic test agent that records the size of every batch it is given."""

    spec = "first-legal"

    def __init__(self) -> None:
        super().__init__()
        self.batches: list[int] = []

    def act(self, game, legal):
        return legal[0]

    def act_batch(self, games, legals):
        self.batches.append(len(games))
        return [legal[0] for legal in legals]


class QuitFirst(Policy):
    spec = "quit-first"

    def act(self, game, legal):
        return A.QUIT if A.QUIT in legal else legal[0]


class Illegal(Policy):
    spec = "illegal"

    def act(self, game, legal):
        return 128 if 128 not in legal else 0


# ------------------------------------------------------------------ seating
@pytest.mark.parametrize("n", [1, 2, 3, 4, 5, 6])
def test_rotation_seating_balanced(n):
    games = n * 7
    s = rotation_seating(n, games)
    assert s.shape == (games, n)
    for row in s:
        assert sorted(row) == list(range(n))  # one seat per agent
    for a in range(n):
        assert (s == a).sum(axis=0).tolist() == [7] * n  # every agent in every seat equally often


@pytest.mark.parametrize("n, games", [(2, 7), (3, 10), (4, 9), (6, 13)])
def test_rotation_seating_nearly_balanced(n, games):
    s = rotation_seating(n, games)
    counts = np.stack([(s == a).sum(axis=0) for a in range(n)])
    assert counts.max() - counts.min() <= 1
    assert counts.sum() == games * n


def test_rotation_seating_cycles_orders():
    # 3 players: the two cyclic orders (who follows whom) alternate block by block
    s = rotation_seating(3, 6)
    follow = Counter((int(r[0]), int(r[1])) for r in s)
    assert set(follow) == {p for p in permutations(range(3), 2)}
    assert set(follow.values()) == {1}


# ------------------------------------------------------------ determinism
def test_same_seed_same_result_and_seed_matters():
    a = evaluate(["random", "random"], 2, 120, seed=5, **PY).to_json()
    b = evaluate(["random", "random"], 2, 120, seed=5, **PY).to_json()
    c = evaluate(["random", "random"], 2, 120, seed=6, **PY).to_json()
    assert json.dumps(a) == json.dumps(b)
    assert a["agents"] != c["agents"]


def test_workers_do_not_change_the_result():
    kw = dict(seed=3, chunk_size=40, **PY)
    one = evaluate(["threshold:0.2", "random", "always-roll"], 3, 150, workers=1, **kw)
    two = evaluate(["threshold:0.2", "random", "always-roll"], 3, 150, workers=2, **kw)
    assert json.dumps(one.to_json()) == json.dumps(two.to_json())
    np.testing.assert_array_equal(one.outcomes.totals, two.outcomes.totals)


# ----------------------------------------------------------------- stats
def _outcomes(seating, totals, points=None, rounds=None):
    seating = np.array(seating)
    totals = np.array(totals)
    return GameOutcomes(seating, totals, totals if points is None else np.array(points),
                        np.ones(len(seating), dtype=int) if rounds is None else np.array(rounds)).validate()


def test_ties_share_the_win_injected():
    out = _outcomes([[0, 1], [1, 0], [0, 1], [1, 0]], [[10, 10], [40, 20], [41, 30], [7, 7]],
                    points=[[10, 10], [30, 20], [20, 25], [7, 7]], rounds=[1, 2, 2, 1])
    a, b = agent_stats(out, ["a", "b"])
    # game 0: tie (half each); game 1: b sits at seat 0 with 40 vs a 20 -> a wins;
    # game 2: a 41, b 30 -> b wins; game 3: tie
    assert a.wins == 2.0 and b.wins == 2.0
    assert a.win_rate == 0.5
    assert a.games == 4 and a.games_by_seat == [2, 2]
    assert a.mean_final_points == pytest.approx((10 + 20 + 41 + 7) / 4)
    assert a.mean_points_per_round == pytest.approx((10 + 20 + 20 + 7) / 6)  # total round points / rounds
    assert a.mean_rank is None
    lo, hi = a.win_rate_ci95
    assert lo < 0.5 < hi


def test_mean_rank_three_players():
    out = _outcomes([[0, 1, 2], [2, 0, 1]], [[5, 5, 9], [1, 2, 3]])
    s = agent_stats(out, ["a", "b", "c"])
    # game 0: a, b tie for 1st (1.5 each), c 3rd; game 1: c 1st, a 2nd, b 3rd
    assert [x.mean_rank for x in s] == [pytest.approx(1.75), pytest.approx(2.25), pytest.approx(2.0)]
    assert [x.wins for x in s] == [0.5, 0.5, 1.0]


def test_ties_share_the_win_end_to_end():
    """With a tiny end threshold games end fast and ties are common: the win shares still add up."""
    res = evaluate(["random", "threshold:0.2"], 2, 200, seed=1, rules={"end_threshold": 1}, **PY)
    assert res.tied_games > 0
    wins = [a.wins for a in res.agents]
    assert sum(wins) == pytest.approx(200)
    out = res.outcomes
    for agent in (0, 1):
        mine = np.where(out.seating == agent, out.totals, 0).sum(axis=1)
        theirs = np.where(out.seating != agent, out.totals, 0).sum(axis=1)
        assert wins[agent] == (mine < theirs).sum() + 0.5 * (mine == theirs).sum()
    assert (mine == theirs).sum() == res.tied_games


def test_stats_match_the_replayed_records(tmp_path):
    """Every saved game replays legally, and the outcomes and statistics agree with the replays."""
    games = 24
    res = evaluate(["threshold:0.2", "random", "always-roll"], 3, games, seed=2, save_games=tmp_path, **PY)
    files = sorted(tmp_path.glob("game_*.json"))
    assert len(files) == games
    index = json.loads((tmp_path / INDEX_FILE).read_text())
    assert index["agents"] == ["threshold:0.2", "random", "always-roll"]
    pts = np.zeros(3)
    rounds = np.zeros(3)
    for entry in index["saved"]:
        rec = json.loads((tmp_path / entry["file"]).read_text())
        out = replay(rec)
        assert out["valid"] and out["game_over"]
        i = entry["game"]
        assert out["totals"] == res.outcomes.totals[i].tolist() == entry["totals"]
        assert out["winners"] == entry["winners"]
        assert len(out["rounds"]) == res.outcomes.rounds[i]
        seat_pts = np.sum([r["points"] for r in out["rounds"]], axis=0)
        assert seat_pts.tolist() == res.outcomes.round_points[i].tolist()
        for seat, agent in enumerate(entry["agents"]):
            pts[agent] += seat_pts[seat]
            rounds[agent] += len(out["rounds"])
    for a, st in enumerate(res.agents):
        assert st.mean_points_per_round == pytest.approx(pts[a] / rounds[a])
        assert st.rounds == rounds[a]


def test_a_folder_of_saved_games_is_refused_before_anything_is_played(tmp_path, capsys):
    """One run's games a folder: a second run would leave its games beside the first's, unindexed."""
    evaluate(["random", "random"], 2, 4, seed=4, save_games=tmp_path / "a", **PY)
    before = sorted(p.name for p in (tmp_path / "a").iterdir())
    with pytest.raises(EvaluationError, match=r"cannot save games in .*a: it holds saved games already "
                                              r"\(game_000000\.json, index\.json\.\.\.\); give a new or empty folder"):
        evaluate(["random", "random"], 2, 6, seed=5, save_games=tmp_path / "a", **PY)
    assert sorted(p.name for p in (tmp_path / "a").iterdir()) == before
    (tmp_path / "b").mkdir()
    (tmp_path / "b" / "notes.txt").write_text("mine")  # a folder with other files is fine
    evaluate(["random", "random"], 2, 2, seed=4, save_games=tmp_path / "b", **PY)
    assert main(["evaluate", "--agents", "random", "random", "--games", "2", "--backend", "python",
                 "--save-games", str(tmp_path / "b")]) == 2
    assert "it holds saved games already" in capsys.readouterr().err


def test_save_sample(tmp_path):
    a = evaluate(["random", "random"], 2, 50, seed=4, save_games=tmp_path / "a", save_sample=3, **PY)
    evaluate(["random", "random"], 2, 50, seed=4, save_games=tmp_path / "b", save_sample=3, **PY)
    names_a = sorted(p.name for p in (tmp_path / "a").glob("game_*.json"))
    names_b = sorted(p.name for p in (tmp_path / "b").glob("game_*.json"))
    assert len(names_a) == 3 and names_a == names_b
    assert a.saved_games == str(tmp_path / "a")
    for name in names_a:
        assert replay(json.loads((tmp_path / "a" / name).read_text()))["valid"]


# ----------------------------------------------------------- agents, batches
def test_policy_objects_batches_and_duplicates():
    pol = FirstLegal()
    res = evaluate([pol, "random", "random"], 3, 30, seed=0, chunk_size=30, **PY)
    assert [a.spec for a in res.agents] == ["first-legal", "random", "random"]
    assert max(pol.batches) > 1  # games advance in lockstep: one act_batch call for many games
    assert res.agents[1].games == res.agents[2].games == 30  # the same spec twice: two agents


def test_solo():
    res = evaluate(["threshold:0.2"], 1, 10, seed=0, **PY)
    a = res.agents[0]
    assert a.win_rate == 1.0 and a.mean_rank is None and a.games == 10
    assert a.mean_points_per_round > 0


def test_illegal_action_is_a_clear_error():
    with pytest.raises(EvaluationError, match="illegal"):
        evaluate([Illegal(), "random"], 2, 2, **PY)


def test_deterministic_agents_behave():
    # a quitter against itself: every round ends all_quit with the dealt displays
    res = evaluate([QuitFirst(), QuitFirst()], 2, 4, seed=0, **PY)
    assert all(a.quit_rate == 1.0 and a.bust_rate == 0.0 for a in res.agents)


@pytest.mark.parametrize("kwargs, match", [
    (dict(agents=["nope", "random"]), "valid specs"),
    (dict(agents=["random"], num_players=2), "one per seat"),
    (dict(agents=["random", "random", "random"], num_players=2), "one per seat"),
    (dict(agents=["random", "random"], games=0), "games"),
    (dict(agents=["random", "random"], seed=-1), "seed"),
    (dict(agents=["random", "random"], workers=-2), "workers"),
    (dict(agents=["random", "random"], backend="gpu"), "backend"),
    (dict(agents=["random", "random"], num_players=7), "num_players"),
    (dict(agents="random"), "list"),
    (dict(agents=["random", "random"], save_sample=2), "save_games"),
    (dict(agents=["random", "random"], rules={"end_threshold": 0}), "end_threshold"),
])
def test_bad_arguments(kwargs, match):
    kwargs.setdefault("games", 4)
    with pytest.raises(LamaDiceError, match=match):
        evaluate(**kwargs)


def test_bad_spec_is_an_agent_spec_error():
    with pytest.raises(AgentSpecError):
        evaluate(["random", "threshold:x"], 2, 2)


# ------------------------------------------------------------ fast backend hook
class _FakeFast:
    """Stands in for the compiled backend (what backends.load_compiled returns)."""

    name = "fast"

    def __init__(self, calls, outcomes=None, supported=True):
        self.calls, self.outcomes, self.supported = calls, outcomes, supported

    def supports(self, policies, num_players, rules):
        return self.supported

    def play_games(self, policies, seating, num_players, rules, seed):
        self.calls.append((len(policies), seating.shape, num_players, seed))
        if self.outcomes is not None:
            return self.outcomes
        g = len(seating)
        totals = np.tile(np.arange(num_players) * 10, (g, 1))  # seat 0 always wins
        return GameOutcomes(seating, totals, totals, np.ones(g, dtype=np.int64))


def _fake_fast(monkeypatch, calls, outcomes=None, supported=True):
    fake = _FakeFast(calls, outcomes, supported)
    assert isinstance(fake, Backend)
    monkeypatch.setattr(backends, "load_compiled", lambda: fake)


def test_the_backends_meet_the_protocol():
    from lama_dice.evaluation.compiled import CompiledBackend
    from lama_dice.evaluation.scalar import ScalarBackend

    assert isinstance(CompiledBackend(), Backend) and CompiledBackend().name == "fast"
    assert isinstance(ScalarBackend(), Backend) and ScalarBackend().name == "python"
    assert isinstance(backends.load_compiled(), CompiledBackend)


def test_fast_backend_hook(monkeypatch):
    calls: list = []
    _fake_fast(monkeypatch, calls)
    res = evaluate(["random", "random"], 2, 10, seed=7)
    assert res.backend == "fast" and calls == [(2, (10, 2), 2, 7)]
    assert res.agents[0].wins == 5 and res.agents[0].bust_rate is None  # seats rotate; seat 0 wins
    assert "bust_rate" not in res.to_json()["agents"][0]
    assert evaluate(["random", "random"], 2, 10, seed=7, backend="python").backend == "python"
    assert len(calls) == 1


def test_fast_backend_fallbacks(monkeypatch, tmp_path):
    calls: list = []
    _fake_fast(monkeypatch, calls)
    assert evaluate(["random", "random"], 2, 4, save_games=tmp_path).backend == "python"
    with pytest.raises(EvaluationError, match="cannot save"):
        evaluate(["random", "random"], 2, 4, save_games=tmp_path, backend="fast")
    _fake_fast(monkeypatch, calls, supported=False)
    assert evaluate(["random", "random"], 2, 4).backend == "python"
    with pytest.raises(EvaluationError, match="does not support"):
        evaluate(["random", "random"], 2, 4, backend="fast")
    monkeypatch.undo()  # the real loader, with the compiled module not importable:
    monkeypatch.setitem(sys.modules, "lama_dice.evaluation.compiled", None)
    assert evaluate(["random", "random"], 2, 4).backend == "python"
    with pytest.raises(EvaluationError, match="not available"):
        evaluate(["random", "random"], 2, 4, backend="fast")
    assert calls == []


def test_fast_backend_bad_outcomes(monkeypatch):
    bad = GameOutcomes(np.zeros((3, 2), dtype=np.int64), np.zeros((3, 2)), np.zeros((3, 2)), np.ones(3))
    _fake_fast(monkeypatch, [], outcomes=bad)
    with pytest.raises(EvaluationError, match="bad outcomes"):
        evaluate(["random", "random"], 2, 4)


def test_run_games_custom_seating_and_progress():
    seen = []
    seating = np.array([[0, 1], [1, 0], [0, 2], [2, 1]])
    out, backend = run_games(["random", "random", "always-roll"], seating, 2, seed=1, chunk_size=3,
                             progress=lambda done, total: seen.append((done, total)), **PY)
    assert backend == "python"
    np.testing.assert_array_equal(out.seating, seating)
    assert seen == [(3, 4), (4, 4)]
    assert out.totals.shape == (4, 2) and (out.rounds >= 1).all()


# ------------------------------------------------------------------- JSON / CLI
def test_json_schema():
    for n, specs in ((2, ["threshold:0.2", "random"]), (3, ["random", "always-roll", "random"])):
        data = evaluate(specs, n, 3 * n, seed=0, **PY).to_json()
        assert data["players"] == n and data["games"] == 3 * n
        assert data["ci"] == "wilson" and data["confidence"] == 0.95
        assert [a["spec"] for a in data["agents"]] == specs  # in the order given
        for a in data["agents"]:
            for key in ("win_rate", "win_rate_ci95", "mean_points_per_round", "mean_final_points", "wins"):
                assert key in a
            lo, hi = a["win_rate_ci95"]
            assert 0 <= lo <= a["win_rate"] <= hi <= 1
            assert ("mean_rank" in a) == (n > 2)
        json.dumps(data, allow_nan=False)


def test_cli_evaluate_json(tmp_path, capsys):
    out = tmp_path / "r.json"
    rc = main(["evaluate", "--players", "2", "--agents", "random", "threshold:0.2", "--games", "20",
               "--json", str(out), "--backend", "python", "--no-progress"])
    assert rc == 0
    data = json.loads(out.read_text())
    assert [a["spec"] for a in data["agents"]] == ["random", "threshold:0.2"]
    shown = capsys.readouterr().out
    assert "threshold:0.2" in shown and "95% CI" in shown


def test_cli_json_to_stdout(capsys):
    rc = main(["evaluate", "--agents", "random", "random", "random", "--games", "6", "--json", "-",
               "--backend", "python", "--rule", "end_threshold=20"])
    assert rc == 0
    data = json.loads(capsys.readouterr().out)
    assert data["players"] == 3 and data["rules"]["end_threshold"] == 20
    assert "mean_rank" in data["agents"][0]


@pytest.mark.parametrize("argv, match", [
    (["--agents", "nope", "random"], "unknown agent spec 'nope'; valid specs: random"),
    (["--players", "3", "--agents", "random", "random"], "--players 3 needs 3"),
    (["--agents", "random", "random", "--games", "0"], "games must be at least 1"),
    (["--agents", "random", "random", "--rule", "end_threshold"], "KEY=VALUE"),
    (["--agents", "random", "random", "--save-sample", "2"], "--save-games"),
    (["--league", "random"], "at least 2 agents"),
])
def test_cli_errors_are_one_line(argv, match, capsys):
    rc = main(["evaluate", *argv, "--no-progress"])
    err = capsys.readouterr().err
    assert rc == 2
    assert match in err
    assert err.count("\n") == 1 and "Traceback" not in err


def test_cli_solo_table_reports_points_not_wins(capsys):
    """A solo game is always "won": the table shows points per round with its interval, no win column."""
    rc = main(["evaluate", "--players", "1", "--agents", "threshold:0.2", "--games", "40", "--seed", "0",
               "--no-progress"])
    out = capsys.readouterr().out
    assert rc == 0
    header = next(line for line in out.splitlines() if "agent" in line and "pts/rd" in line)
    assert "win" not in header.split() and "95% CI" in header
    assert "100.0%" not in out and "1 player," in out


def test_cli_json_to_an_unwritable_path_is_one_line(tmp_path, capsys):
    rc = main(["evaluate", "--agents", "random", "random", "--games", "4", "--no-progress",
               "--json", str(tmp_path / "missing" / "out.json")])
    err = capsys.readouterr().err
    assert rc == 2 and err.count("\n") == 1 and "out.json" in err


class _FirstLegal(Policy):
    """Played at Python speed (no native form): the scalar backend, in worker processes with workers > 1."""

    def act(self, game, legal):
        return legal[0]


def test_agents_that_cannot_cross_to_worker_processes_get_a_one_line_error():
    """What the workers' start-up would refuse (torch: a tensor that carries autograd history) is refused first."""
    torch = pytest.importorskip("torch")
    pytest.importorskip("torch.multiprocessing")  # registers torch's reductions, as the trainer's imports do

    from lama_dice.evaluation.evaluate import EvaluationError

    agent = _FirstLegal()
    agent.cache = torch.ones(2, requires_grad=True) * 2  # e.g. an SB3 policy's last action distribution
    with pytest.raises(EvaluationError, match=r"cannot send the agents to worker processes .*use workers=1"):
        evaluate([agent, "random"], 2, 256, workers=2, chunk_size=16)
