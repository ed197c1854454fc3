"""The envs follow the libraries' conventions, as the classic PettingZoo / Gymnasium envs do (issue 13).

1. An unknown keyword is a ``TypeError`` worded as Python words it (TorchRL's ``GymEnv`` passes
   ``frameskip`` and drops it on that error); a bad rules value stays a one-line ``RulesError``.
2. Infos stack: the Gymnasium env's have the same keys, types and shapes at every reset and step
   (numbers only); the AEC env's are empty, as in the classic envs; the result is read from the game.
3. ``import lama_env`` registers ``lama_dice_v1`` in PettingZoo's registry without importing PettingZoo;
   ``gymnasium.make("lama_env:LamaDice-v1")`` works in a fresh interpreter.
4. ``str(env)`` is the env's name; illegal moves go through PettingZoo's ``EnvLogger`` (AEC) and
   Gymnasium's logger (Gymnasium env), so each library's switch silences them.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
import types
import warnings

import gymnasium
import numpy as np
import pytest

import lama_env
from lama_dice.train.callbacks import summarize_episodes
from lama_env import RulesError, lama_dice_v1
from lama_env.gym_env import IllegalMoveWarning, LamaDiceEnv
from lama_env.options import NO_EPISODE_STATS
from lama_env.rules import winners
from lama_env.vector_env import LamaDiceVectorEnv


def run(code: str, *flags: str) -> subprocess.CompletedProcess:
    """Run ``code`` in a fresh interpreter (nothing imported before it)."""
    return subprocess.run(
        [sys.executable, *flags, "-c", textwrap.dedent(code)], capture_output=True, text=True, timeout=120
    )


# ------------------------------------------------------------------ 1. unknown keywords
@pytest.mark.parametrize(
    "make",
    [
        lambda **kw: gymnasium.make("LamaDice-v1", **kw),
        lambda **kw: LamaDiceEnv(**kw),
        lambda **kw: lama_dice_v1.env(**kw),
        lambda **kw: lama_dice_v1.raw_env(**kw),
    ],
)
def test_unknown_keyword_is_a_type_error_as_python_words_it(make):
    with pytest.raises(TypeError) as err:
        make(frameskip=4)
    msg = str(err.value)
    # the two strings TorchRL's GymEnv matches before retrying without the keyword
    assert "__init__() got an unexpected keyword argument 'frameskip'" in msg
    assert "unexpected keyword argument 'frameskip'" in msg and "\n" not in msg
    with pytest.raises(TypeError, match="unexpected keyword argument 'render_fps'"):
        make(render_fps=4)


def test_classic_env_control_and_torchrl_style_retry():
    with pytest.raises(TypeError, match="unexpected keyword argument 'frameskip'"):
        gymnasium.make("CartPole-v1", frameskip=4)  # the classic env: the convention the retry relies on

    def torchrl_like_make(env_id, frame_skip=4):
        kwargs = {"frameskip": frame_skip}
        try:
            return gymnasium.make(env_id, **kwargs)
        except TypeError as err:
            if "unexpected keyword argument 'frameskip'" not in str(err):
                raise
            return gymnasium.make(env_id)

    env = torchrl_like_make("LamaDice-v1")
    assert env.reset(seed=0)[0].shape == env.observation_space.shape


@pytest.mark.parametrize("make", [LamaDiceEnv, lama_dice_v1.env])
@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"end_threshold": 0}, "end_threshold must be at least 1"),
        ({"triple_llama": "sometimes"}, "triple_llama must be one of"),
        ({"must_discard": "yes"}, "must_discard must be true or false"),
        ({"dice": [["1"] * 6] * 2}, "dice must be 3 lists"),
        ({"rules": {"treshold": 3}}, "unknown rules field 'treshold'"),
    ],
)
def test_bad_rules_values_stay_one_line_rules_errors(make, kwargs, match):
    with pytest.raises(RulesError, match=match) as err:
        make(**kwargs)
    assert not isinstance(err.value, TypeError) and "\n" not in str(err.value)


# ------------------------------------------------------------------------ 2. infos
def signature(info):
    """Keys, types and shapes of an info, recursively: what must not change for infos to stack."""
    out = {}
    for k, v in info.items():
        if isinstance(v, dict):
            out[k] = signature(v)
        elif isinstance(v, np.ndarray):
            out[k] = ("array", v.dtype.str, v.shape)
        else:
            assert isinstance(v, (bool, int, float, np.number, np.bool_)), (k, v)  # numbers only
            out[k] = type(v).__name__
    return out


def leaves(info, prefix=""):
    for k, v in info.items():
        if isinstance(v, dict):
            yield from leaves(v, prefix + k + ".")
        else:
            yield prefix + k, v


def gym_infos():
    """The infos of resets and steps over episodes that end every way: game, round, truncation, illegal."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", IllegalMoveWarning)
        for kwargs in (
            {"num_players": 3, "end_threshold": 25},
            {"num_players": 2, "episode": "round"},
            {"num_players": 2, "max_rounds": 1, "end_threshold": 1000},
            {"num_players": 4},
        ):
            env = gymnasium.make("LamaDice-v1", **kwargs)
            rng = np.random.default_rng(0)
            for episode in range(3):
                _obs, info = env.reset(seed=episode)
                yield "reset", info
                for t in range(10_000):
                    legal = np.flatnonzero(info["action_mask"])
                    illegal = kwargs["num_players"] == 4 and t == 3
                    action = int(np.flatnonzero(info["action_mask"] == 0)[0]) if illegal else int(rng.choice(legal))
                    _obs, _r, term, trunc, info = env.step(action)
                    yield ("end" if term or trunc else "step"), info
                    if term or trunc:
                        break


