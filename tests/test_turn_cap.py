"""Rules that cannot end are refused, and every round is bounded by the turn cap in every engine and env.

The refused rules (every face of the dice a llama, ``triple_llama="chip_only"``) are the test case
of an endless round: built here past the check (:func:`endless_rules`), with a small
``max_round_turns``, every engine and env must cut the round after exactly that many turns and
score it as it stands (``ended_by == "turn_cap"``), instead of hanging.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from lama_env import LamaGame, RulesConfig, RulesError
from lama_env import actions as A
from lama_env.engine import Phase
from lama_env.roundend import turns
from lama_env.rules import DEFAULT_MAX_ROUND_TURNS, FACE_INDEX, RULES_FIELDS, score_display
from lama_env.transitions import ROUND_ENDINGS, TURN_CAP, cut_round

ALL_LLAMAS = (("L",) * 6,) * 3
CAP = 7


def endless_rules(cap: int = CAP, **fields) -> RulesConfig:
    """The refused all-llama rules, built past :meth:`RulesConfig.__post_init__`'s check (end_threshold 1)."""
    values = {"triple_llama": "chip_only", "must_discard": True, "end_threshold": 1, "dice": ALL_LLAMAS,
              "max_round_turns": cap, **fields}
    rules = object.__new__(RulesConfig)
    for key, value in values.items():
        object.__setattr__(rules, key, value)
    object.__setattr__(rules, "dice_index", tuple(tuple(FACE_INDEX[f] for f in die) for die in rules.dice))
    return rules


# ------------------------------------------------------------------ the refusal
@pytest.mark.parametrize("fields", [
    {"dice": ALL_LLAMAS},
    {"dice": [list(d) for d in ALL_LLAMAS], "must_discard": False, "end_threshold": 5},
])
def test_rules_whose_rounds_cannot_end_are_refused_in_one_line(fields):
    for make in (lambda: RulesConfig(**fields), lambda: RulesConfig.from_dict(fields),
                 lambda: RulesConfig.from_keywords(fields)):
        with pytest.raises(RulesError, match="a round could never end: every face of the dice is a llama") as e:
            make()
        assert "\n" not in str(e.value)


def test_rules_that_can_end_are_accepted():
    RulesConfig(dice=ALL_LLAMAS, triple_llama="also_match")  # a triple llama is an ordinary roll too
    RulesConfig(dice=(("L",) * 6, ("L",) * 6, ("L",) * 5 + ("1",)))  # a number face: 1 roll in 6 changes things


def test_max_round_turns_is_a_rules_field_with_a_bounded_default():
    assert "max_round_turns" in RULES_FIELDS and TURN_CAP in ROUND_ENDINGS
    assert RulesConfig().max_round_turns == DEFAULT_MAX_ROUND_TURNS == 1000
    assert "max_round_turns" not in RulesConfig().to_dict()  # records of the default rules are unchanged
    rules = RulesConfig.from_dict({"max_round_turns": 50})
    assert rules.to_dict()["max_round_turns"] == 50 and RulesConfig.from_dict(rules.to_dict()) == rules
    for bad, msg in ((0, "1..1,000,000"), (10**7, "1..1,000,000"), (True, "an integer"), ("9", "an integer")):
        with pytest.raises(RulesError, match=msg):
            RulesConfig(max_round_turns=bad)
    assert cut_round(49, rules) is None and cut_round(50, rules) == TURN_CAP


def test_the_refusal_reaches_every_front_end():
    import gymnasium

    from lama_env import lama_dice_v1
    from lama_env.vector import VectorGame

    for make in (lambda: LamaGame(2, {"dice": ALL_LLAMAS}),
                 lambda: gymnasium.make("LamaDice-v1", opponents=["always-roll"], dice=ALL_LLAMAS, learner_seat=0),
                 lambda: lama_dice_v1.env(dice=ALL_LLAMAS),
                 lambda: VectorGame(4, 2, dice=ALL_LLAMAS)):
        with pytest.raises(RulesError, match="a round could never end"):
            make()


def test_the_cli_refuses_them_in_one_line():
    dice = json.dumps([list(d) for d in ALL_LLAMAS])
    for argv in (["evaluate", "--agents", "threshold:0.2", "random", "--games", "10", "--rule", f"dice={dice}"],
                 ["evaluate", "--agents", "threshold:0.2", "random", "--games", "10", "--backend", "python",
                  "--rule", f"dice={dice}"]):
        proc = subprocess.run([sys.executable, "-m", "lama_dice", *argv], capture_output=True, text=True,
                              timeout=300)
        assert proc.returncode == 2, proc.stderr
        lines = proc.stderr.strip().splitlines()
        assert len(lines) == 1 and "a round could never end" in lines[0], proc.stderr


# ------------------------------------------------------------------ the engines
def _check_cut_round(result: dict, displays_points: list[int]) -> None:
    assert result["ended_by"] == TURN_CAP and result["went_out"] is None
    assert result["points"] == displays_points


