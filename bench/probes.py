"""One measurement of ``lama-dice bench --baseline``, run in a fresh process against one checkout.

    python bench/probes.py PROBE [--root CHECKOUT] [--quick] [--seed S]

This file is run as a script (the package imports only :func:`aec_loop` from it, which needs
nothing but the standard library and NumPy), by the current checkout's
:mod:`lama_dice.bench.baseline`, once with the current code and once with ``--root`` set to a
baseline checkout: the same measuring code on both sides, the library under test imported
from one or the other.  With ``--root``, ``lama_env`` and ``lama_dice.*`` are imported from
that folder (its ``pyproject.toml``'s ``package-dir`` mapping), ahead of any installed copy.

It prints one JSON line: ``{"work", "unit", "wall_s", "cpu_s", ...}`` (the timed part only,
after a warm-up in the same process), or ``{"error": "..."}``.  The probes use only what both
the code before issue 31 and after it offer (a new env version is used where there is one).
"""

from __future__ import annotations

import argparse
import importlib.abc
import importlib.machinery
import importlib.util
import json
import os
import random
import sys
import time
from collections.abc import Callable
from typing import Any

SPEC = "threshold:0.2"


# --------------------------------------------------------------------------- imports from a checkout
class NotACheckoutError(Exception):
    """``--root`` names a folder without the library's packages."""


class _CheckoutFinder(importlib.abc.MetaPathFinder):
    """Finds ``lama_env``, ``lama_dice`` and the ``package-dir`` packages in one checkout (before anything else)."""

    def __init__(self, dirs: dict[str, str]) -> None:
        self.dirs = dirs

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> importlib.machinery.ModuleSpec | None:
        d = self.dirs.get(fullname)
        if d is None:
            return None
        return importlib.util.spec_from_file_location(fullname, os.path.join(d, "__init__.py"),
                                                      submodule_search_locations=[d])


def use_checkout(root: str) -> None:
    """Import the library from the checkout at ``root`` from now on."""
    import tomllib

    root = os.path.abspath(root)
    if not os.path.isfile(os.path.join(root, "pyproject.toml")):
        raise NotACheckoutError(f"{root} is not a lama-dice checkout (no pyproject.toml)")
    with open(os.path.join(root, "pyproject.toml"), "rb") as f:
        mapping = tomllib.load(f).get("tool", {}).get("setuptools", {}).get("package-dir", {})
    dirs = {"lama_env": os.path.join(root, "lama_env"), "lama_dice": os.path.join(root, "lama_dice")}
    dirs.update({pkg: os.path.join(root, sub) for pkg, sub in mapping.items() if pkg})
    for d in dirs.values():
        if not os.path.isfile(os.path.join(d, "__init__.py")):
            raise NotACheckoutError(f"{root} is not a lama-dice checkout (no {d}/__init__.py)")
    sys.meta_path.insert(0, _CheckoutFinder(dirs))
    os.chdir(root)


# --------------------------------------------------------------------------- helpers
def timed(work: float, unit: str, fn: Callable[[], Any]) -> dict[str, Any]:
    """Run ``fn`` once; its work, unit and seconds (wall, CPU of this process) as a dict."""
    c0, t0 = time.process_time(), time.perf_counter()
    extra = fn() or {}
    return {"work": extra.pop("work", work), "unit": unit, "wall_s": time.perf_counter() - t0,
            "cpu_s": time.process_time() - c0, **extra}


def _next_round_if_over(game: Any) -> bool:
    """Deal the next round where the engine stops between rounds (before issue 31); True if the game is over."""
    if game.legal_actions():
        return False
    if game.game_over:
        return True
    game.next_round()  # a round-over state (rounds flow on in engines without it)
    return False


def _positions(count: int, players: int, seed: int) -> list[Any]:
    """``count`` decisions (copies, more than one legal action) of seeded ``threshold:0.2`` games."""
    from lama_dice.agents.registry import make_agent
    from lama_env.engine import LamaGame

    player = make_agent(SPEC, seed=seed)
    out: list[Any] = []
    k = 0
    while len(out) < count:
        game = LamaGame(players, seed=seed + k, record=False)
        k += 1
        while len(out) < count and not _next_round_if_over(game):
            legal = game.legal_actions()
            if len(legal) > 1:
                out.append(game.clone())
            game.step(player.act(game, legal))
    return out


def _decisions(spec: str, count: int, players: int, seed: int) -> dict[str, Any]:
    from lama_dice.agents.registry import make_agent

    games = _positions(count, players, seed)
    agent = make_agent(spec, seed=seed)
    agent.act(games[0].clone(), games[0].legal_actions())  # loading, compiling, solving

    def go() -> None:
        for g in games:
            agent.act(g, g.legal_actions())
    return timed(len(games), "decision", go)


