"""MaskablePPO training throughput: ``LamaDice-v1`` against PettingZoo's ``connect_four_v3``.

One MaskablePPO setup, two environments, alternating runs in one process:

* ``lama``: ``gymnasium.make("LamaDice-v1", num_players=2, opponents=[OPPONENT])``, as the
  trainer builds it (the learner plays one seat, the opponent's moves happen inside ``step``;
  the env's own ``action_masks()``);
* ``connect_four``: ``connect_four_v3.env()`` through :class:`lama_dice.bench.sb3_wrapper.SB3ActionMaskWrapper`
  and sb3-contrib's ``ActionMasker``, as in PettingZoo's SB3 tutorial (one policy plays both sides).

Both: the trainer's own MaskablePPO setup (``lama_dice.train.masked_distribution.LamaMaskablePolicy``, the masked
distribution that never exponentiates a masked logit, and torch's distribution argument
checks off), ``DummyVecEnv`` with the same ``n_envs``, ``net_arch=[64, 64]``, the same
PPO hyperparameters (by default ``n_steps=512``,
``batch_size=256``, ``n_epochs=10``), the same number of timesteps, one torch thread, CPU.
Every env is wrapped in a timer, so that the report splits each run's wall time into
time inside the envs (``step``, ``reset``, ``action_masks``), PPO's gradient updates
(``train()``) and the rest of the rollout collection (policy forward passes, buffers).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import gymnasium

from .measure import Sample, alternate, ratio_entry, summary, timed

OPPONENT = "threshold:0.2"
#: PPO settings of the full benchmark (8 scalar envs in DummyVecEnv, a [64, 64] network).
FULL = {"n_envs": 8, "n_steps": 512, "batch_size": 256, "n_epochs": 10, "timesteps": 8192}
#: ... and of ``--quick``.
QUICK = {"n_envs": 2, "n_steps": 64, "batch_size": 64, "n_epochs": 2, "timesteps": 256}


class _EnvTimer(gymnasium.Wrapper):
    """Adds the wall seconds spent in ``step``, ``reset`` and ``action_masks`` to ``clock["env"]``."""

    def __init__(self, env: gymnasium.Env, clock: dict[str, float]) -> None:
        super().__init__(env)
        self._clock = clock

    def step(self, action: Any) -> Any:
        t0 = time.perf_counter()
        out = self.env.step(action)
        self._clock["env"] += time.perf_counter() - t0
        return out

    def reset(self, **kwargs: Any) -> Any:
        t0 = time.perf_counter()
        out = self.env.reset(**kwargs)
        self._clock["env"] += time.perf_counter() - t0
        return out

    def action_masks(self) -> Any:
        t0 = time.perf_counter()
        out = self.env.get_wrapper_attr("action_masks")()
        self._clock["env"] += time.perf_counter() - t0
        return out


def _c4_mask(env: Any) -> Any:
    return env.action_mask()


def make_lama(clock: dict[str, float]) -> Callable[[], gymnasium.Env]:
    """An env factory: ``LamaDice-v1`` (two players vs the threshold opponent), timed into ``clock``."""
    def make() -> gymnasium.Env:
        import lama_env  # noqa: F401  (registers LamaDice-v1)

        env = gymnasium.make("LamaDice-v1", num_players=2, opponents=[OPPONENT], disable_env_checker=True)
        return _EnvTimer(env, clock)
    return make


def make_connect_four(clock: dict[str, float]) -> Callable[[], gymnasium.Env]:
    """An env factory: PettingZoo's ``connect_four_v3`` as a masked single-agent env, timed into ``clock``."""
    def make() -> gymnasium.Env:
        from pettingzoo.classic import connect_four_v3
        from sb3_contrib.common.wrappers import ActionMasker

        from .sb3_wrapper import SB3ActionMaskWrapper

        env = SB3ActionMaskWrapper(connect_four_v3.env())
        env.reset(seed=0)  # defines the spaces
        return _EnvTimer(ActionMasker(env, _c4_mask), clock)
    return make


def masked_logsumexp_us(actions: int = 129, rows: int = 256, legal: float = 0.05, calls: int = 50) -> dict[str, float]:
    """Microseconds per ``logsumexp`` over ``rows x actions`` logits: plain, and masked as MaskablePPO masks them.

    sb3-contrib's ``MaskableCategorical`` sets illegal logits to -1e8; on the CPU,
    torch's ``exp`` of arguments that underflow float32 takes a slow path, so with a
    large, mostly illegal action space every distribution costs far more than
    with a small one.  This measures that effect on its own.
    """
    import torch

    gen = torch.Generator().manual_seed(0)
    x = torch.randn(rows, actions, generator=gen)
    mask = torch.rand(rows, actions, generator=gen) < legal
    mask[:, 0] = True
    out = {}
    for name, t in (("plain", x), ("masked_-1e8", torch.where(mask, x, torch.tensor(-1e8)))):
        t.logsumexp(-1)
        t0 = time.perf_counter()
        for _ in range(calls):
            t.logsumexp(-1)
        out[name] = (time.perf_counter() - t0) / calls * 1e6
    return out


