"""Agent-steps per second of the vector game (:class:`lama_env.vector.VectorGame`) beside the AEC env.

Two contenders run alternately in one process (see :mod:`lama_dice.bench.measure`):

* ``vector``: ``VectorGame(num_envs, num_players=2)`` (4,096 games by default), every game
  stepped by one call; a random legal action per game sampled with NumPy from the
  action mask (``argmax`` of uniform float32 noise plus the mask), one call for all games.
  Every game's decision counts as one agent-step (``num_envs`` per step).
* ``aec_env``: ``lama_dice_v0.env(num_players=2)`` in PettingZoo's standard AEC loop
  (:func:`lama_dice.bench.aec_speed.agent_steps`: ``agent_iter``, ``last``, a random
  legal action, ``step``), the figure of the ``aec`` section.

The vector contender also reports the share of its time spent inside ``step()``
(the compiled kernel) rather than sampling.  ``scaling`` measures the vector
game alone by number of games (two players) and by number of players (at
``num_envs`` games).  The target of the project: the vector game at least
:data:`TARGET` times the AEC env's agent-steps/s.

Run alone::

    python -m lama_dice.bench.vector_speed --num-envs 4096 --repeats 3
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from functools import partial
from typing import Any

import numpy as np

from .aec_speed import agent_steps
from .measure import Sample, alternate, median, ratio_entry, summary, timed

#: The vector game's agent-steps/s should be at least this many times the AEC env's.
TARGET = 10.0


def sample_actions(rng: np.random.Generator, mask: np.ndarray) -> np.ndarray:
    """A uniformly random legal action per row of ``mask`` (``(G, 129)`` bool), with NumPy.

    Uniform noise in ``[0, 1)`` plus the mask puts every legal action in ``[1, 2)`` above every
    illegal one, so ``argmax`` picks a legal action, uniformly among them.
    """
    u = rng.random(mask.shape, dtype=np.float32)
    u += mask
    return np.argmax(u, axis=1)


class VectorRunner:
    """A vector game and its sampler, playing on from where the last call stopped."""

    def __init__(self, num_envs: int, num_players: int, seed: int) -> None:
        """Make and reset the game (this loads or compiles the kernel on first use)."""
        from lama_env.vector import VectorGame

        # reward="win" pays nothing solo (and warns so): the solo games pay points, at the same cost
        self.game = VectorGame(num_envs, num_players, seed=seed, reward="points" if num_players == 1 else "win")
        self.game.reset()
        self.rng = np.random.default_rng(seed)
        self.step_s = 0.0

    def play(self, steps: int) -> dict[str, float]:
        """Play ``steps`` vector-steps; return the agent-steps done (``work``) and the seconds inside step()."""
        vg, rng = self.game, self.rng
        inside = 0.0
        clock = time.perf_counter
        for _ in range(steps):
            actions = sample_actions(rng, vg.action_mask)
            t0 = clock()
            vg.step(actions)
            inside += clock() - t0
        self.step_s += inside
        return {"work": steps * vg.num_envs, "step_s": inside}


def scaling(envs: Sequence[int], players: Sequence[int], num_envs: int, agent_steps_per_run: int, repeats: int,
            seed: int, log: Callable[[str], None] | None = None) -> dict[str, Any]:
    """Agent-steps/s of the vector game by number of games (two players) and by players (``num_envs`` games).

    Each configuration plays about ``agent_steps_per_run`` agent-steps per run (5 to 20,000
    vector-steps); the median of ``repeats`` runs is reported.
    """
    configs = [(g, 2) for g in envs]
    configs += [(num_envs, n) for n in players if (num_envs, n) not in configs]
    out: dict[str, Any] = {}
    for g, n in configs:
        runner = VectorRunner(g, n, seed)
        runner.play(3)  # first steps: caches
        steps = max(5, min(agent_steps_per_run // g, 20_000))
        samples = [timed(steps * g, partial(runner.play, steps)) for _ in range(repeats)]
        entry = summary(samples, "agent-step")
        entry.update(num_envs=g, num_players=n, vector_steps=steps,
                     step_only_per_s=median([s.work / s.extra["step_s"] for s in samples]))
        out[f"envs_{g}_players_{n}"] = entry
        if log is not None:
            log(f"vector scaling: {g} games, {n} players: {entry['per_s']:,.0f} agent-steps/s")
    return out


def run(aec_steps: int = 20000, vector_steps: int = 200, repeats: int = 5, seed: int = 0, warmup: int = 2000,
        slices: int = 10, num_envs: int = 4096, scaling_envs: Sequence[int] = (1, 16, 256, 4096, 16384),
        scaling_players: Sequence[int] = (1, 2, 3, 4, 5, 6), scaling_agent_steps: int = 400_000,
        scaling_repeats: int = 1, log: Callable[[str], None] | None = None) -> dict[str, Any]:
    """Measure the vector game against the AEC env, alternately; return the JSON-ready section.

    Each repeat plays ``aec_steps`` agent-steps of the AEC env and ``vector_steps`` vector-steps
    (``num_envs`` agent-steps each) of the vector game, in ``slices`` interleaved slices.
    """
    from lama_env import lama_dice_v0

    t0 = time.perf_counter()
    runner = VectorRunner(num_envs, 2, seed)
    runner.play(2)
    load_s = time.perf_counter() - t0
    runner.play(max(1, warmup // num_envs))
    env = lama_dice_v0.env(num_players=2)
    agent_steps(env, warmup, seed)
    aec_per_call = max(1, aec_steps // slices)
    vec_per_call = max(1, vector_steps // slices)
    runner.step_s = 0.0

    contenders: dict[str, Callable[[int], Sample]] = {
        "vector": lambda i: timed(vec_per_call * num_envs, lambda: runner.play(vec_per_call)),
        "aec_env": lambda i: timed(aec_per_call, lambda: {"work": agent_steps(env, aec_per_call, seed + 1 + i)}),
    }
    samples = alternate(contenders, repeats, slices, log)
    vec = summary(samples["vector"], "agent-step")
    vector_wall = sum(s.wall_s for s in samples["vector"])
    vec["step_share"] = runner.step_s / vector_wall if vector_wall > 0 else float("nan")
    vec["step_only_per_s"] = vec["per_s"] / vec["step_share"] if vec["step_share"] > 0 else float("nan")
    out: dict[str, Any] = {
        "what": "agent-steps/s, random legal actions, 2 players: the vector game (every game's decision of one "
                "step counts) vs the PettingZoo AEC env in its standard loop (interleaved runs in one process)",
        "num_envs": num_envs,
        "vector_steps_per_run": vec_per_call * slices,
        "aec_steps_per_run": aec_per_call * slices,
        "slices": slices,
        "repeats": repeats,
        "sampler": "vector: argmax(rng.random((G, 129), float32) + mask) per step; "
                   "aec_env: random.Random.choice(mask.nonzero()[0].tolist())",
        "first_call_s": load_s,
        "results": {"vector": vec, "aec_env": summary(samples["aec_env"], "agent-step")},
        "ratios": {"vector_vs_aec": ratio_entry(samples["vector"], samples["aec_env"], "vector", "aec_env", TARGET)},
    }
    out["scaling"] = scaling(scaling_envs, scaling_players, num_envs, scaling_agent_steps, scaling_repeats, seed,
                             log)
    return out


def main(argv: list[str] | None = None) -> int:
    """Command line: run the comparison and print its results as JSON."""
    import argparse
    import json

    p = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    p.add_argument("--num-envs", type=int, default=4096)
    p.add_argument("--vector-steps", type=int, default=200)
    p.add_argument("--aec-steps", type=int, default=20000)
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args(argv)
    res = run(args.aec_steps, args.vector_steps, args.repeats, args.seed, num_envs=args.num_envs)
    print(json.dumps(res, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