def test_the_engine_cuts_an_endless_round_after_the_cap():
    game = LamaGame(2, endless_rules(), seed=0)
    displays = game.displays
    while not game.game_over:  # (the cut round ends the game: these rules' totals reach the threshold)
        assert game.rounds_finished == 0 and turns(game) < CAP
        game.step(A.ROLL)
    assert turns(game) == CAP and game.last_round["ended_by"] == TURN_CAP and game.game_over
    res = game.result()["rounds"][0]
    _check_cut_round(res, [score_display(d) for d in displays])
    # every roll was a triple llama returning a chip (from 0: nothing), so the totals are the round's points
    assert list(game.totals) == res["points"] and game.last_round["triple_llamas"] == (4, 3)


def test_the_cap_counts_turns_not_decisions():
    """A turn is a roll or a quit; a discard or a take after a roll belongs to its turn."""
    rules = RulesConfig(max_round_turns=2)
    for seed in range(30):
        game = LamaGame(3, rules, seed=seed, max_rounds=1)  # the game ends with the round: its turns stay readable
        decisions = 0
        while not game.game_over and game.rounds_finished == 0:  # the first round (rounds flow on)
            game.step(A.ROLL if game.phase is Phase.TURN else game.legal_actions()[-1])
            decisions += 1
        taken = len(game.to_record()["rounds"][0]["turns"])  # a roll or a quit each
        assert taken <= 2
        if game.result()["rounds"][0]["ended_by"] == TURN_CAP:
            assert taken == 2 and game.result()["rounds"][0]["went_out"] is None


def test_capped_records_replay_and_say_how_the_round_ended():
    from lama_env.record import replay

    rules = RulesConfig(max_round_turns=3, must_discard=False)
    game = LamaGame(2, rules, seed=4, record=True)
    while not game.game_over:
        game.step(A.ROLL if game.phase is Phase.TURN else game.legal_actions()[0])
    rec = game.to_record()
    assert rec["rules"]["max_round_turns"] == 3
    result = replay(json.loads(json.dumps(rec)))
    assert result["valid"] and TURN_CAP in {r["ended_by"] for r in result["rounds"]}


def test_the_batched_kernel_cuts_the_round_as_the_engine_does():
    from lama_dice.agents.native import play_batch
    from lama_env.record import replay

    res = play_batch(2, ["always-roll", "threshold:0.2"], games=6, rules=endless_rules(), seed=0,
                     log_games=range(6))
    assert (res.rounds == 1).all()
    for g in range(6):
        result = res.result(g)
        (rnd,) = result["rounds"]
        assert rnd["ended_by"] == TURN_CAP
        assert len(res.record(g)["rounds"][0]["turns"]) == CAP
    # a real config with a small cap: the kernel's records replay in the scalar engine, cut rounds and all
    rules = RulesConfig(must_discard=False, max_round_turns=4)
    res = play_batch(3, ["always-roll", "random", "threshold:0.3"], games=20, rules=rules, seed=1,
                     log_games=range(20))
    cut = 0
    for g in range(20):
        result = replay(res.record(g))
        assert result == res.result(g)
        cut += sum(r["ended_by"] == TURN_CAP for r in result["rounds"])
    assert cut > 0


def test_the_fast_and_python_evaluation_backends_end_such_games():
    from lama_dice.evaluation import evaluate

    for backend in ("fast", "python"):
        result = evaluate(["always-roll", "random"], games=8, rules=endless_rules(), seed=0, backend=backend)
        assert result.games == 8


def test_the_vector_game_cuts_the_round():
    from lama_env.vector import VectorGame

    vg = VectorGame(3, 2, seed=0, rules=endless_rules(), record=True)
    vg.reset()
    for step in range(CAP):
        assert not vg.terminated.any()
        vg.step(np.zeros(3, dtype=np.int64))  # roll
        if step < CAP - 1:
            assert not vg.round_ended.any()
    assert vg.terminated.all()
    for rec in vg.records():
        assert len(rec["rounds"][0]["turns"]) == CAP


def test_the_gymnasium_env_does_not_hang_after_the_learner_quits():
    """The issue's case: the learner quits, an always-rolling opponent rolls triple llamas for ever."""
    import gymnasium

    env = gymnasium.make("LamaDice-v1", opponents=["always-roll"], rules=endless_rules(), learner_seat=0)
    env.reset(seed=0)
    _, _, terminated, truncated, _ = env.step(A.QUIT)
    assert terminated and not truncated
    assert env.unwrapped.game.last_round["ended_by"] == TURN_CAP


class _PythonAlwaysRoll:
    """``always-roll`` as a plain Python policy (the vector env plays it from Python, not natively)."""

    def __init__(self) -> None:
        from lama_dice.agents.registry import make_agent

        self._inner = make_agent("always-roll")

    def __getattr__(self, name):
        if name == "native":
            raise AttributeError(name)
        return getattr(self._inner, name)


@pytest.mark.parametrize("native", [True, False])
def test_the_vector_env_cuts_the_round(native):
    from lama_env.vector_env import LamaDiceVectorEnv

    opponents = "always-roll" if native else [_PythonAlwaysRoll(), _PythonAlwaysRoll()]
    env = LamaDiceVectorEnv(num_envs=4, num_players=3, opponents=opponents, rules=endless_rules(), learner_seat=0)
    env.reset(seed=0)
    _, _, terminated, truncated, _ = env.step(np.full(4, A.QUIT))
    assert terminated.all() and not truncated.any()


