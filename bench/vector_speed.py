"""Agent-steps per second of the vector game (:class:`lama_env.vector.VectorGame`) beside the AEC env.

Two contenders run alternately in one process (see :mod:`lama_dice.bench.measure`):

* ``vector``: ``VectorGame(num_envs, num_players=2)`` (4,096 games by default), every game
  stepped by one call; a random legal action per game sampled with NumPy from the
  action mask (``argmax`` of uniform float32 noise plus the mask), one call for all games.
  Every game's decision counts as one agent-step (``num_envs`` per step).
* ``aec_env``: ``lama_dice_v1.env(num_players=2)`` in PettingZoo's standard AEC loop
  (:func:`lama_dice.bench.aec_speed.agent_steps`: ``agent_iter``, ``last``, a random
  legal action, ``step``), the figure of the ``aec`` section.

The vector contender also reports the share of its time spent inside ``step()``
(the compiled kernel) rather than sampling.  ``scaling`` measures the vector
game alone by number of games (two players) and by number of players (at
``num_envs`` games).  The target of the project: the vector game at least
:data:`TARGET` times the AEC env's agent-steps/s.

Two more comparisons, of the learning interfaces built on the vector game:

* ``env``: learner-steps/s of the Gymnasium vector env of ``LamaDice-v1``
  (:mod:`lama_env.vector_env`: ``gym.make_vec("LamaDice-v1", num_envs=256,
  vectorization_mode="vector_entry_point")``, the opponent playing inside the kernel) against
  ``gym.make_vec(..., num_envs=16, vectorization_mode="sync")`` (16 scalar envs in a
  ``SyncVectorEnv``), both two players against ``threshold:0.2``, random legal learner
  actions sampled as above from ``info["action_mask"]``, alternately.  Target: :data:`ENV_TARGET`.
* ``training``: MaskablePPO ``learn()`` env-steps/s of one config (:data:`TRAIN_CONFIG`, built by
  the trainer's own ``make_vec_env`` and ``ppo_kwargs``) with ``env.vec_env: native`` against
  ``dummy`` (and ``subproc``), each run's wall time split into the envs (``step``, ``reset``,
  the masks), PPO's update (``train()``) and the rest of the rollout (policy forward passes).

Run alone (all three; ``--no-training`` skips the slowest)::

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
#: The native vector env's learner-steps/s should be at least this many times SyncVectorEnv's.
ENV_TARGET = 10.0
#: The opponent of the env and training comparisons.
OPPONENT = "threshold:0.2"
#: The training comparison's config (the keys of configs/*.yaml; ``vec_env`` varies).
TRAIN_CONFIG: dict[str, Any] = {
    "seed": 0, "total_timesteps": 16_384,
    "env": {"num_players": 2, "n_envs": 16},
    "opponents": [OPPONENT],
    "ppo": {"n_steps": 256, "batch_size": 512, "n_epochs": 4},
    "policy": {"net_arch": [64, 64]},
}


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


class EnvRunner:
    """A Gymnasium vector env of ``LamaDice-v1`` and its sampler, playing on from where the last call stopped."""

    def __init__(self, envs: Any, seed: int) -> None:
        """Reset ``envs`` (seeded)."""
        self.envs = envs
        _obs, self.info = envs.reset(seed=seed)
        self.rng = np.random.default_rng(seed)
        self.step_s = 0.0

    def play(self, steps: int) -> dict[str, float]:
        """Play ``steps`` vector steps of random legal learner actions; return the learner-steps and step() seconds."""
        envs, rng = self.envs, self.rng
        inside = 0.0
        clock = time.perf_counter
        for _ in range(steps):
            actions = sample_actions(rng, self.info["action_mask"])
            t0 = clock()
            _obs, _r, _term, _trunc, self.info = envs.step(actions)
            inside += clock() - t0
        self.step_s += inside
        return {"work": steps * envs.num_envs, "step_s": inside}


def env_comparison(steps: int = 200, num_envs: int = 256, sync_envs: int = 16, repeats: int = 5, slices: int = 10,
                   seed: int = 0, log: Callable[[str], None] | None = None) -> dict[str, Any]:
    """Learner-steps/s of the native vector env (``num_envs`` games) vs ``SyncVectorEnv`` (``sync_envs``), alternately.

    Each repeat plays ``steps`` vector steps of each, in ``slices`` interleaved slices.
    """
    import gymnasium as gym

    import lama_env  # noqa: F401  (registers LamaDice-v1)

    t0 = time.perf_counter()
    native = EnvRunner(gym.make_vec("LamaDice-v1", num_envs=num_envs, vectorization_mode="vector_entry_point",
                                    opponents=[OPPONENT]), seed)
    native.play(2)
    load_s = time.perf_counter() - t0
    sync = EnvRunner(gym.make_vec("LamaDice-v1", num_envs=sync_envs, vectorization_mode="sync",
                                  opponents=[OPPONENT]), seed)
    native.play(max(1, steps // 10))
    sync.play(max(1, steps // 10))
    per_call = max(1, steps // slices)
    native.step_s = sync.step_s = 0.0
    samples = alternate({
        "vector_env": lambda i: timed(per_call * num_envs, lambda: native.play(per_call)),
        "sync": lambda i: timed(per_call * sync_envs, lambda: sync.play(per_call)),
    }, repeats, slices, log)
    results = {}
    for name, runner in (("vector_env", native), ("sync", sync)):
        res = summary(samples[name], "learner-step")
        wall = sum(x.wall_s for x in samples[name])
        res["step_share"] = runner.step_s / wall if wall > 0 else float("nan")
        res["step_only_per_s"] = res["per_s"] / res["step_share"] if res["step_share"] > 0 else float("nan")
        results[name] = res
    return {
        "what": f"learner-steps/s, 2 players vs {OPPONENT}, random legal learner actions: gym.make_vec('LamaDice-v1', "
                f"num_envs={num_envs}, vectorization_mode='vector_entry_point') vs gym.make_vec(..., "
                f"num_envs={sync_envs}, vectorization_mode='sync') (interleaved runs in one process)",
        "num_envs": num_envs, "sync_envs": sync_envs, "steps_per_run": per_call * slices, "slices": slices,
        "repeats": repeats, "first_call_s": load_s,
        "results": results,
        "ratios": {"vector_env_vs_sync": ratio_entry(samples["vector_env"], samples["sync"], "vector_env", "sync",
                                                     ENV_TARGET)},
    }


def _learn(vec_env: str, config: dict[str, Any], seed: int) -> Sample:
    """Build the trainer's envs and MaskablePPO model for ``config`` with ``vec_env`` (untimed); time ``learn``."""
    from sb3_contrib import MaskablePPO
    from stable_baselines3.common.vec_env import VecEnvWrapper

    from lama_dice.train.config import parse_config
    from lama_dice.train.masked_distribution import LamaMaskablePolicy
    from lama_dice.train.trainer import make_vec_env, ppo_kwargs

    clock = {"env": 0.0, "train": 0.0}

    class EnvTimer(VecEnvWrapper):
        """Adds the seconds spent in the envs (steps, resets, masks) to ``clock["env"]``."""

        def reset(self) -> Any:
            t0 = time.perf_counter()
            out = self.venv.reset()
            clock["env"] += time.perf_counter() - t0
            return out

        def step_async(self, actions: np.ndarray) -> None:
            t0 = time.perf_counter()
            self.venv.step_async(actions)
            clock["env"] += time.perf_counter() - t0

        def step_wait(self) -> Any:
            t0 = time.perf_counter()
            out = self.venv.step_wait()
            clock["env"] += time.perf_counter() - t0
            return out

        def env_method(self, method_name: str, *args: Any, indices: Any = None, **kwargs: Any) -> list[Any]:
            t0 = time.perf_counter()
            out = self.venv.env_method(method_name, *args, indices=indices, **kwargs)
            clock["env"] += time.perf_counter() - t0
            return out

    data = {**config, "seed": seed, "env": {**config["env"], "vec_env": vec_env}}
    cfg = parse_config(data, source="bench", check_agents=False)
    venv = EnvTimer(make_vec_env(cfg))
    model = MaskablePPO(LamaMaskablePolicy, venv, **ppo_kwargs(cfg), seed=seed, device="cpu", verbose=0)
    train = model.train

    def timed_train() -> None:
        t0 = time.perf_counter()
        train()
        clock["train"] += time.perf_counter() - t0

    model.train = timed_train  # type: ignore[method-assign]

    def go() -> dict:
        clock["env"] = clock["train"] = 0.0
        model.learn(total_timesteps=cfg.total_timesteps)
        return {"work": model.num_timesteps, "env_s": clock["env"], "train_s": clock["train"]}

    s = timed(cfg.total_timesteps, go)
    venv.close()
    return s