def _sample(rng: Any, mask: Any) -> Any:
    import numpy as np

    u = rng.random(mask.shape, dtype=np.float32)
    u += mask
    return np.argmax(u, axis=1)


# --------------------------------------------------------------------------- the probes
def probe_engine(quick: bool, seed: int) -> dict[str, Any]:
    """LamaGame steps/s: random legal actions, two players, new games as games end (no observations)."""
    from lama_env.engine import LamaGame

    steps = 20_000 if quick else 200_000
    choice = random.Random(seed).choice

    def play(n: int) -> None:
        k = 0
        game = LamaGame(2, seed=seed, record=False)
        while k < n:
            if _next_round_if_over(game):
                game = LamaGame(2, seed=seed + k, record=False)
                continue
            game.step(choice(game.legal_actions()))
            k += 1
    play(2000)
    return timed(steps, "step", lambda: play(steps))


def probe_evaluate(quick: bool, seed: int) -> dict[str, Any]:
    """``evaluate`` games/s (what ``lama-dice evaluate --agents threshold:0.2 threshold:0.2`` runs), kernel loaded."""
    from lama_dice.evaluation import evaluate

    games = 2000 if quick else 100_000
    evaluate([SPEC, SPEC], num_players=2, games=10, seed=seed)
    return timed(games, "game", lambda: {"backend": evaluate([SPEC, SPEC], num_players=2, games=games,
                                                              seed=seed).backend})


def probe_vector(quick: bool, seed: int) -> dict[str, Any]:
    """``VectorGame(4096)`` agent-steps/s: ``step()`` of random legal actions with autoreset."""
    import numpy as np

    from lama_env.vector import VectorGame

    vg = VectorGame(4096, 2, seed=seed)
    vg.reset()
    rng = np.random.default_rng(seed)
    steps = 20 if quick else 200

    def play(n: int) -> None:
        for _ in range(n):
            vg.step(_sample(rng, vg.action_mask))
    play(5)
    return timed(steps * vg.num_envs, "agent-step", lambda: play(steps))


def _env_ids() -> tuple[str, Any]:
    """The newest versions of the Gymnasium env id and of the PettingZoo module."""
    import gymnasium as gym

    import lama_env

    ids = sorted((k for k in gym.registry if k.startswith("LamaDice-v")), key=lambda k: int(k.rsplit("v", 1)[1]))
    for v in range(9, -1, -1):
        if importlib.util.find_spec(f"lama_env.lama_dice_v{v}") is not None:
            return ids[-1], importlib.import_module(f"lama_env.lama_dice_v{v}")
    return ids[-1], lama_env


def probe_vector_env(quick: bool, seed: int) -> dict[str, Any]:
    """The Gymnasium vector env at 256 games: learner-steps/s, random legal actions, vs ``threshold:0.2``."""
    import gymnasium as gym
    import numpy as np

    env_id, _ = _env_ids()
    envs = gym.make_vec(env_id, num_envs=256, vectorization_mode="vector_entry_point", opponents=[SPEC])
    _obs, info = envs.reset(seed=seed)
    rng = np.random.default_rng(seed)
    steps = 20 if quick else 1000
    state = {"info": info}

    def play(n: int) -> None:
        for _ in range(n):
            state["info"] = envs.step(_sample(rng, state["info"]["action_mask"]))[4]
    play(5)
    return timed(steps * 256, "learner-step", lambda: play(steps)) | {"env_id": env_id}


def aec_loop(env: Any, steps: int, seed: int) -> int:
    """Play about ``steps`` turns of ``pettingzoo.test.performance_benchmark``'s loop in ``env``; return the turns.

    The loop is PettingZoo's (its sampler, its reset test), with a seeded ``random.Random``
    for the sampler; it stops at the end of the ``agent_iter`` cycle in which ``steps`` is reached.
    The one copy of the loop: :mod:`lama_dice.bench.aec_speed` imports it (as ``agent_steps``),
    and here it runs against a baseline checkout too, whose own copy may differ.
    """
    import numpy as np

    choice = random.Random(seed).choice
    env.reset(seed=seed)
    turn = 0
    while turn < steps:
        for agent in env.agent_iter(env.num_agents):
            obs, _reward, termination, truncation, _info = env.last()
            if termination or truncation:
                action = None
            elif isinstance(obs, dict) and "action_mask" in obs:
                action = choice(np.flatnonzero(obs["action_mask"]).tolist())
            else:
                action = env.action_space(agent).sample()
            env.step(action)
            turn += 1
            if all(env.terminations.values()) or all(env.truncations.values()):
                env.reset()
    return turn