def test_the_pettingzoo_env_cuts_the_round():
    from lama_env import lama_dice_v1

    env = lama_dice_v1.env(num_players=2, rules=endless_rules())
    env.reset(seed=0)
    steps = 0
    for _agent in env.agent_iter():
        _, _, term, trunc, _ = env.last()
        env.step(None if term or trunc else A.ROLL)
        steps += 1
        assert steps < 100
    assert env.unwrapped.game.last_round["ended_by"] == TURN_CAP


def test_openspiel_cuts_the_round():
    pyspiel = pytest.importorskip("pyspiel")
    import lama_env.openspiel as LO

    game = pyspiel.load_game("python_lama_dice", {"max_round_turns": 2, "end_threshold": 5})
    state = game.new_initial_state()
    endings = set()
    rng = np.random.default_rng(0)
    while not state.is_terminal():
        if state.is_chance_node():
            actions, probs = zip(*state.chance_outcomes(), strict=True)
            state.apply_action(int(rng.choice(actions, p=probs)))
        else:
            state.apply_action(A.ROLL if A.ROLL in state.legal_actions() else state.legal_actions()[-1])
        endings.update(r["ended_by"] for r in state.lama_game.result()["rounds"])
        assert turns(state.lama_game) <= 2
    assert TURN_CAP in endings
    with pytest.raises(Exception, match="a round could never end"):
        pyspiel.load_game("python_lama_dice", {"dice": "LLLLLL/LLLLLL/LLLLLL"})
    assert LO.load(2, RulesConfig(max_round_turns=9)).rules.max_round_turns == 9


# ------------------------------------------------------------------ Ctrl-C
_INTERRUPTED = """
import signal, sys, time
# a shell without job control starts background commands with SIGINT ignored, and Python keeps that:
# give the command the handler an interactive shell's Ctrl-C finds
signal.signal(signal.SIGINT, signal.default_int_handler)
from lama_dice.cli.main import main
from lama_env.batched import compile_kernel
compile_kernel()
print("ready", flush=True)
sys.exit(main(sys.argv[1:]))
"""


def test_a_long_compiled_evaluation_stops_on_ctrl_c(tmp_path: Path):
    """SIGINT during the fast backend's compiled games: the command stops at once with one line, saving nothing.

    Two games to a billion points: each takes tens of millions of rounds (minutes) in one kernel, which a
    Ctrl-C could not stop if the kernel did not return to Python every ``KERNEL_STEPS`` transitions.
    """
    out = tmp_path / "out.json"
    out.write_text("kept")
    argv = ["evaluate", "--agents", "threshold:0.2", "always-roll", "--games", "2", "--no-progress",
            "--rule", "end_threshold=1000000000", "--json", str(out)]
    proc = subprocess.Popen([sys.executable, "-c", _INTERRUPTED, *argv], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env={**os.environ, "PYTHONUNBUFFERED": "1"})
    try:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
        time.sleep(3.0)  # well inside the first game
        assert proc.poll() is None
        proc.send_signal(signal.SIGINT)
        t0 = time.perf_counter()
        _, err = proc.communicate(timeout=120)
        waited = time.perf_counter() - t0
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130, err
    assert err.strip().splitlines() == ["lama-dice evaluate: interrupted"]
    assert waited < 20, waited
    assert out.read_text() == "kept"


def test_batches_cut_into_kernel_calls_play_the_same_games(monkeypatch):
    import lama_env.batched as B

    agents = [B.NativePolicy.random(), "threshold:0.2"]
    from lama_dice.agents.native import play_batch

    whole = play_batch(3, agents, games=10, seed=3, log_games=[0, 4, 9])
    monkeypatch.setattr(B, "KERNEL_STEPS", 7)  # calls end mid-game, mid-round
    cut = play_batch(3, agents, games=10, seed=3, log_games=[0, 4, 9])
    for name in ("totals", "round_points", "rounds", "busts", "quits", "went_out", "triple_llamas"):
        assert np.array_equal(getattr(whole, name), getattr(cut, name)), name
    for g in (0, 4, 9):
        assert whole.record(g) == cut.record(g)


def test_end_threshold_is_bounded():
    with pytest.raises(RulesError, match="end_threshold must be at most 1,000,000,000"):
        RulesConfig(end_threshold=10**10)
    assert RulesConfig(end_threshold=10**9).end_threshold == 10**9


def test_a_training_config_with_such_rules_is_refused_in_one_line():
    from lama_dice.train.config import ConfigError, parse_config

    with pytest.raises(ConfigError, match="a round could never end") as e:
        parse_config({"env": {"num_players": 1, "reward": "points", "rules": {"dice": [list(d) for d in ALL_LLAMAS]}}},
                     check_agents=False)
    assert "\n" not in str(e.value)
    cfg = parse_config({"env": {"num_players": 1, "reward": "points", "rules": {"max_round_turns": 200}}},
                       check_agents=False)
    assert cfg.rules.max_round_turns == 200
