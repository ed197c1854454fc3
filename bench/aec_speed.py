"""Agent-steps per second of the PettingZoo env against PettingZoo's own ``leduc_holdem_v4``.

Every env runs the same loop, in the same process, alternately (see
:mod:`lama_dice.bench.measure`): the loop of PettingZoo's own
``pettingzoo.test.performance_benchmark``, statement for statement, counted in
turns rather than run for five seconds: ``for agent in env.agent_iter(env.num_agents)``,
``env.last()``, ``random.choice(np.flatnonzero(obs["action_mask"]).tolist())`` (from a
seeded ``random.Random``) for a live agent, ``None`` for a finished one,
``env.step(action)``, and ``env.reset()`` as soon as ``all(env.terminations.values())``
or ``all(env.truncations.values())``.  Every ``env.step`` call counts as one
agent-step.  Contenders:

* ``lama_env``: ``lama_dice_v1.env(num_players=2)`` (PettingZoo's classic wrappers);
* ``lama_raw``: ``lama_dice_v1.raw_env(num_players=2)`` (no wrappers);
* ``leduc``: ``pettingzoo.classic.leduc_holdem_v4.env()`` (needs ``rlcard``: ``pip install 'lama-dice[bench]'``);
* ``engine``: the rules engine alone (:class:`lama_env.engine.LamaGame`, random legal actions,
  no observations): the floor under the env's per-step cost.

Run alone::

    python -m lama_dice.bench.aec_speed --steps 20000 --repeats 5
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

from .measure import Sample, alternate, ratio_entry, summary, timed
from .probes import aec_loop as agent_steps  # PettingZoo's loop, kept once in probes.py (it also runs on a baseline)

#: The target of the project: ``env()`` at least this many times leduc's agent-steps/s.
TARGET = 6.0


def engine_steps(steps: int, seed: int) -> int:
    """``steps`` random legal actions in the rules engine alone (new games as games end)."""
    from lama_env.engine import LamaGame

    rng = random.Random(seed)
    choice = rng.choice
    n = games = 0
    game = LamaGame(2, seed=seed, record=False)
    while n < steps:
        if game.game_over:  # rounds flow: a step that ends one deals the next
            games += 1
            game = LamaGame(2, seed=seed, game_id=games, record=False)
            continue
        game.step(choice(game.legal_actions()))
        n += 1
    return n


def make_envs() -> tuple[dict[str, Callable[[], Any]], list[str]]:
    """The env factories that can be built here, and notes on those that cannot."""
    from lama_env import lama_dice_v1

    envs: dict[str, Callable[[], Any]] = {
        "lama_env": lambda: lama_dice_v1.env(num_players=2),
        "lama_raw": lambda: lama_dice_v1.raw_env(num_players=2),
    }
    notes = []
    try:
        import rlcard  # noqa: F401
        from pettingzoo.classic import leduc_holdem_v4

        envs["leduc"] = leduc_holdem_v4.env
    except Exception as e:  # ImportError, or PettingZoo's DependencyNotInstalled
        notes.append(f"leduc_holdem_v4 skipped: rlcard is not installed ({type(e).__name__}); "
                     "pip install 'lama-dice[bench]'")
    return envs, notes


def run(steps: int = 20000, repeats: int = 5, seed: int = 0, warmup: int = 2000, slices: int = 10,
        log: Callable[[str], None] | None = None) -> dict[str, Any]:
    """Measure every contender ``repeats`` times alternately; return the JSON-ready section.

    Each repeat plays ``steps`` agent-steps per contender in ``slices`` interleaved slices.
    """
    factories, notes = make_envs()
    envs = {name: make() for name, make in factories.items()}
    for env in envs.values():  # first games, imports, caches
        agent_steps(env, warmup, seed)
    engine_steps(warmup, seed)
    per_call = max(1, steps // slices)

    def contender(env: Any) -> Callable[[int], Sample]:
        return lambda i: timed(per_call, lambda: {"work": agent_steps(env, per_call, seed + 1 + i)})

    contenders = {name: contender(env) for name, env in envs.items()}
    contenders["engine"] = lambda i: timed(per_call, lambda: {"work": engine_steps(per_call, seed + 1 + i)})
    samples = alternate(contenders, repeats, slices, log)
    out: dict[str, Any] = {
        "what": "agent-steps/s, random legal actions, 2 players, PettingZoo's performance_benchmark loop "
                "(same loop and sampler for every env, interleaved runs in one process)",
        "steps_per_run": per_call * slices,
        "slices": slices,
        "repeats": repeats,
        "sampler": "random.Random.choice(np.flatnonzero(mask).tolist())",
        "loop": "pettingzoo.test.performance_benchmark",
        "results": {name: summary(s, "agent-step") for name, s in samples.items()},
        "ratios": {},
        "notes": notes,
    }
    if "leduc" in samples:
        out["ratios"]["env_vs_leduc"] = ratio_entry(samples["lama_env"], samples["leduc"], "lama_env", "leduc",
                                                    TARGET)
        out["ratios"]["raw_vs_leduc"] = ratio_entry(samples["lama_raw"], samples["leduc"], "lama_raw", "leduc")
    out["ratios"]["engine_vs_env"] = ratio_entry(samples["engine"], samples["lama_env"], "engine", "lama_env")
    return out


def main(argv: list[str] | None = None) -> int:
    """Command line: run the comparison and print its results as JSON."""
    import argparse
    import json

    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--steps", type=int, default=20000)
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args(argv)
    res = run(args.steps, args.repeats, args.seed)
    print(json.dumps(res, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
