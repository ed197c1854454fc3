"""The benchmark suite lama-dice-suite/3 and ``lama-dice score``.

* the normalization constants are the solver's exact values (the optimum and the uniform-random policy),
  and the random policy's exact value is checked against plain value iteration;
* on the solo task ``optimal`` scores 1 and ``random`` 0, within their intervals;
* the same seeds give the same numbers (twice, with 1 or 2 workers, and the stored values of a
  deterministic heuristic), and each match's ``lama-dice evaluate`` command replays it exactly;
* ``python:MODULE:NAME`` specs work through the registry (so in every tool);
* a malformed spec, an unknown task and an illegal action are one-line errors (exit 2) naming what failed,
  the illegal action's task and game checked against the recorded games;
* the retired suites /1 and /2 answer one line naming /3 and 0.1.0, and a saved card of theirs still shows.
"""

from __future__ import annotations

import json
import math
import shlex
import subprocess
import sys
import textwrap

import pytest

from lama_dice.agents.base import Policy
from lama_dice.agents.registry import AgentSpecError, make_agent
from lama_dice.agents.solo_random import RandomSoloValue, random_policy_value
from lama_dice.agents.solver import solver_for
from lama_dice.cli.main import main
from lama_dice.evaluation import evaluate
from lama_dice.evaluation.suite import (
    RETIRED_SUITES,
    SUITE,
    SUITE_VERSION,
    SUITES,
    TASKS,
    Measure,
    SuiteError,
    normalize,
    resolve_tasks,
    run_suite,
)
from lama_env import __version__
from lama_env.errors import RetiredError
from lama_env.rules import RulesConfig, score_display
from lama_env.transitions import FULL_ROW, apply_bust, apply_discard, grouped_chance_outcomes, resolve_roll

BAD_POLICIES = '''
from lama_dice.agents.base import Policy
from lama_env import actions as A


class QuitAlways(Policy):
    def act(self, game, legal):
        return A.QUIT if A.QUIT in legal else legal[0]


class BadOnLlamaDeals(QuitAlways):
    """Quits at once, except on a first-round deal with two llamas or more: then an illegal action."""

    def act(self, game, legal):
        if game.round_index == 0 and game.displays[game.current_player][0] >= 2:
            return 999
        return super().act(game, legal)


class Duck:
    def act(self, game, legal):
        return legal[-1]


def make_quitter():
    return QuitAlways()


INSTANCE = QuitAlways()
NOT_A_POLICY = 3
'''