def _learn_run(vec_env: str, config: dict[str, Any], seed: int, i: int) -> Sample:
    return _learn(vec_env, config, seed + i)


def training_comparison(config: dict[str, Any] | None = None, modes: Sequence[str] = ("native", "dummy", "subproc"),
                        repeats: int = 3, seed: int = 0, log: Callable[[str], None] | None = None,
                        wide: int = 256) -> dict[str, Any]:
    """MaskablePPO ``learn()`` env-steps/s of one config with each ``env.vec_env`` of ``modes``, alternately.

    Reports each mode's share of wall time in the envs (``env_share``), in PPO's update
    (``train_share``) and in the rest of the rollout collection (``rollout_other_share``:
    policy forward passes, buffers, callbacks), and the ratios of ``native`` over the others.
    With ``wide > 0`` one more contender, ``native_wide``, runs the config natively with
    ``wide`` envs and the same rollout size (``n_steps`` divided accordingly): what the
    native env allows beyond the config's ``n_envs``.
    """
    try:
        import torch
        from sb3_contrib import MaskablePPO  # noqa: F401
    except ImportError as e:  # pragma: no cover - the base install has both
        return {"skipped": f"training comparison skipped: {e}"}
    config = dict(config or TRAIN_CONFIG)
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    torch.distributions.Distribution.set_default_validate_args(False)  # as the trainer does
    try:
        rollout = config["env"]["n_envs"] * config["ppo"]["n_steps"]
        for mode in modes:  # warm-up: imports, kernels, worker start-up paths
            _learn(mode, {**config, "total_timesteps": rollout}, seed)
        runs: dict[str, Callable[[int], Sample]] = {m: partial(_learn_run, m, config, seed) for m in modes}
        n_envs, n_steps = config["env"]["n_envs"], config["ppo"]["n_steps"]
        wide_config = None
        if wide > 0 and "native" in modes and wide != n_envs and (n_envs * n_steps) % wide == 0:
            wide_config = {**config, "env": {**config["env"], "n_envs": wide},
                           "ppo": {**config["ppo"], "n_steps": n_envs * n_steps // wide}}
            _learn("native", {**wide_config, "total_timesteps": rollout}, seed)
            runs["native_wide"] = partial(_learn_run, "native", wide_config, seed)
        samples = alternate(runs, repeats, log=log)
    finally:
        torch.set_num_threads(threads)
    results = {}
    for name, ss in samples.items():
        res = summary(ss, "env-step")
        res.update(env_share=median([x.extra["env_s"] / x.wall_s for x in ss]),
                   train_share=median([x.extra["train_s"] / x.wall_s for x in ss]),
                   rollout_other_share=median([1 - (x.extra["env_s"] + x.extra["train_s"]) / x.wall_s for x in ss]),
                   env_us_per_step=median([x.extra["env_s"] / x.work * 1e6 for x in ss]),
                   rollout_per_s=median([x.work / (x.wall_s - x.extra["train_s"]) for x in ss]))
        results[name] = res
    others = [m for m in modes if m != "native"]
    ratios = {f"native_vs_{m}": ratio_entry(samples["native"], samples[m], "native", m)
              for m in others if "native" in samples}
    ratios.update({f"native_wide_vs_{m}": ratio_entry(samples["native_wide"], samples[m], "native_wide", m)
                   for m in others if "native_wide" in samples})
    for m in others:
        if "native" in samples:
            ratios[f"rollout_native_vs_{m}"] = {
                "of": "native", "over": m, "note": "env-steps/s of rollout collection alone (learn() less train())",
                "ratio": median([(a.work / (a.wall_s - a.extra["train_s"])) / (b.work / (b.wall_s - b.extra["train_s"]))
                                 for a, b in zip(samples["native"], samples[m], strict=True)])}
    return {
        "what": f"MaskablePPO learn() env-steps/s, one config (2 players vs {OPPONENT}, "
                f"{config['env']['n_envs']} envs, n_steps {config['ppo']['n_steps']}, [64, 64], one torch thread) "
                "with env.vec_env: "
                f"{', '.join(modes)}",
        "config": config, "modes": list(modes), "repeats": repeats,
        "wide_config": wide_config,
        "results": results, "ratios": ratios,
    }


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
        scaling_repeats: int = 1, log: Callable[[str], None] | None = None, env_games: int = 256,
        env_sync: int = 16, training: bool | None = None, training_config: dict[str, Any] | None = None,
        training_modes: Sequence[str] = ("native", "dummy", "subproc"),
        training_repeats: int | None = None) -> dict[str, Any]:
    """Measure the vector game against the AEC env, alternately; return the JSON-ready section.

    Each repeat plays ``aec_steps`` agent-steps of the AEC env and ``vector_steps`` vector-steps
    (``num_envs`` agent-steps each) of the vector game, in ``slices`` interleaved slices.  Then
    ``env`` (:func:`env_comparison`: ``vector_steps`` vector steps of ``env_games`` native
    sub-envs and of ``env_sync`` scalar ones per repeat) and, with ``training`` (default: when
    ``vector_steps >= 100``, the full-sized runs), ``training`` (:func:`training_comparison`,
    ``training_repeats`` defaulting to ``scaling_repeats``).
    """
    from lama_env import lama_dice_v1

    t0 = time.perf_counter()
    runner = VectorRunner(num_envs, 2, seed)
    runner.play(2)
    load_s = time.perf_counter() - t0
    runner.play(max(1, warmup // num_envs))
    env = lama_dice_v1.env(num_players=2)
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
    out["env"] = env_comparison(vector_steps, env_games, env_sync, repeats, slices, seed, log)
    if training if training is not None else vector_steps >= 100:
        out["training"] = training_comparison(training_config, training_modes,
                                              training_repeats or scaling_repeats, seed, log)
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
    p.add_argument("--env-games", type=int, default=256, help="sub-envs of the native vector env (default 256)")
    p.add_argument("--training-timesteps", type=int, default=TRAIN_CONFIG["total_timesteps"],
                   help="timesteps of each learn() run of the training comparison")
    p.add_argument("--training-repeats", type=int, default=3)
    p.add_argument("--training-modes", nargs="+", default=["native", "dummy", "subproc"],
                   choices=["native", "dummy", "subproc"])
    p.add_argument("--no-training", action="store_true", help="skip the training comparison")
    p.add_argument("--only-env", action="store_true",
                   help="only the env and training comparisons (not the vector game vs the AEC env)")
    args = p.parse_args(argv)
    tcfg = {**TRAIN_CONFIG, "total_timesteps": args.training_timesteps}
    if args.only_env:
        res: dict[str, Any] = {"env": env_comparison(args.vector_steps, args.env_games, 16, args.repeats, 10,
                                                     args.seed)}
        if not args.no_training:
            res["training"] = training_comparison(tcfg, args.training_modes, args.training_repeats, args.seed)
    else:
        res = run(args.aec_steps, args.vector_steps, args.repeats, args.seed, num_envs=args.num_envs,
                  env_games=args.env_games, training=not args.no_training, training_config=tcfg,
                  training_modes=args.training_modes, training_repeats=args.training_repeats)
    print(json.dumps(res, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
