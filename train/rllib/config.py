"""The config of the RLlib trainer (``algorithm: rllib-ppo``): the YAML schema, validated without Ray.

The schema (every key optional except ``algorithm``; unknown keys are errors)::

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
    eval: {every: 0, games: 200, final_games: 1000, opponents: [optimal], workers: 1, seed: 12345}
    checkpoint: {every: 10}   # iterations between checkpoints (0: only final/)

The sections both trainers share (the env basics and ``rules``, an opponent,
the evaluation basics) and the reading, validation and error reporting are
those of :mod:`lama_dice.train.config`; the sections here add what only
RLlib has. :func:`load_rllib_config` and :func:`parse_rllib_config` raise
:class:`RLlibConfigError` (a :class:`~lama_dice.train.config.ConfigError`)
with a one-line message that names the key.
"""

from __future__ import annotations

import os
from typing import Any, ClassVar, Literal

from pydantic import Field, field_validator, model_validator

from lama_dice.agents.rllib_agent import DEFAULT_MODULE_ID
from lama_env.reader import MAX_SEED
from lama_env.rules import RulesConfig

from ..config import (
    ConfigError,
    ConfigKeyError,
    EnvSection,
    EvalSection,
    OpponentConfig,
    Rules,
    RunConfig,
    Section,
    check_layer_sizes,
    load_as,
    networks_problem,
    opponent_shorthand,
    parse_as,
    says_algorithm,
)

#: The ``algorithm`` value that selects this trainer.
ALGORITHM = "rllib-ppo"
#: The id of the trained, shared RLModule (the one ``rllib:PATH`` plays).
MODULE_ID = DEFAULT_MODULE_ID

__all__ = [
    "ALGORITHM", "MODULE_ID", "RLlibConfigError", "RLlibTrainConfig", "is_rllib_config", "load_rllib_config",
    "parse_rllib_config",
]


class RLlibConfigError(ConfigError):
    """An ``algorithm: rllib-ppo`` config that is not valid (the message names the key)."""


class RLlibEnvConfig(EnvSection):
    """The PettingZoo env ``lama_dice_v1`` (see :func:`lama_env.lama_dice_v1.env`)."""

    auto_forced: bool = Field(default=False, description="apply decisions with a single legal action automatically")
    max_rounds: int | None = Field(default=None, ge=1, description="truncate an episode after this many rounds")
    rules: Rules = Field(default_factory=RulesConfig)  # repeated here for mypy, which sees no default in Annotated


class RLlibSelfPlayConfig(Section):
    """Self-play: every learner seat is the shared module ``main``."""

    weight: float = Field(default=1.0, ge=0, le=1,
                          description="probability that a non-learner seat is the shared policy itself rather than "
                                      "an opponent (when opponents are listed)")


class RayConfig(Section):
    """Where and how wide RLlib runs."""

    address: str | None = Field(default=None,
                                description="null: ray.init() on this machine; 'auto' or 'ray://HEAD:10001': an "
                                            "existing cluster")
    num_cpus: int | None = Field(default=None, ge=1, description="local only: CPUs Ray may use (null: all)")
    num_env_runners: int = Field(default=1, ge=0, description="sampling worker processes (0: sample in the driver)")
    num_envs_per_env_runner: int = Field(default=8, ge=1,
                                         description="envs stepped together by each env runner (one batched forward "
                                                     "pass for all: ~3x the steps/s of 1)")
    num_cpus_per_env_runner: float = Field(default=1, ge=0, description="CPUs reserved per env runner")
    num_learners: int = Field(default=0, ge=0, description="learner workers (0: learn in the driver)")
    num_gpus_per_learner: float = Field(default=0, ge=0, description="GPUs per learner")
    rollout_fragment_length: int | Literal["auto"] = Field(default="auto",
                                                           description="steps per env runner per sample call")
    runtime_env: dict[str, Any] | None = Field(default=None,
                                               description="ray.init runtime_env (e.g. pip packages for the cluster's "
                                                           "workers)")

    @field_validator("rollout_fragment_length")
    @classmethod
    def _positive(cls, v: Any) -> Any:
        if isinstance(v, int) and v < 1:
            raise ValueError("must be 'auto' or a positive integer")
        return v


class RLlibPPOConfig(Section):
    """PPO hyperparameters (RLlib's names)."""

    lr: float = Field(default=3e-4, gt=0, description="Adam step size")
    train_batch_size: int = Field(default=4000, ge=2,
                                  description="env steps per training iteration (train_batch_size_per_learner)")
    minibatch_size: int = Field(default=256, ge=1, description="SGD minibatch size")
    num_epochs: int = Field(default=10, ge=1, description="passes over each batch")
    gamma: float = Field(default=1.0, ge=0, le=1, description="discount")
    lambda_: float = Field(default=0.95, ge=0, le=1, alias="lambda", description="GAE lambda")
    clip_param: float = Field(default=0.2, gt=0, description="PPO clip range")
    vf_clip_param: float = Field(default=10.0, gt=0, description="value-function clip range")
    entropy_coeff: float = Field(default=0.01, ge=0, description="entropy bonus")
    vf_loss_coeff: float = Field(default=0.5, ge=0, description="value-loss weight")
    grad_clip: float | None = Field(default=0.5, gt=0, description="global gradient-norm clip (null: none)")
    use_kl_loss: bool = Field(default=False, description="add RLlib's adaptive KL penalty")
    kl_coeff: float = Field(default=0.2, ge=0, description="initial KL coefficient (with use_kl_loss)")