def test_gym_infos_have_the_same_keys_and_shapes_at_every_step_and_stack():
    infos = list(gym_infos())
    first = signature(infos[0][1])
    assert set(first) == {"action_mask", "learner_seat", "illegal_action", "episode_stats"}
    assert all(signature(info) == first for _, info in infos)
    for key, _ in leaves(infos[0][1]):  # every leaf stacks into a numeric array
        stacked = np.stack([dict(leaves(info))[key] for _, info in infos])
        assert stacked.dtype != object and stacked.shape[0] == len(infos), key
    ends = [info for kind, info in infos if kind == "end"]
    assert any(info["illegal_action"] for info in ends) and not any(
        info["illegal_action"] for kind, info in infos if kind != "end"
    )
    assert all(info["episode_stats"] == NO_EPISODE_STATS for kind, info in infos if kind != "end")
    # the final stats: numbers, with the keys the training callbacks read
    assert all(info["episode_stats"]["rounds"] >= 1 or info["illegal_action"] for info in ends)
    summary = summarize_episodes([info["episode_stats"] for info in ends], [], num_players=2)
    assert {"win_rate", "points_per_round", "final_points", "bust_rate", "quit_rate", "went_out_rate"} <= set(summary)


def test_gym_vector_env_infos_stack_to_numbers():
    envs = gymnasium.vector.SyncVectorEnv(
        [lambda: gymnasium.make("LamaDice-v1", num_players=2, episode="round") for _ in range(3)]
    )
    _obs, info = envs.reset(seed=0)
    rng = np.random.default_rng(0)
    for _ in range(60):
        actions = [int(rng.choice(np.flatnonzero(m))) if m.any() else 0 for m in info["action_mask"]]
        _obs, _r, _term, _trunc, info = envs.step(np.array(actions))
        for key, value in leaves(info):
            assert isinstance(value, np.ndarray) and value.dtype != object and value.shape[0] == 3, key
            assert not key.split(".")[-1].startswith("_") or value.all(), key  # every env gave every key
    envs.close()


def test_aec_infos_are_empty_and_the_result_is_read_from_the_game():
    for kwargs in ({"num_players": 3, "end_threshold": 25}, {"num_players": 2, "max_rounds": 1, "end_threshold": 99}):
        env = lama_dice_v1.env(**kwargs)
        env.reset(seed=1)
        rng = np.random.default_rng(1)
        seen = 0
        for _agent in env.agent_iter():
            obs, _r, term, trunc, info = env.last()
            assert info == {} and all(i == {} for i in env.infos.values())
            seen += 1
            env.step(None if term or trunc else int(rng.choice(np.flatnonzero(obs["action_mask"]))))
        assert seen > 3
        g = env.unwrapped.game
        res = g.result()
        assert res["totals"] == list(g.totals) and len(g.totals) == kwargs["num_players"]
        assert res["winners"] == (winners(g.totals) if g.game_over else []) and (res["winners"] != []) == g.game_over
        assert g.statistics()["rounds"] >= 1


# ------------------------------------------------------------------- 3. registries
def test_pettingzoo_make_after_import_lama_env_in_either_order():
    for imports in (
        "import lama_env; assert 'pettingzoo' not in sys.modules; import pettingzoo",
        "import pettingzoo; import lama_env",
        "from lama_env import lama_dice_v1; import pettingzoo",
    ):
        out = run(
            f"""
            import sys
            {imports}
            env = pettingzoo.make("aec", "lama_dice_v1", num_players=3)
            env.reset(seed=0)
            print(type(env.unwrapped).__module__, env.unwrapped.num_players, pettingzoo.spec("aec", "lama_dice_v1").id)
        """,
            "-W",
            "error",
        )
        assert out.returncode == 0, (imports, out.stderr)
        assert out.stdout.split() == ["lama_env.lama_dice_v1", "3", "lama_dice-v1"], imports