def probe_aec(quick: bool, seed: int) -> dict[str, Any]:
    """The AEC env's agent-steps/s (PettingZoo's loop), and leduc_holdem_v4's in the same process, interleaved."""
    _, module = _env_ids()
    env = module.env(num_players=2)
    leduc: Any = None
    note: str | None = None
    try:
        from pettingzoo.classic import leduc_holdem_v4

        leduc = leduc_holdem_v4.env()
    except Exception as err:  # rlcard missing: the env alone
        note = f"leduc_holdem_v4 skipped ({type(err).__name__}: pip install 'lama-dice[bench]')"
    steps, slices = (2000, 2) if quick else (20_000, 10)
    per = steps // slices
    aec_loop(env, 2000, seed)
    if leduc is not None:
        aec_loop(leduc, 500, seed)
    ours = {"wall": 0.0, "cpu": 0.0, "work": 0}
    theirs = {"wall": 0.0, "cpu": 0.0, "work": 0}
    for i in range(slices):
        for contender, acc in ((env, ours), (leduc, theirs)):
            if contender is None:
                continue
            c0, t0 = time.process_time(), time.perf_counter()
            acc["work"] += aec_loop(contender, per, seed + 1 + i)
            acc["wall"] += time.perf_counter() - t0
            acc["cpu"] += time.process_time() - c0
    out: dict[str, Any] = {"work": ours["work"], "unit": "agent-step", "wall_s": ours["wall"], "cpu_s": ours["cpu"],
                           "env": module.__name__}
    if leduc is not None:
        out["leduc_per_s"] = theirs["work"] / theirs["wall"]
        out["vs_leduc"] = (ours["work"] / ours["wall"]) / out["leduc_per_s"]
        out["vs_leduc_cpu"] = (ours["work"] / ours["cpu"]) / (theirs["work"] / theirs["cpu"])
    if note:
        out["note"] = note
    return out


def probe_lookahead(quick: bool, seed: int) -> dict[str, Any]:
    """``lookahead``'s decisions/s at decisions of two-player ``threshold:0.2`` games."""
    return _decisions("lookahead", 15 if quick else 60, 2, seed)


def probe_solver(quick: bool, seed: int) -> dict[str, Any]:
    """The exact solo solver's decisions/s (``solo-optimal``, solved in the warm-up) at solo decisions."""
    return _decisions("solo-optimal", 200 if quick else 2000, 1, seed)


def probe_kernel_load(quick: bool, seed: int) -> dict[str, Any]:
    """The compiled kernel's load in this fresh process: import, then the first call (on-disk Numba cache)."""
    def go() -> dict[str, Any]:
        t0 = time.perf_counter()
        from lama_dice.evaluation.compiled import warmup
        t1 = time.perf_counter()
        warmup()
        return {"import_s": t1 - t0, "first_call_s": time.perf_counter() - t1}
    return timed(1, "load", go)


def probe_warm(quick: bool, seed: int) -> dict[str, Any]:
    """Not a measurement: compile (or load) every kernel the probes use, so that no timed run pays a compile."""
    def go() -> None:
        from lama_dice.evaluation.compiled import warmup

        warmup()
        probe_vector(True, seed)
        probe_vector_env(True, seed)
        _decisions("lookahead", 2, 2, seed)
    return timed(1, "warm-up", go)


PROBES: dict[str, Callable[[bool, int], dict[str, Any]]] = {
    "aec": probe_aec, "evaluate": probe_evaluate, "vector": probe_vector, "vector_env": probe_vector_env,
    "engine": probe_engine, "lookahead": probe_lookahead, "solver": probe_solver, "kernel_load": probe_kernel_load,
    "warm": probe_warm,
}


def main(argv: list[str] | None = None) -> int:
    """Command line: run one probe and print its JSON line."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("probe", choices=sorted(PROBES))
    p.add_argument("--root", default=None, help="import the library from this checkout")
    p.add_argument("--quick", action="store_true")
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args(argv)
    here = os.path.dirname(os.path.abspath(__file__))
    sys.path[:] = [x for x in sys.path if os.path.abspath(x or ".") != here]  # bench/'s modules are not top-level
    try:
        if args.root:
            use_checkout(args.root)
        res = PROBES[args.probe](args.quick, args.seed)
    except Exception as e:  # reported as one line by the caller
        msg = str(e).strip().splitlines()
        res = {"error": f"{type(e).__name__}: {msg[0] if msg else ''}"}
    lib = sys.modules.get("lama_env")
    res["imported_from"] = os.path.dirname(os.path.dirname(os.path.abspath(lib.__file__ or ""))) if lib else None
    print(json.dumps(res))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