@pytest.fixture()
def user_module(tmp_path, monkeypatch):
    """A user's policies, in ``my_policies.py`` in the current directory."""
    path = tmp_path / "my_policies.py"
    path.write_text(textwrap.dedent(BAD_POLICIES), encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    yield path
    sys.modules.pop("my_policies", None)


# ------------------------------------------------------------------ the suite's definition
def test_the_suite_is_versioned_and_its_counts_give_one_point_intervals():
    assert SUITE_VERSION == "lama-dice-suite/3"
    assert [t.name for t in SUITE] == ["solo", "duel", "table4", "duel-also-match", "solo-lean-dice"]
    assert [t.name for t in SUITE if t.generalization] == ["duel-also-match", "solo-lean-dice"]
    seeds = [m.seed for t in SUITE for m in t.matches]
    assert len(seeds) == len(set(seeds))
    for t in SUITE:
        assert t.games % t.players == 0  # every seat equally often
        if t.players > 1:  # the worst case p = 1/2: a 95% half-width of at most one percentage point
            assert 1.959964 * math.sqrt(0.25 / t.games) <= 0.0100
    assert [m.opponents for m in TASKS["duel"].matches] == [("optimal",), ("lookahead",), ("ppo:2p-v1",)]


@pytest.mark.parametrize("task", [t for t in SUITE if t.normalization is not None], ids=lambda t: t.name)
def test_normalization_constants_are_the_solvers_exact_values(task):
    rnd, opt = task.normalization
    assert opt == pytest.approx(solver_for(task.rules).expected_round_points(), abs=1e-9)
    assert rnd == pytest.approx(random_policy_value(task.rules), abs=1e-9)
    assert normalize(rnd, rnd, opt) == 0.0 and normalize(opt, rnd, opt) == 1.0


def _value_iteration(display, rules, sweeps=400):
    """The random policy's value at ``display`` by plain value iteration (an independent check)."""
    displays, todo = set(), [tuple(display)]
    while todo:  # every display reachable from ``display``
        d = todo.pop()
        if d in displays or not any(d):
            continue
        displays.add(d)
        for dice, _ in grouped_chance_outcomes(rules):
            kind, legal = resolve_roll(d, FULL_ROW, dice, last_player=True, rules=rules)
            if kind == "discard":
                todo += [apply_discard(d, a)[0] for a in legal]
    v = dict.fromkeys(displays, 0.0)
    for _ in range(sweeps):
        new = {}
        for d in displays:
            roll = 0.0
            for dice, p in grouped_chance_outcomes(rules):
                kind, legal = resolve_roll(d, FULL_ROW, dice, last_player=True, rules=rules)
                if kind == "discard":
                    roll += p * sum(v.get(apply_discard(d, a)[0], 0.0) for a in legal) / len(legal)
                elif kind == "triple_llama":
                    roll += p * v[d]
                else:
                    roll += p * score_display(apply_bust(d, FULL_ROW)[0])
            new[d] = 0.5 * score_display(d) + 0.5 * roll
        v = new
    return v[tuple(display)]


@pytest.mark.parametrize("rules", [RulesConfig(), RulesConfig(must_discard=False),
                                   RulesConfig(triple_llama="also_match")], ids=["default", "free", "also_match"])
@pytest.mark.parametrize("display", [(0, 0, 0, 0, 0, 0, 1), (1, 0, 0, 0, 0, 1, 0), (0, 1, 0, 1, 0, 0, 1)])
def test_random_value_agrees_with_value_iteration(rules, display):
    assert RandomSoloValue(rules).value(display) == pytest.approx(_value_iteration(display, rules), abs=1e-9)


# ------------------------------------------------------------------ optimal is 1, random is 0
@pytest.mark.parametrize("spec, target", [("optimal", 1.0), ("random", 0.0)])
def test_optimal_scores_one_and_random_zero_within_their_intervals(spec, target):
    card = run_suite(spec, ["solo"])
    assert card.official and card.tasks[0].games == 15_000
    score = card.tasks[0].headline
    assert score.name == "normalized score"
    assert score.ci95[0] <= target <= score.ci95[1]
    assert score.ci95[1] - score.ci95[0] <= 0.025  # about +-0.01
    ppr = card.tasks[0].measures[1]
    exact = TASKS["solo"].normalization[0 if spec == "random" else 1]
    assert ppr.ci95[0] <= exact <= ppr.ci95[1]


# ------------------------------------------------------------------ determinism
#: threshold:0.2 on solo (fast backend) and table4 (scalar backend), 256 games each: wins, rounds,
#: round points and final points summed over its games, under lama-dice-suite/3 (every backend on the
#: compiled engine's streams).  The same on every machine.
EXPECTED = {"solo": (256.0, 1145, 12503, 12095), "table4": (32.5, 1112, 9804, 9264)}


def _sums(card):
    out = {}
    for t in card.tasks:
        a = t.matches[0].result.agents[0]
        out[t.task.name] = (a.wins, a.rounds, round(a.mean_points_per_round * a.rounds),
                            round(a.mean_final_points * a.games))
    return out


def _stable(data):
    """The JSON report without what may differ between runs (times, machine, workers)."""
    if isinstance(data, dict):
        return {k: _stable(v) for k, v in data.items() if k not in ("elapsed_s", "environment", "workers")}
    if isinstance(data, list):
        return [_stable(v) for v in data]
    return data


def test_same_seeds_same_results_and_the_stored_values():
    first = run_suite("threshold:0.2", ["solo", "table4"], games=256)
    again = run_suite("threshold:0.2", ["solo", "table4"], games=256, workers=2)
    assert _stable(first.to_json()) == _stable(again.to_json())
    assert _sums(first) == EXPECTED
    assert [t.matches[0].result.backend for t in first.tasks] == ["fast", "python"]
    assert not first.official and first.games_override == 256


def test_suite_3_plays_the_compiled_streams_on_either_backend():
    """/3's matches are the fast backend's games on either backend, with any chunk size and workers."""
    assert list(SUITES) == [3] and SUITES[3].version == "lama-dice-suite/3"
    three = run_suite("threshold:0.2", ["solo", "table4"], games=256)
    assert three.suite == 3
    by_chunk = evaluate(["threshold:0.2", "optimal", "optimal", "optimal"], games=256, seed=4001, chunk_size=7,
                        workers=2)  # table4's match alone, other chunks and workers: the same games
    assert _stable(by_chunk.to_json()) == _stable(three.tasks[1].matches[0].result.to_json())


def test_json_report_and_each_matchs_evaluate_command_replays_it(tmp_path, capsys):
    out = tmp_path / "card.json"
    assert main(["score", "threshold:0.2", "--tasks", "duel-also-match", "solo-lean-dice", "--games", "200",
                 "--no-progress", "--json", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "score card" in printed and "duel-also-match *" in printed and "generalization" in printed
    data = json.loads(out.read_text())
    assert data["suite"] == "lama-dice-suite/3" and data["package_version"] == __version__
    assert data["agent"] == "threshold:0.2" and data["official"] is False
    assert data["rerun"] == "lama-dice score threshold:0.2 --tasks duel-also-match solo-lean-dice --games 200"
    duel, solo = data["tasks"]
    assert duel["rules"]["triple_llama"] == "also_match" and duel["generalization"] is True
    assert solo["rules"]["dice"][0] == ["1", "2", "3", "4", "5", "L"]
    assert solo["normalization"]["optimal"] == TASKS["solo-lean-dice"].normalization[1]
    for task in (duel, solo):
        m = task["matches"][0]
        assert m["seed"] == TASKS[task["name"]].matches[0].seed and m["games"] == 200
        cmd = shlex.split(m["evaluate_command"])
        assert cmd[:2] == ["lama-dice", "evaluate"]
        replay = tmp_path / f"{task['name']}.json"
        assert main([*cmd[1:], "--no-progress", "--json", str(replay)]) == 0
        assert json.loads(replay.read_text()) == m["result"]


# ------------------------------------------------------------------ python:MODULE:NAME
def test_python_specs_build_policies_through_the_registry(user_module):
    for spec in ("python:my_policies:QuitAlways", "python:my_policies.py:QuitAlways",
                 f"python:{user_module}:make_quitter", "python:my_policies:INSTANCE"):
        p = make_agent(spec, seed=0)
        assert isinstance(p, Policy) and p.spec == spec
    assert make_agent("python:my_policies:INSTANCE") is not make_agent("python:my_policies:INSTANCE")
    duck = make_agent("python:my_policies:Duck")
    assert isinstance(duck, Policy) and duck.act(None, [0, 1]) == 1
    res = evaluate(["python:my_policies:QuitAlways", "threshold:0.2"], games=20, seed=0)
    assert res.agents[0].quit_rate == 1.0
    from lama_env.opponents import resolve  # the environments' opponents= go through the registry too

    assert type(resolve("python:my_policies:QuitAlways")).__name__ == "QuitAlways"


def test_progress_counts_every_game_of_the_run():
    seen = []
    run_suite("threshold:0.2", ["solo", "duel-also-match"], games=300, progress=lambda *a: seen.append(a))
    assert seen[0] == ("solo", 0, 600) and seen[-1] == ("duel-also-match vs optimal", 600, 600)
    assert [d for _, d, _ in seen] == sorted(d for _, d, _ in seen)


@pytest.mark.parametrize("spec, message", [
    ("python:my_policies", "python:MODULE:NAME"),
    ("python:no_such_module:X", "no module named 'no_such_module'"),
    ("python:missing.py:X", "no Python file"),
    ("python:my_policies:Nope", "has no 'Nope'"),
    ("python:my_policies:NOT_A_POLICY", "not a Policy"),
])
def test_bad_python_specs_are_spec_errors(user_module, spec, message):
    with pytest.raises(AgentSpecError, match=message):
        make_agent(spec)


# ------------------------------------------------------------------ errors: one line, exit 2
@pytest.mark.parametrize("args, message", [
    (["threshold:x"], "threshold:T needs a probability"),
    (["nonsense"], "unknown agent spec 'nonsense'"),
    (["random", "--tasks", "solo", "nope"], "unknown task 'nope'"),
    (["random", "--games", "0"], "games must be a positive integer"),
    ([], "give the AGENT_SPEC"),
])
def test_bad_arguments_are_one_line_errors(capsys, args, message):
    assert main(["score", *args, "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("lama-dice score: error: ") and message in err and err.count("\n") == 1


def _first_llama_deal(tmp_path, games):
    """The first game (in game order) whose first deal has two llamas or more, from the recorded games."""
    evaluate(["python:my_policies:QuitAlways"], num_players=1, games=games, seed=TASKS["solo"].matches[0].seed,
             save_games=tmp_path / "games", backend="python")
    for i in range(games):
        rec = json.loads((tmp_path / "games" / f"game_{i:06d}.json").read_text())
        if rec["rounds"][0]["hands"][0].count("L") >= 2:
            return i
    return None


@pytest.mark.parametrize("workers", [1, 2])
def test_an_illegal_action_names_the_task_and_the_game(user_module, tmp_path, workers):
    expected = _first_llama_deal(tmp_path, 128)  # the first chunk (128 games)
    assert expected is not None and expected > 0
    proc = subprocess.run([sys.executable, "-m", "lama_dice", "score", "python:my_policies:BadOnLlamaDeals",
                           "--tasks", "solo", "--workers", str(workers), "--no-progress"],
                          cwd=user_module.parent, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr and proc.stderr.count("\n") == 1
    assert proc.stderr.startswith(f"lama-dice score: error: task solo (seed 1001), game {expected} (round 1, seat 0): "
                                  "agent 'python:my_policies:BadOnLlamaDeals' chose the illegal action 999")


def test_an_illegal_action_at_a_table_names_the_match(user_module):
    with pytest.raises(SuiteError, match=r"^task duel-also-match vs optimal \(seed 5001\), game \d+ \(round 1, "):
        run_suite("python:my_policies:BadOnLlamaDeals", ["duel-also-match"], games=300)


def test_a_policy_exception_names_the_task(user_module, tmp_path):
    (tmp_path / "crash.py").write_text(textwrap.dedent('''
        from lama_dice.agents.base import Policy
        class Crash(Policy):
            def act(self, game, legal):
                raise RuntimeError("my bug")
    '''))
    with pytest.raises(RuntimeError, match="my bug") as info:
        run_suite("python:crash.py:Crash", ["solo"], games=10)
    assert any("task solo (seed 1001)" in n for n in info.value.__notes__)


def test_networks_play_the_tasks_of_their_player_count():
    card = run_suite("ppo:2p", games=40)
    assert [t.task.name for t in card.tasks] == ["duel", "duel-also-match"]
    assert set(card.skipped) == {"solo", "table4", "solo-lean-dice"}
    assert "trained for 2 players" in card.skipped["solo"]
    data = card.to_json()
    assert data["rerun"] == "lama-dice score ppo:2p --games 40" and len(data["skipped"]) == 3
    with pytest.raises(SuiteError, match=r"^task solo: .*trained for 2 players, the game has 1"):
        run_suite("ppo:2p", ["solo"], games=10)


def test_list_prints_the_suite(capsys):
    assert main(["score", "--list"]) == 0
    out = capsys.readouterr().out
    for t in SUITE:
        assert t.name in out
        for m in t.matches:
            assert f"seed {m.seed}" in out
    assert "random 18.569159, optimal 10.177903" in out


def test_every_opponent_of_the_suite_builds():
    """Every opponent is a valid spec (``ppo:2p`` ships with the package)."""
    for spec in {s for t in SUITE for m in t.matches for s in m.opponents}:
        assert isinstance(make_agent(spec), Policy)


# ------------------------------------------------------------------ the optional exploit task; the retired suites
def test_the_suite_is_the_five_tasks_plus_the_optional_exploit_task():
    assert SUITES[3].tasks[:-1] == SUITE  # the five tasks every version has played
    exploit = SUITES[3].tasks[-1]
    assert exploit.name == "exploit" and exploit.optional and exploit.exploit is not None and exploit.players == 2
    assert [t.name for t in resolve_tasks(None)] == [t.name for t in SUITE]  # optional: only when named
    with pytest.raises(SuiteError, match=r"unknown suite 4 \(suites: 3\)"):
        resolve_tasks(None, 4)


@pytest.mark.parametrize("number", RETIRED_SUITES)
def test_a_retired_suite_answers_one_line_naming_suite_3(number, capsys):
    assert RETIRED_SUITES == (1, 2)
    for call in (lambda: resolve_tasks(None, number), lambda: run_suite("random", ["solo"], games=4, suite=number)):
        with pytest.raises(RetiredError, match=rf"^lama-dice-suite/{number} was retired in 0\.2\.0 \(0\.1\.0 was the "
                                               r"last version with it\): use lama-dice-suite/3"):
            call()
    for argv in (["score", "random", "--suite", str(number)], ["score", "--list", "--suite", str(number)]):
        assert main(argv) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and err[0].startswith(f"lama-dice score: error: lama-dice-suite/{number} was retired "
                                                   "in 0.2.0 (0.1.0 was the last version with it): use "
                                                   "lama-dice-suite/3")


def test_a_saved_card_of_a_retired_suite_still_shows_on_the_results_page(tmp_path):
    """A saved score card is the user's data: /1's and /2's still rank on the Results page, beside /3's."""
    from lama_dice.cli.web.results import load_results

    card = run_suite("threshold:0.2", ["solo"], games=8).to_json()
    for n in (1, 2, 3):
        (tmp_path / f"card{n}.json").write_text(json.dumps(dict(card, suite=f"lama-dice-suite/{n}")))
    got = load_results(tmp_path)
    assert not got["skipped"]
    assert {(t["suite"], t["task"]) for t in got["tasks"]} == {(f"lama-dice-suite/{n}", "solo") for n in (1, 2, 3)}


def test_the_exploit_task_needs_a_runner_and_reports_what_it_returns():
    with pytest.raises(SuiteError, match="the exploit task trains"):
        run_suite("threshold:0.2", ["exploit"])
    calls = []

    def fake(spec, task, workers, games):
        calls.append((spec, task.name, workers, games))
        return [Measure("best responder's win rate", 0.6, (0.59, 0.61), 10_000, percent=True)], {"budget": "b"}

    card = run_suite("threshold:0.2", ["exploit"], exploit=fake).to_json()
    assert calls == [("threshold:0.2", "exploit", 1, None)]
    task = card["tasks"][0]
    assert task["headline"]["value"] == 0.6 and task["exploit"] == {"budget": "b"} and task["matches"] == []
    assert card["rerun"] == "lama-dice score threshold:0.2 --tasks exploit"


def test_score_refuses_an_unknown_suite_in_one_line(capsys):
    assert main(["score", "random", "--suite", "7"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == ["lama-dice score: error: unknown suite 7 (suites: 3)"]


def test_the_scores_default_suite_is_the_latest():
    from lama_dice.cli.commands import score
    from lama_dice.evaluation.suite import LATEST

    assert score.LATEST == LATEST == 3