def test_registering_again_is_quiet_and_installs_one_hook():
    out = run(
        """
        import importlib, sys
        import lama_env
        importlib.reload(lama_env); importlib.reload(lama_env)
        hooks = [f for f in sys.meta_path if getattr(f, "lama_env_hook", False)]
        import pettingzoo
        importlib.reload(lama_env)
        print(len(hooks), [f for f in sys.meta_path if getattr(f, "lama_env_hook", False)],
              pettingzoo.__spec__.loader is pettingzoo.__loader__, "lama_dice-v1" in pettingzoo.aec_registry)
    """,
        "-W",
        "error",
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["1", "[]", "True", "True"]


def test_no_registry_in_an_older_pettingzoo_is_no_error(monkeypatch):
    old = types.ModuleType("pettingzoo")  # PettingZoo before 1.27: no register, no aec_registry
    monkeypatch.setitem(sys.modules, "pettingzoo", old)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        lama_env._register_pettingzoo()
        lama_env._register_envs()
    assert not hasattr(old, "aec_registry")


def test_gymnasium_make_with_the_module_prefix_in_a_fresh_interpreter():
    out = run(
        """
        import sys
        import gymnasium
        assert "lama_env" not in sys.modules
        env = gymnasium.make("lama_env:LamaDice-v1", num_players=3)
        obs, info = env.reset(seed=0)
        print(obs.shape[0], sorted(info))
    """,
        "-W",
        "error",
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.split()[0] == str(lama_env.observation_size(3))


# ------------------------------------------------------- 4. names and illegal-move reports
def test_str_is_the_env_name_like_the_classic_envs():
    import pettingzoo

    assert str(pettingzoo.make("aec", "classic/connect_four_v3")) == "connect_four_v3"  # the control
    env = lama_dice_v1.env()
    assert str(env) == "lama_dice_v1" == str(env.unwrapped) == env.metadata["name"]


ILLEGAL_MOVE = """
    import sys
    from pettingzoo.utils.env_logger import EnvLogger
    {make}
    if sys.argv[1] == "quiet":
        EnvLogger.suppress_output()
    env.reset(seed=0)
    obs, *_ = env.last()
    while obs["action_mask"].all():  # connect four: fill column 0 (no four in a row) until it is full
        env.step(0)
        obs, *_ = env.last()
    env.step(int(obs["action_mask"].argmin()))
    print("terminated", all(env.terminations.values()))
"""


@pytest.mark.parametrize(
    "make",
    [
        'import pettingzoo; env = pettingzoo.make("aec", "classic/connect_four_v3")',
        'import lama_env, pettingzoo; env = pettingzoo.make("aec", "lama_dice_v1")',
        "from lama_env import lama_dice_v1; env = lama_dice_v1.env()",
    ],
)
def test_illegal_moves_go_through_envlogger_like_the_classic_envs(make):
    code = ILLEGAL_MOVE.format(make=make)
    loud = subprocess.run(
        [sys.executable, "-W", "error", "-c", textwrap.dedent(code), "loud"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    quiet = subprocess.run(
        [sys.executable, "-W", "error", "-c", textwrap.dedent(code), "quiet"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert loud.returncode == quiet.returncode == 0, (loud.stderr, quiet.stderr)
    assert "Illegal move made" in loud.stdout and "terminated True" in loud.stdout
    assert quiet.stdout.strip() == "terminated True" and quiet.stderr == ""


def test_gym_illegal_moves_go_through_gymnasiums_logger(monkeypatch):
    env = LamaDiceEnv(num_players=2)
    _obs, info = env.reset(seed=0)
    bad = int(np.flatnonzero(info["action_mask"] == 0)[0])
    with pytest.warns(IllegalMoveWarning, match="illegal action"):
        env.step(bad)
    monkeypatch.setattr(gymnasium.logger, "min_level", gymnasium.logger.ERROR)  # gymnasium.logger.set_level(40)
    _obs, info = env.reset(seed=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        _obs, r, term, _trunc, info = env.step(bad)
    assert (r, term, info["illegal_action"]) == (-1.0, True, True)


@pytest.mark.parametrize(("typo", "near"), [("oponents", "opponents"), ("n_players", "num_players"),
                                            ("treshold", "end_threshold"), ("must_discad", "must_discard")])
@pytest.mark.parametrize("make", [lambda **kw: gymnasium.make("LamaDice-v1", **kw), lambda **kw: LamaDiceEnv(**kw),
                                  lambda **kw: LamaDiceVectorEnv(num_envs=2, **kw)])
def test_a_misspelled_keyword_gets_the_nearest_valid_name(make, typo, near):
    """Among all the env's keywords (its own and the rules'), not only the rules keywords."""
    with pytest.raises(TypeError) as err:
        make(**{typo: 3})
    msg = str(err.value)
    assert f"unexpected keyword argument {typo!r} (did you mean {near!r}? its keywords are " in msg, msg
    assert "num_players, opponents, episode" in msg
    assert "the rules keywords are triple_llama" in msg and "\n" not in msg


def test_a_misspelled_keyword_of_the_aec_env():
    with pytest.raises(TypeError, match=r"'n_players' \(did you mean 'num_players'\? its keywords are num_players, "):
        lama_dice_v1.env(n_players=3)