def _learn(make: Callable[[dict[str, float]], Callable[[], gymnasium.Env]], cfg: dict[str, int],
           seed: int) -> Sample:
    """Build a fresh model (untimed), then time ``learn`` with the env and ``train()`` clocks."""
    import torch
    from sb3_contrib import MaskablePPO
    from stable_baselines3.common.vec_env import DummyVecEnv

    from lama_dice.train.masked_distribution import LamaMaskablePolicy

    torch.distributions.Distribution.set_default_validate_args(False)  # as the trainer does
    clock = {"env": 0.0, "train": 0.0}
    venv = DummyVecEnv([make(clock)] * cfg["n_envs"])
    model = MaskablePPO(LamaMaskablePolicy, venv, n_steps=cfg["n_steps"], batch_size=cfg["batch_size"],
                        n_epochs=cfg["n_epochs"], policy_kwargs={"net_arch": [64, 64]}, seed=seed,
                        device="cpu", verbose=0)
    train = model.train

    def timed_train() -> None:
        t0 = time.perf_counter()
        train()
        clock["train"] += time.perf_counter() - t0

    model.train = timed_train  # type: ignore[method-assign]
    clock["env"] = 0.0  # leave out the construction's resets

    def go() -> dict:
        model.learn(total_timesteps=cfg["timesteps"])
        return {"work": model.num_timesteps, "env_s": clock["env"], "train_s": clock["train"]}

    s = timed(cfg["timesteps"], go)
    venv.close()
    return s


def run(cfg: dict[str, int] | None = None, repeats: int = 3, seed: int = 0,
        log: Callable[[str], None] | None = None) -> dict[str, Any]:
    """The JSON-ready training section (``skipped`` when sb3-contrib or PettingZoo's connect_four is missing)."""
    cfg = dict(cfg or FULL)
    try:
        import torch
        from sb3_contrib import MaskablePPO  # noqa: F401
    except ImportError as e:
        return {"skipped": f"training benchmark skipped: {e}"}
    try:
        from pettingzoo.classic import connect_four_v3  # noqa: F401
    except Exception as e:  # ImportError, or PettingZoo's DependencyNotInstalled (connect_four needs pygame)
        return {"skipped": f"training benchmark skipped: connect_four_v3 is not available ({type(e).__name__}: "
                           f"{e}); pip install 'lama-dice[bench]'"}
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        _learn(make_lama, dict(cfg, timesteps=cfg["n_envs"] * cfg["n_steps"]), seed)  # warm-up (imports)
        _learn(make_connect_four, dict(cfg, timesteps=cfg["n_envs"] * cfg["n_steps"]), seed)
        samples = alternate({
            "lama": lambda i: _learn(make_lama, cfg, seed + i),
            "connect_four": lambda i: _learn(make_connect_four, cfg, seed + i),
        }, repeats, log=log)
    finally:
        torch.set_num_threads(threads)
    try:
        torch.set_num_threads(1)
        diag = {f"logsumexp_us_{a}_actions": masked_logsumexp_us(a) for a in (129, 7)}
    finally:
        torch.set_num_threads(threads)
    results = {}
    for name, ss in samples.items():
        res = summary(ss, "env-step")
        env_s = sorted(s.extra["env_s"] / s.wall_s for s in ss)
        train_s = sorted(s.extra["train_s"] / s.wall_s for s in ss)
        rollout = sorted(s.work / (s.wall_s - s.extra["train_s"]) for s in ss)
        env_step = sorted(s.extra["env_s"] / s.work * 1e6 for s in ss)
        train_step = sorted(s.extra["train_s"] / s.work * 1e6 for s in ss)
        res.update(env_share=env_s[len(env_s) // 2], train_share=train_s[len(train_s) // 2],
                   rollout_per_s=rollout[len(rollout) // 2], env_us_per_step=env_step[len(env_step) // 2],
                   train_us_per_step=train_step[len(train_step) // 2])
        results[name] = res
    rollout_ratio = sorted((a.work / (a.wall_s - a.extra["train_s"])) / (b.work / (b.wall_s - b.extra["train_s"]))
                           for a, b in zip(samples["lama"], samples["connect_four"], strict=True))
    return {
        "what": "MaskablePPO learn() env-steps/s, DummyVecEnv, MlpPolicy [64, 64], one torch thread; "
                f"LamaDice-v1 (2 players vs {OPPONENT}) vs connect_four_v3 through PettingZoo's SB3 "
                "action-mask wrapper (one policy plays both sides)",
        "config": cfg, "repeats": repeats,
        "results": results,
        "diagnosis": {
            "note": "train() per env-step is dearer for LamaDice-v1 (129 actions, mostly masked) than for "
                    "connect_four (7): sb3-contrib masks illegal logits with -1e8 and torch's CPU exp is slow "
                    "on arguments that underflow; microseconds per logsumexp over 256 rows, one thread:",
            **diag,
        },
        "ratios": {
            "lama_vs_connect_four": ratio_entry(samples["lama"], samples["connect_four"], "lama", "connect_four"),
            "rollout_lama_vs_connect_four": {"of": "lama", "over": "connect_four",
                                             "ratio": rollout_ratio[len(rollout_ratio) // 2],
                                             "all": [round(x, 3) for x in rollout_ratio],
                                             "note": "env-steps/s of rollout collection alone "
                                                     "(learn() time less train() time)"},
        },
    }