class RLlibModelConfig(Section):
    """The MLP of the RLModule."""

    hidden: list[int] = Field(default_factory=lambda: [128, 128], min_length=1, description="hidden layer sizes")
    activation: Literal["tanh", "relu", "elu", "swish", "linear"] = Field(default="tanh",
                                                                          description="hidden activation")
    vf_share_layers: bool = Field(default=False, description="share the hidden layers between policy and value")

    @field_validator("hidden")
    @classmethod
    def _positive(cls, v: list[int]) -> list[int]:
        check_layer_sizes(v)
        return v


class RLlibEvalConfig(EvalSection):
    """Evaluation with the project's harness (:func:`lama_dice.evaluation.evaluate.evaluate`), counted in iterations."""

    every: int = Field(default=0, ge=0, description="iterations between evaluations (0: only the final one)")
    games: int = Field(default=200, ge=1, description="games per opponent at each periodic evaluation")
    final_games: int = Field(default=1000, ge=0, description="games per opponent in the final evaluation (0: none)")


class RLlibCheckpointConfig(Section):
    """Periodic RLlib checkpoints in ``checkpoints/iter-N`` (``final/`` is always written)."""

    every: int = Field(default=10, ge=0, description="iterations between checkpoints (0: only final/)")


class RLlibTrainConfig(RunConfig):
    """A whole RLlib training run."""

    config_error: ClassVar[type[ConfigError]] = RLlibConfigError

    algorithm: Literal["rllib-ppo"] = Field(description="selects this trainer")
    name: str = Field(default="rllib", min_length=1, pattern=r"^[A-Za-z0-9_.\-]+$",
                      description="run name (the run folder's prefix)")
    description: str = Field(default="", description="free text")
    seed: int = Field(default=0, ge=0, le=MAX_SEED, description="seed of RLlib and the env's opponent draws")
    iterations: int = Field(default=100, ge=1, description="training iterations (algo.train() calls)")
    env: RLlibEnvConfig = Field(default_factory=RLlibEnvConfig)
    opponents: list[OpponentConfig] = Field(default_factory=list,
                                            description="seats played inside the env, drawn per seat and episode")
    selfplay: RLlibSelfPlayConfig = Field(default_factory=RLlibSelfPlayConfig)
    ray: RayConfig = Field(default_factory=RayConfig)
    ppo: RLlibPPOConfig = Field(default_factory=RLlibPPOConfig)
    model: RLlibModelConfig = Field(default_factory=RLlibModelConfig)
    eval: RLlibEvalConfig = Field(default_factory=RLlibEvalConfig)
    checkpoint: RLlibCheckpointConfig = Field(default_factory=RLlibCheckpointConfig)

    _opponent_shorthand = field_validator("opponents", mode="before")(opponent_shorthand)

    @model_validator(mode="after")
    def _check_consistency(self) -> RLlibTrainConfig:
        if self.env.num_players == 1 and self.opponents:
            raise ConfigKeyError("opponents", "must be empty for the solo variant (env.num_players: 1)")
        problem = networks_problem(self.env.num_players, self.model.hidden, self.model.hidden)
        if problem is not None:
            raise ConfigKeyError("model.hidden", problem)
        if self.ppo.minibatch_size > self.ppo.train_batch_size:
            raise ConfigKeyError("ppo.minibatch_size", f"{self.ppo.minibatch_size} exceeds ppo.train_batch_size "
                                                  f"({self.ppo.train_batch_size})")
        if self.ray.address is not None and self.ray.num_cpus is not None:
            raise ConfigKeyError("ray.num_cpus", "only applies to a local Ray (ray.address: null); "
                                            "a cluster has the CPUs it was started with")
        return self

    def env_config(self) -> dict[str, Any]:
        """RLlib's ``env_config`` for :class:`lama_dice.train.rllib.env.LamaDiceRLlibEnv`."""
        e = self.env
        return {
            "num_players": e.num_players, "episode": e.episode, "reward": e.reward,
            "auto_forced": e.auto_forced, "max_rounds": e.max_rounds, "rules": e.rules.to_dict(),
            "opponents": [[_absolute_spec(o.agent), o.weight] for o in self.opponents],
            "selfplay_weight": self.selfplay.weight,
        }


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
    return parse_as(RLlibTrainConfig, data, source, check_agents)


def is_rllib_config(path: str | os.PathLike) -> bool:
    """True when the YAML file at ``path`` says ``algorithm: rllib-ppo`` (cheap: no Ray import; False if unreadable)."""
    return says_algorithm(path, ALGORITHM)


def load_rllib_config(path: str | os.PathLike, check_agents: bool = True) -> RLlibTrainConfig:
    """Read and validate a YAML config; the run name defaults to the file's stem.

    Raises:
        RLlibConfigError: the file is missing, is not YAML, or is not a valid config.
    """
    return load_as(RLlibTrainConfig, path, check_agents)
