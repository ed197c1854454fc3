"""Train on Ray RLlib (PPO, self-play, any number of env runners): ``algorithm: rllib-ppo``.

For runs that outgrow one machine, lama-dice trains with Ray RLlib's PPO
rather than a distributed trainer of its own. Install the extra and run a
config whose ``algorithm`` is ``rllib-ppo``::

    pip install "lama-dice[rllib]"
    python -m lama_dice.train.rllib configs/rllib_2p.yaml              # ray.init() on this machine
    python -m lama_dice.train.rllib configs/rllib_2p.yaml --address auto   # an existing Ray cluster
    lama-dice evaluate rllib:runs/rllib_2p-20250101-120000 optimal --games 2000

What a run does, in order (:func:`train`):

1. validate the config (:class:`RLlibTrainConfig`, the YAML schema below);
2. make the run folder ``runs/NAME-YYYYmmdd-HHMMSS/`` with the resolved ``config.yaml``;
3. ``ray.init()`` locally (``ray.num_cpus`` CPUs, no dashboard) or
   ``ray.init(address=ray.address)`` on a cluster, unless Ray is already up;
4. build RLlib's PPO (new API stack) on :class:`lama_dice.train.rllib.models.LamaDiceRLlibEnv`,
   the PettingZoo env ``lama_dice_v0`` through RLlib's ``PettingZooEnv``
   wrapper, with the action-masking :class:`~lama_dice.train.rllib.models.MaskedPPOTorchRLModule`;
   every learner seat maps to the one shared module ``"main"`` (self-play
   through the policy mapping), and configured opponents (heuristics or frozen
   ``ppo:``/``rllib:`` checkpoints) take seats inside the env;
5. ``algo.train()`` for ``iterations`` iterations, writing TensorBoard scalars
   to ``tb/`` after each: the SB3 pipeline's ``game/*`` scalars (win rate,
   points per round, bust / quit / went-out rates, ...), ``rllib/*`` (returns,
   losses, entropy, throughput) and ``eval/<opponent>/*`` every
   ``eval.every`` iterations;
6. save RLlib checkpoints (``checkpoints/iter-N/`` every ``checkpoint.every``
   iterations, and ``final/``), each with a ``lama_dice.json`` sidecar, so
   ``rllib:RUN`` plays it in every tool; Ctrl-C saves ``interrupted/``;
7. evaluate ``final/`` against ``eval.opponents`` with :func:`lama_dice.evaluation.evaluate.evaluate`
   and save ``eval.json``.

The YAML schema (every key optional except ``algorithm``; unknown keys are errors)::

    algorithm: rllib-ppo
    name: rllib_2p            # run folder prefix (default: the file's stem)
    seed: 0
    iterations: 100           # algo.train() calls
    env: {num_players: 2, episode: game, reward: win, auto_forced: false, max_rounds: null, rules: {}}
    opponents: []             # agent specs or {agent, weight}: seats played inside the env
    selfplay: {weight: 1.0}   # P(a non-learner seat is the shared policy itself) when opponents are listed
    ray:
      address: null           # null: ray.init() here; "auto" or "ray://HEAD:10001": a running cluster
      num_cpus: null          # local only: CPUs Ray may use (null: all)
      num_env_runners: 1      # sampling workers (0: sample in the driver)
      num_envs_per_env_runner: 8  # envs stepped together (one batched forward pass)
      num_cpus_per_env_runner: 1
      num_learners: 0         # 0: learn in the driver; N: N learner workers
      num_gpus_per_learner: 0
      rollout_fragment_length: auto
      runtime_env: null       # passed to ray.init (e.g. {pip: ["lama-dice[rllib]"]} on a cluster)
    ppo: {lr: 3.0e-4, train_batch_size: 4000, minibatch_size: 256, num_epochs: 10, gamma: 1.0,
          lambda: 0.95, clip_param: 0.2, vf_clip_param: 10.0, entropy_coeff: 0.01,
          vf_loss_coeff: 0.5, grad_clip: 0.5, use_kl_loss: false, kl_coeff: 0.2}
    model: {hidden: [128, 128], activation: tanh, vf_share_layers: false}
    eval: {every: 0, games: 200, final_games: 1000, opponents: [optimal], seed: 12345, workers: 1}
    checkpoint: {every: 10}   # iterations between checkpoints (0: only final/)

The config is validated without Ray; only :func:`train` needs the extra (else
:class:`lama_dice.agents.rllib_agent.RLlibMissingError` with the install command).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, Mapping, Sequence

from pydantic import Field, ValidationError, field_validator, model_validator

from lama_env.errors import LamaDiceError
from lama_env.rules import RulesConfig

from ..config import ConfigKeyError, Section, check_rules, describe_error, opponent_shorthand

#: The ``algorithm`` value that selects this trainer.
ALGORITHM = "rllib-ppo"
#: The id of the trained, shared RLModule.
MODULE_ID = "main"
#: Key of the game metrics in the env runners' results (``result["env_runners"][GAME_METRICS]``).
GAME_METRICS = "lama_game"

__all__ = [
    "ALGORITHM", "GAME_METRICS", "MODULE_ID", "RLlibConfigError", "RLlibTrainConfig", "RLlibTrainResult",
    "build_algorithm_config",
    "game_scalars", "is_rllib_config", "load_rllib_config", "main", "measure_sampling", "parse_rllib_config",
    "run_command", "train",
]


class RLlibConfigError(LamaDiceError, ValueError):
    """An ``algorithm: rllib-ppo`` config that is not valid (the message names the key)."""


# ---------------------------------------------------------------------------
# the config

class RLlibEnvConfig(Section):
    """The PettingZoo env ``lama_dice_v0`` (see :func:`lama_env.lama_dice_v0.env`)."""

    num_players: int = Field(2, ge=1, le=6, description="players at the table (1 = solo)")
    episode: Literal["game", "round"] = Field("game", description="one episode = a whole game or one round")
    reward: Literal["win", "points"] = Field("win", description="win: zero-sum +1/-1 at the end; points: minus the round points")
    auto_forced: bool = Field(False, description="apply decisions with a single legal action automatically")
    max_rounds: int | None = Field(None, ge=1, description="truncate an episode after this many rounds")
    rules: dict[str, Any] = Field(default_factory=dict, description="rules-config fields (RULES.md [choice]s)")

    _check_rules = field_validator("rules")(check_rules)


class RLlibOpponentConfig(Section):
    """An opponent seat filler: an agent spec and its sampling weight."""

    agent: str = Field(description="agent spec (optimal, threshold:0.2, ppo:PATH, rllib:PATH, ...)")
    weight: float = Field(1.0, gt=0, description="relative probability of drawing this opponent")


class RLlibSelfPlayConfig(Section):
    """Self-play: every learner seat is the shared module ``main``."""

    weight: float = Field(1.0, ge=0, le=1, description="probability that a non-learner seat is the shared policy "
                                                       "itself rather than an opponent (when opponents are listed)")


class RayConfig(Section):
    """Where and how wide RLlib runs."""

    address: str | None = Field(None, description="null: ray.init() on this machine; 'auto' or 'ray://HEAD:10001': an existing cluster")
    num_cpus: int | None = Field(None, ge=1, description="local only: CPUs Ray may use (null: all)")
    num_env_runners: int = Field(1, ge=0, description="sampling worker processes (0: sample in the driver)")
    num_envs_per_env_runner: int = Field(8, ge=1, description="envs stepped together by each env runner "
                                                              "(one batched forward pass for all: ~3x the steps/s of 1)")
    num_cpus_per_env_runner: float = Field(1, ge=0, description="CPUs reserved per env runner")
    num_learners: int = Field(0, ge=0, description="learner workers (0: learn in the driver)")
    num_gpus_per_learner: float = Field(0, ge=0, description="GPUs per learner")
    rollout_fragment_length: int | Literal["auto"] = Field("auto", description="steps per env runner per sample call")
    runtime_env: dict[str, Any] | None = Field(None, description="ray.init runtime_env (e.g. pip packages for the cluster's workers)")

    @field_validator("rollout_fragment_length")
    @classmethod
    def _positive(cls, v: Any) -> Any:
        if isinstance(v, int) and v < 1:
            raise ValueError("must be 'auto' or a positive integer")
        return v


class RLlibPPOConfig(Section):
    """PPO hyperparameters (RLlib's names)."""

    lr: float = Field(3e-4, gt=0, description="Adam step size")
    train_batch_size: int = Field(4000, ge=2, description="env steps per training iteration (train_batch_size_per_learner)")
    minibatch_size: int = Field(256, ge=1, description="SGD minibatch size")
    num_epochs: int = Field(10, ge=1, description="passes over each batch")
    gamma: float = Field(1.0, ge=0, le=1, description="discount")
    lambda_: float = Field(0.95, ge=0, le=1, alias="lambda", description="GAE lambda")
    clip_param: float = Field(0.2, gt=0, description="PPO clip range")
    vf_clip_param: float = Field(10.0, gt=0, description="value-function clip range")
    entropy_coeff: float = Field(0.01, ge=0, description="entropy bonus")
    vf_loss_coeff: float = Field(0.5, ge=0, description="value-loss weight")
    grad_clip: float | None = Field(0.5, gt=0, description="global gradient-norm clip (null: none)")
    use_kl_loss: bool = Field(False, description="add RLlib's adaptive KL penalty")
    kl_coeff: float = Field(0.2, ge=0, description="initial KL coefficient (with use_kl_loss)")


class RLlibModelConfig(Section):
    """The MLP of the RLModule."""

    hidden: list[int] = Field(default_factory=lambda: [128, 128], min_length=1, description="hidden layer sizes")
    activation: Literal["tanh", "relu", "elu", "swish", "linear"] = Field("tanh", description="hidden activation")
    vf_share_layers: bool = Field(False, description="share the hidden layers between policy and value")

    @field_validator("hidden")
    @classmethod
    def _positive(cls, v: list[int]) -> list[int]:
        if any(n < 1 for n in v):
            raise ValueError("layer sizes must be positive")
        return v


class RLlibEvalConfig(Section):
    """Evaluation with the project's harness (:func:`lama_dice.evaluation.evaluate.evaluate`)."""

    every: int = Field(0, ge=0, description="iterations between evaluations (0: only the final one)")
    games: int = Field(200, ge=1, description="games per opponent at each periodic evaluation")
    final_games: int = Field(1000, ge=0, description="games per opponent in the final evaluation (0: none)")
    opponents: list[str] = Field(default_factory=lambda: ["optimal"], description="agent specs to evaluate against")
    seed: int = Field(12345, description="evaluation seed")
    workers: int = Field(1, ge=1, description="evaluation worker processes")


class RLlibCheckpointConfig(Section):
    """Periodic RLlib checkpoints in ``checkpoints/iter-N`` (``final/`` is always written)."""

    every: int = Field(10, ge=0, description="iterations between checkpoints (0: only final/)")


class RLlibTrainConfig(Section):
    """A whole RLlib training run."""

    algorithm: Literal["rllib-ppo"] = Field(description="selects this trainer")
    name: str = Field("rllib", min_length=1, pattern=r"^[A-Za-z0-9_.\-]+$", description="run name (the run folder's prefix)")
    description: str = Field("", description="free text")
    seed: int = Field(0, ge=0, description="seed of RLlib and the env's opponent draws")
    iterations: int = Field(100, ge=1, description="training iterations (algo.train() calls)")
    env: RLlibEnvConfig = Field(default_factory=RLlibEnvConfig)
    opponents: list[RLlibOpponentConfig] = Field(default_factory=list,
                                                 description="seats played inside the env, drawn per seat and episode")
    selfplay: RLlibSelfPlayConfig = Field(default_factory=RLlibSelfPlayConfig)
    ray: RayConfig = Field(default_factory=RayConfig)
    ppo: RLlibPPOConfig = Field(default_factory=RLlibPPOConfig)
    model: RLlibModelConfig = Field(default_factory=RLlibModelConfig)
    eval: RLlibEvalConfig = Field(default_factory=RLlibEvalConfig)
    checkpoint: RLlibCheckpointConfig = Field(default_factory=RLlibCheckpointConfig)

    _opponent_shorthand = field_validator("opponents", mode="before")(opponent_shorthand)

    @model_validator(mode="after")
    def _check_consistency(self) -> "RLlibTrainConfig":
        if self.env.num_players == 1 and self.opponents:
            raise ConfigKeyError("opponents", "must be empty for the solo variant (env.num_players: 1)")
        if self.ppo.minibatch_size > self.ppo.train_batch_size:
            raise ConfigKeyError("ppo.minibatch_size", f"{self.ppo.minibatch_size} exceeds ppo.train_batch_size "
                                                  f"({self.ppo.train_batch_size})")
        if self.ray.address is not None and self.ray.num_cpus is not None:
            raise ConfigKeyError("ray.num_cpus", "only applies to a local Ray (ray.address: null); "
                                            "a cluster has the CPUs it was started with")
        return self

    @property
    def rules(self) -> RulesConfig:
        """The rules config of :attr:`env`."""
        return RulesConfig.from_dict(self.env.rules)

    def env_config(self) -> dict[str, Any]:
        """RLlib's ``env_config`` for :class:`lama_dice.train.rllib.models.LamaDiceRLlibEnv`."""
        e = self.env
        return {
            "num_players": e.num_players, "episode": e.episode, "reward": e.reward,
            "auto_forced": e.auto_forced, "max_rounds": e.max_rounds, "rules": dict(e.rules),
            "opponents": [[_absolute_spec(o.agent), o.weight] for o in self.opponents],
            "selfplay_weight": self.selfplay.weight,
        }

    def to_dict(self) -> dict[str, Any]:
        """The resolved config (every default filled in), ready for YAML."""
        return self.model_dump(mode="json", by_alias=True)

    def to_yaml(self) -> str:
        import yaml

        return yaml.safe_dump(self.to_dict(), sort_keys=False, default_flow_style=False, width=100)


def _absolute_spec(spec: str) -> str:
    """``ppo:PATH`` / ``rllib:PATH`` with an existing relative PATH made absolute (env runners may run elsewhere)."""
    name, sep, arg = spec.partition(":")
    if sep and name in ("ppo", "rllib") and arg and not os.path.isabs(arg) and os.path.exists(arg):
        return f"{name}:{os.path.abspath(arg)}"
    return spec


def parse_rllib_config(data: Any, source: str = "config", check_agents: bool = True) -> RLlibTrainConfig:
    """Validate a mapping (as read from YAML) into an :class:`RLlibTrainConfig`.

    Args:
        data: the mapping.
        source: how to name the config in error messages.
        check_agents: also build every opponent and evaluation spec once.

    Raises:
        RLlibConfigError: one line naming the first bad key.
    """
    if not isinstance(data, Mapping):
        raise RLlibConfigError(f"{source}: a config must be a mapping of keys, got {type(data).__name__}")
    try:
        cfg = RLlibTrainConfig.model_validate(dict(data))
    except ValidationError as e:
        raise RLlibConfigError(f"{source}: {describe_error(e, RLlibTrainConfig)}") from None
    if check_agents:
        _check_agent_specs(cfg, source)
    return cfg


def _check_agent_specs(cfg: RLlibTrainConfig, source: str) -> None:
    from lama_dice.agents.registry import make_agent

    specs = [(f"opponents[{i}].agent", o.agent) for i, o in enumerate(cfg.opponents)]
    specs += [(f"eval.opponents[{i}]", s) for i, s in enumerate(cfg.eval.opponents)]
    done: set[str] = set()
    for key, spec in specs:
        if spec in done:
            continue
        try:
            agent = make_agent(spec)
            check = getattr(agent, "check_compatible", None)
            if check is not None:
                check(cfg.env.num_players)
        except LamaDiceError as e:
            raise RLlibConfigError(f"{source}: {key}: {e}") from None
        done.add(spec)


def _read_yaml(path: str | os.PathLike) -> Any:
    import yaml

    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except OSError as e:
        raise RLlibConfigError(f"cannot read config {path}: {e.strerror or e}") from None
    except UnicodeDecodeError:
        raise RLlibConfigError(f"{path}: not a UTF-8 text file") from None
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        where = f" at line {mark.line + 1} column {mark.column + 1}" if mark is not None else ""
        raise RLlibConfigError(f"{path}: invalid YAML{where}: {getattr(e, 'problem', None) or e}") from None


def is_rllib_config(path: str | os.PathLike) -> bool:
    """True when the YAML file at ``path`` says ``algorithm: rllib-ppo`` (cheap: no Ray import; False if unreadable)."""
    try:
        data = _read_yaml(path)
    except RLlibConfigError:
        return False
    return isinstance(data, Mapping) and data.get("algorithm") == ALGORITHM


def load_rllib_config(path: str | os.PathLike, check_agents: bool = True) -> RLlibTrainConfig:
    """Read and validate a YAML config; the run name defaults to the file's stem.

    Raises:
        RLlibConfigError: the file is missing, is not YAML, or is not a valid config.
    """
    import re

    data = _read_yaml(path)
    if data is None:
        data = {}
    if isinstance(data, Mapping) and "name" not in data:
        data = {"name": re.sub(r"[^A-Za-z0-9_.\-]", "_", Path(path).stem) or "rllib", **data}
    return parse_rllib_config(data, source=str(path), check_agents=check_agents)


# ---------------------------------------------------------------------------
# RLlib

def shared_policy_mapping(agent_id: Any, episode: Any, **kwargs: Any) -> str:
    """The policy mapping of self-play: every learner seat is the shared module ``"main"``."""
    return MODULE_ID


def build_algorithm_config(cfg: RLlibTrainConfig) -> Any:
    """RLlib's :class:`~ray.rllib.algorithms.ppo.PPOConfig` for ``cfg`` (new API stack).

    Raises:
        lama_dice.agents.rllib_agent.RLlibMissingError: the ``rllib`` extra is not installed.
    """
    from lama_dice.agents.rllib_agent import require_ray

    require_ray("algorithm: rllib-ppo")
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.rllib.core.rl_module.multi_rl_module import MultiRLModuleSpec

    from lama_dice.train.rllib.models import GameStatsCallback, LamaDiceRLlibEnv, module_spec

    r, p, m = cfg.ray, cfg.ppo, cfg.model
    return (
        PPOConfig()
        # RLlib's env pre-check steps random actions, illegal in a masked game: skip it
        .environment(env=LamaDiceRLlibEnv, env_config=cfg.env_config(), disable_env_checking=True)
        .multi_agent(policies={MODULE_ID}, policy_mapping_fn=shared_policy_mapping, policies_to_train=[MODULE_ID])
        .rl_module(rl_module_spec=MultiRLModuleSpec(rl_module_specs={
            MODULE_ID: module_spec(m.hidden, m.activation, m.vf_share_layers)}))
        .env_runners(num_env_runners=r.num_env_runners, num_envs_per_env_runner=r.num_envs_per_env_runner,
                     num_cpus_per_env_runner=r.num_cpus_per_env_runner,
                     rollout_fragment_length=r.rollout_fragment_length)
        .learners(num_learners=r.num_learners, num_gpus_per_learner=r.num_gpus_per_learner)
        .training(lr=p.lr, train_batch_size_per_learner=p.train_batch_size, minibatch_size=p.minibatch_size,
                  num_epochs=p.num_epochs, gamma=p.gamma, lambda_=p.lambda_, clip_param=p.clip_param,
                  vf_clip_param=p.vf_clip_param, entropy_coeff=p.entropy_coeff, vf_loss_coeff=p.vf_loss_coeff,
                  grad_clip=p.grad_clip, use_kl_loss=p.use_kl_loss, kl_coeff=p.kl_coeff)
        .callbacks(GameStatsCallback)
        .debugging(seed=cfg.seed, log_level="ERROR")
    )


def game_scalars(result: Mapping[str, Any], num_players: int, module_id: str = MODULE_ID) -> dict[str, float]:
    """The ``game/*`` scalars of one training iteration, from the callback's sums.

    The names and definitions are those of the SB3 pipeline
    (:func:`lama_dice.train.callbacks.summarize_episodes`): ``episodes``,
    ``rounds_per_episode``, ``win_rate`` (not solo), ``points_per_round``
    (total round points over total rounds), ``final_points``, ``bust_rate``,
    ``quit_rate``, ``went_out_rate`` (per round) and ``episode_length`` (the
    learner seat's decisions), over the learner seats of the episodes that
    ended in the iteration. With self-play, every seat of the shared policy
    counts as one learner episode (so the win rate of pure self-play is about
    1/N).
    """
    sums = (result.get("env_runners") or {}).get(GAME_METRICS, {}).get(module_id) or {}
    s = {k: float(v) for k, v in sums.items() if v is not None and not math.isnan(float(v))}
    n = s.get("episodes", 0.0)
    if not n:
        return {}
    rounds = s.get("rounds", 0.0)
    out = {"episodes": n, "rounds_per_episode": rounds / n, "final_points": s.get("final_points", 0.0) / n,
           "episode_length": s.get("steps", 0.0) / n}
    if num_players > 1:
        out["win_rate"] = s.get("win", 0.0) / n
    if rounds:
        out["points_per_round"] = s.get("points", 0.0) / rounds
        for key, name in (("busts", "bust_rate"), ("quits", "quit_rate"), ("went_out", "went_out_rate")):
            out[name] = s.get(key, 0.0) / rounds
    return out


def _get(d: Mapping[str, Any], *path: str) -> float | None:
    for k in path:
        if not isinstance(d, Mapping) or k not in d:
            return None
        d = d[k]
    try:
        v = float(d)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return None
    return None if math.isnan(v) else v


def rllib_scalars(result: Mapping[str, Any], module_id: str = MODULE_ID) -> dict[str, float]:
    """RLlib's own numbers of one iteration worth plotting (``rllib/*``)."""
    pick = {
        "episode_return_mean": ("env_runners", "episode_return_mean"),
        "episode_len_mean": ("env_runners", "episode_len_mean"),
        "env_steps_sampled": ("env_runners", "num_env_steps_sampled"),
        "env_steps_sampled_lifetime": ("env_runners", "num_env_steps_sampled_lifetime"),
        "sample_time_s": ("timers", "env_runner_sampling_timer"),
        "learn_time_s": ("timers", "learner_update_timer"),
        "total_loss": ("learners", module_id, "total_loss"),
        "policy_loss": ("learners", module_id, "policy_loss"),
        "vf_loss": ("learners", module_id, "vf_loss"),
        "entropy": ("learners", module_id, "entropy"),
        "mean_kl_loss": ("learners", module_id, "mean_kl_loss"),
        "vf_explained_var": ("learners", module_id, "vf_explained_var"),
    }
    out = {k: v for k, path in pick.items() if (v := _get(result, *path)) is not None}
    if out.get("sample_time_s") and out.get("env_steps_sampled"):
        out["sample_steps_per_s"] = out["env_steps_sampled"] / out["sample_time_s"]
    return out


# ---------------------------------------------------------------------------
# the training loop

@dataclass
class RLlibTrainResult:
    """What :func:`train` returns."""

    run_dir: Path
    checkpoint: Path | None  #: final/ (or interrupted/)
    iterations: int  #: iterations done
    timesteps: int  #: env steps sampled
    interrupted: bool = False
    history: list[dict[str, float]] = field(default_factory=list)  #: per-iteration scalars
    evaluation: dict[str, Any] | None = None  #: the final evaluation (eval.json)


def _make_run_dir(cfg: RLlibTrainConfig, run_dir: str | os.PathLike | None, runs_root: str | os.PathLike) -> Path:
    if run_dir is None:
        base = Path(runs_root) / f"{cfg.name}-{time.strftime('%Y%m%d-%H%M%S')}"
        d, k = base, 1
        while d.exists():
            k += 1
            d = base.with_name(f"{base.name}-{k}")
    else:
        d = Path(run_dir)
        if (d / "config.yaml").exists():
            raise RLlibConfigError(f"run folder {d} already holds a run (config.yaml); choose another --run-dir")
    d.mkdir(parents=True, exist_ok=True)
    return d


def save_checkpoint(algo: Any, path: Path, cfg: RLlibTrainConfig, iteration: int, timesteps: int) -> Path:
    """``algo.save_to_path(path)`` plus the ``lama_dice.json`` sidecar that ``rllib:PATH`` reads."""
    from lama_dice.agents.rllib_agent import DEFAULT_MODULE_ID, SIDECAR_FORMAT, SIDECAR_NAME

    path = Path(path).absolute()
    path.parent.mkdir(parents=True, exist_ok=True)
    algo.save_to_path(str(path))
    sidecar = {"format": SIDECAR_FORMAT, "algorithm": ALGORITHM, "module_id": DEFAULT_MODULE_ID,
               "num_players": cfg.env.num_players, "rules": cfg.rules.to_dict(), "iteration": iteration,
               "timesteps": timesteps, "config": cfg.name}
    tmp = path / f".{SIDECAR_NAME}.tmp"
    tmp.write_text(json.dumps(sidecar, indent=2) + "\n", encoding="utf-8")
    os.replace(tmp, path / SIDECAR_NAME)
    return path


def _init_ray(cfg: RLlibTrainConfig) -> bool:
    """Start or join Ray as configured; True when this call started it (and should shut it down)."""
    import ray

    if ray.is_initialized():
        return False
    kw: dict[str, Any] = {"log_to_driver": False, "include_dashboard": False}
    if cfg.ray.runtime_env is not None:
        kw["runtime_env"] = cfg.ray.runtime_env
    if cfg.ray.address is not None:
        ray.init(address=cfg.ray.address, **kw)
    else:
        ray.init(address="local", num_cpus=cfg.ray.num_cpus, **kw)  # a new local instance, never a stray one
    return True


def _current_policy(algo: Any, num_players: int) -> Any:
    from lama_dice.agents.rllib_agent import RLlibPolicy

    return RLlibPolicy.from_module(algo.get_module(MODULE_ID), num_players, spec="rllib:current")


def _evaluate(policy: Any, cfg: RLlibTrainConfig, games: int) -> dict[str, dict[str, Any]]:
    from lama_dice.train.callbacks import evaluate_learner

    return evaluate_learner(policy, cfg.eval.opponents, cfg.env.num_players, cfg.rules, games=games,
                            seed=cfg.eval.seed, workers=cfg.eval.workers)


def train(cfg: RLlibTrainConfig, *, run_dir: str | os.PathLike | None = None, iterations: int | None = None,
          seed: int | None = None, runs_root: str | os.PathLike = "runs", quiet: bool = False,
          log: Any = None) -> RLlibTrainResult:
    """Train ``cfg`` with RLlib's PPO (see the module docstring for what a run does).

    Args:
        cfg: the validated config.
        run_dir: the run folder (default ``runs_root/NAME-YYYYmmdd-HHMMSS``); must not hold a run.
        iterations, seed: override the config's.
        runs_root: parent of new run folders.
        quiet: print nothing.
        log: where progress lines go (default stderr).

    Raises:
        lama_dice.agents.rllib_agent.RLlibMissingError: the ``rllib`` extra is not installed.
        RLlibConfigError: the run folder already holds a run.
    """
    from lama_dice.agents.rllib_agent import require_ray

    require_ray("algorithm: rllib-ppo")
    updates: dict[str, Any] = {}
    if iterations is not None:
        updates["iterations"] = iterations
    if seed is not None:
        updates["seed"] = seed
    if updates:
        cfg = parse_rllib_config({**cfg.to_dict(), **updates}, source="config", check_agents=False)
    out = log if log is not None else sys.stderr

    def say(msg: str) -> None:
        if not quiet:
            print(msg, file=out, flush=True)

    d = _make_run_dir(cfg, run_dir, runs_root)
    (d / "config.yaml").write_text(cfg.to_yaml(), encoding="utf-8")
    from torch.utils.tensorboard import SummaryWriter

    started = _init_ray(cfg)
    algo = None
    writer = SummaryWriter(str(d / "tb"))
    result = RLlibTrainResult(run_dir=d, checkpoint=None, iterations=0, timesteps=0)
    n = cfg.env.num_players
    try:
        algo = build_algorithm_config(cfg).build_algo()
        say(f"rllib-ppo: {cfg.iterations} iterations of {cfg.ppo.train_batch_size} steps, "
            f"{cfg.ray.num_env_runners} env runner(s); run folder {d}")
        try:
            for it in range(1, cfg.iterations + 1):
                t0 = time.perf_counter()
                res = algo.train()
                wall = time.perf_counter() - t0
                scalars = {f"game/{k}": v for k, v in game_scalars(res, n).items()}
                scalars.update({f"rllib/{k}": v for k, v in rllib_scalars(res).items()})
                steps = int(scalars.get("rllib/env_steps_sampled_lifetime", result.timesteps))
                scalars["rllib/iteration_s"] = wall
                if scalars.get("rllib/env_steps_sampled"):
                    scalars["rllib/steps_per_s"] = scalars["rllib/env_steps_sampled"] / wall
                if cfg.eval.every and it % cfg.eval.every == 0:
                    for opp, st in _evaluate(_current_policy(algo, n), cfg, cfg.eval.games).items():
                        scalars.update(_eval_scalars(opp, st))
                for k, v in scalars.items():
                    writer.add_scalar(k, v, steps)
                writer.flush()
                result.iterations, result.timesteps = it, steps
                result.history.append(dict(scalars, iteration=it, timesteps=steps))
                say(_progress_line(it, cfg.iterations, steps, scalars))
                if cfg.checkpoint.every and it % cfg.checkpoint.every == 0:
                    save_checkpoint(algo, d / "checkpoints" / f"iter-{it:06d}", cfg, it, steps)
        except KeyboardInterrupt:
            result.interrupted = True
            result.checkpoint = save_checkpoint(algo, d / "interrupted", cfg, result.iterations, result.timesteps)
            say(f"interrupted: saved {result.checkpoint} (evaluate it: lama-dice evaluate rllib:{d} ...)")
            return result
        result.checkpoint = save_checkpoint(algo, d / "final", cfg, result.iterations, result.timesteps)
        say(f"saved {result.checkpoint}")
        if cfg.eval.final_games and (n == 1 or cfg.eval.opponents):
            ev = _evaluate(_current_policy(algo, n), cfg, cfg.eval.final_games)
            result.evaluation = ev
            (d / "eval.json").write_text(json.dumps(ev, indent=2) + "\n", encoding="utf-8")
            for opp, st in ev.items():
                say(f"  final vs {opp}: " + _stats_line(st))
        return result
    finally:
        writer.close()
        if algo is not None:
            algo.stop()
        if started:
            import ray

            ray.shutdown()


def measure_sampling(cfg: RLlibTrainConfig, rounds: int = 3) -> dict[str, float]:
    """Env-runner throughput: env steps sampled per second by all env runners together (no learning).

    Builds the algorithm of ``cfg``, samples once to warm up, then ``rounds``
    times ``ppo.train_batch_size`` steps split over the env runners (in
    parallel, as ``algo.train()`` does), and times those.

    Returns:
        ``{"env_runners", "envs_per_env_runner", "steps", "seconds", "steps_per_s"}``.
    """
    from lama_dice.agents.rllib_agent import require_ray

    require_ray("algorithm: rllib-ppo")
    started = _init_ray(cfg)
    algo = None
    try:
        algo = build_algorithm_config(cfg).build_algo()
        n = cfg.ray.num_env_runners
        per = max(1, cfg.ppo.train_batch_size // max(1, n))

        def sample(runner: Any) -> int:
            return sum(len(e) for e in runner.sample(num_timesteps=per))

        group = algo.env_runner_group
        group.foreach_env_runner(sample, local_env_runner=n == 0)  # warm-up
        steps = 0
        t0 = time.perf_counter()
        for _ in range(rounds):
            steps += sum(group.foreach_env_runner(sample, local_env_runner=n == 0))
        wall = time.perf_counter() - t0
    finally:
        if algo is not None:
            algo.stop()
        if started:
            import ray

            ray.shutdown()
    return {"env_runners": n, "envs_per_env_runner": cfg.ray.num_envs_per_env_runner, "steps": steps,
            "seconds": round(wall, 3), "steps_per_s": round(steps / wall, 1)}


def _eval_scalars(opp: str, st: Mapping[str, Any]) -> dict[str, float]:
    from lama_dice.train.callbacks import tag_of

    out = {}
    for key in ("win_rate", "mean_points_per_round", "bust_rate", "quit_rate", "went_out_rate"):
        v = st.get(key)
        if isinstance(v, (int, float)):
            out[f"eval/{tag_of(opp)}/{key}"] = float(v)
    return out


def _stats_line(st: Mapping[str, Any]) -> str:
    parts = []
    for key in ("win_rate", "mean_points_per_round"):
        v = st.get(key)
        if isinstance(v, (int, float)):
            parts.append(f"{key} {v:.3f}")
    return ", ".join(parts) or json.dumps(st)


def _progress_line(it: int, total: int, steps: int, s: Mapping[str, float]) -> str:
    parts = [f"iter {it}/{total}", f"steps {steps}"]
    for key, fmt in (("game/win_rate", "win {:.3f}"), ("game/points_per_round", "pts/round {:.2f}"),
                     ("rllib/episode_return_mean", "return {:.3f}"), ("rllib/steps_per_s", "{:.0f} steps/s")):
        if key in s:
            parts.append(fmt.format(s[key]))
    return "  ".join(parts)


# ---------------------------------------------------------------------------
# command line

def add_arguments(p: argparse.ArgumentParser) -> None:
    """The options of ``python -m lama_dice.train.rllib`` (and of ``lama-dice train`` for rllib-ppo configs)."""
    p.add_argument("config", metavar="CONFIG.yaml", help="an 'algorithm: rllib-ppo' config (see configs/rllib_2p.yaml)")
    p.add_argument("--run-dir", metavar="DIR", default=None, help="the run folder (default runs/NAME-YYYYmmdd-HHMMSS)")
    p.add_argument("--iterations", type=int, metavar="N", default=None, help="override iterations")
    p.add_argument("--seed", type=int, metavar="S", default=None, help="override seed")
    p.add_argument("--address", metavar="ADDR", default=None,
                   help="join a running Ray cluster (overrides ray.address; e.g. auto or ray://HEAD:10001)")
    p.add_argument("--env-runners", type=int, metavar="N", default=None, help="override ray.num_env_runners")
    p.add_argument("--runs-root", metavar="DIR", default="runs", help="parent of new run folders (default runs/)")
    p.add_argument("--envs-per-runner", type=int, metavar="N", default=None,
                   help="override ray.num_envs_per_env_runner")
    p.add_argument("--check", action="store_true", help="only validate the config and print it resolved")
    p.add_argument("--measure-sampling", action="store_true",
                   help="only measure the env runners' steps per second (no learning) and print it as JSON")


def run_command(args: argparse.Namespace) -> int:
    """Run from parsed arguments (``lama-dice train`` dispatches here for ``algorithm: rllib-ppo``).

    Returns:
        0, or 130 when interrupted. Bad input raises a :class:`LamaDiceError` (one line).
    """
    cfg = load_rllib_config(args.config)
    if getattr(args, "resume", None):
        raise RLlibConfigError(f"{args.config}: --resume is not supported for algorithm: {ALGORITHM} "
                               f"(start a new run; frozen checkpoints can be opponents: rllib:PATH)")
    iterations = getattr(args, "iterations", None)
    total = getattr(args, "total_timesteps", None)  # lama-dice train's option: whole iterations of it
    if iterations is None and total is not None:
        iterations = max(1, math.ceil(total / cfg.ppo.train_batch_size))
    ray_over: dict[str, Any] = {}
    if getattr(args, "address", None) is not None:
        ray_over["address"] = args.address
        ray_over["num_cpus"] = None
    if getattr(args, "env_runners", None) is not None:
        ray_over["num_env_runners"] = args.env_runners
    if getattr(args, "envs_per_runner", None) is not None:
        ray_over["num_envs_per_env_runner"] = args.envs_per_runner
    if ray_over:
        data = cfg.to_dict()
        data["ray"] = {**data["ray"], **ray_over}
        cfg = parse_rllib_config(data, source=str(args.config), check_agents=False)
    if getattr(args, "check", False):
        print(cfg.to_yaml(), end="")
        return 0
    if getattr(args, "measure_sampling", False):
        print(json.dumps(measure_sampling(cfg)))
        return 0
    res = train(cfg, run_dir=getattr(args, "run_dir", None), iterations=iterations,
                seed=getattr(args, "seed", None), runs_root=getattr(args, "runs_root", "runs"))
    return 130 if res.interrupted else 0


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m lama_dice.train.rllib CONFIG.yaml [options]``."""
    p = argparse.ArgumentParser(prog="python -m lama_dice.train.rllib", description=__doc__.split("\n\n")[0])
    add_arguments(p)
    args = p.parse_args(argv)
    try:
        return run_command(args)
    except LamaDiceError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
