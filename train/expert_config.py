"""The config of expert iteration (``algorithm: expert_iteration``): the YAML schema, validated before anything runs.

Read by :mod:`lama_dice.train.expert_iteration`; light (no torch), so that ``lama-dice train`` can
tell this config from the others cheaply (:func:`is_expert_iteration_config`)::

    algorithm: expert_iteration
    name: expert_iteration_2p
    seed: 0
    iterations: 30
    env: {num_players: 2}
    start: {policy: ppo:2p, value: 2p}        # the networks the first iteration starts from
    search: {rollouts: 64, rounds: 1, top: 3, batch: 256, c_visit: 50, c_scale: 10, z: 1}
    selfplay: {positions: 40000, envs: 256, keep: 0.25, explore: 0.05}
    fit:
      replay: 2
      holdout: 0.1
      policy: {epochs: 4, batch: 1024, lr: 3.0e-4}
      value: {epochs: 4, batch: 4096, lr: 3.0e-4}
    gate: {games: 20000, block: 2000, workers: 1}
    measure: {search: "rollouts=128,rounds=1,z=2", search_games: 1000, workers: 1}

Every key has a default; unknown keys, wrong types and out-of-range values are one-line errors
naming the key (:func:`lama_dice.train.config.describe_error`), as are a start network that does
not load or does not fit ``env.num_players`` (:func:`load_expert_config`).
"""

from __future__ import annotations

import os
from typing import Any, Literal

from pydantic import Field, field_validator, model_validator

from lama_env.actions import NUM_ACTIONS
from lama_env.rules import RulesConfig

from .config import ConfigError, ConfigKeyError, Rules, RunConfig, Section, load_as, says_algorithm

#: The ``algorithm`` value that selects this trainer.
ALGORITHM = "expert_iteration"


class ExpertIterationConfigError(ConfigError):
    """An ``algorithm: expert_iteration`` config that is not valid (the message names the key)."""


class ExpertEnvConfig(Section):
    """The game: players and rules (the self-play, the search and the gate all play it)."""

    num_players: int = Field(default=2, ge=2, le=6, description="players at the table (2..6)")
    rules: Rules = Field(default_factory=RulesConfig)


class StartConfig(Section):
    """The networks the first iteration starts from (both are fine-tuned, never started afresh)."""

    policy: str = Field(default="ppo:2p", description="the policy network: ppo:FILE.safetensors or a shipped ppo:NAME "
                                                      "(an agent file: weights only)")
    value: str = Field(default="2p", description="the value network: a value file or a shipped name (2p, 4p)")


class SearchConfig(Section):
    """The expert: the rollout search (``search:NET,rollouts=R,rounds=U,top=K``) over the current networks."""

    rollouts: int = Field(default=64, ge=1, le=4096, description="rollouts per searched action")
    rounds: int = Field(default=1, ge=1, le=100, description="play out to the end of this many rounds, then the "
                                                             "value network (100: to the game's end)")
    top: int = Field(default=3, ge=0, le=NUM_ACTIONS, description="actions searched per position, the network's "
                                                                  "likeliest first (0: every legal action)")
    batch: int = Field(default=256, ge=1, description="positions searched together (one lockstep search)")
    c_visit: float = Field(default=50.0, ge=0, description="Gumbel MuZero's c_visit: the policy target is "
                                                           "softmax(logits + (c_visit + rollouts) * c_scale * Q)")
    c_scale: float = Field(default=10.0, gt=0, description="Gumbel MuZero's c_scale (see c_visit; 0.1 there, where Q "
                                                          "is rescaled to [0, 1] per node: here a raw win share)")
    z: float = Field(default=1.0, ge=0, le=10, description="shrink each action's difference with the network's "
                                                           "likeliest by z standard errors before the target "
                                                           "(the rollouts' noise moves it only where the search "
                                                           "is sure)")


class SelfPlayConfig(Section):
    """The positions each iteration labels: self-play of the current policy network in the vector game."""

    positions: int = Field(default=40_000, ge=1, description="positions labelled by the search per iteration")
    envs: int = Field(default=256, ge=1, le=65_536, description="games played at once")
    keep: float = Field(default=0.25, gt=0, le=1, description="share of the decisions with a choice kept")
    explore: float = Field(default=0.05, ge=0, le=1, description="share of the moves played uniformly at random "
                                                                 "(so that the value network sees other choices)")


class FitOne(Section):
    """Adam with cosine decay over shuffled minibatches (:func:`lama_dice.train.fit.minibatch_fit`)."""

    epochs: int = Field(default=4, ge=1, description="passes over the training positions")
    batch: int = Field(default=1024, ge=1, description="minibatch size")
    lr: float = Field(default=3e-4, gt=0, description="Adam learning rate (decays to 0 over the fit)")


class FitConfig(Section):
    """Training the candidate networks on the labelled positions."""

    replay: int = Field(default=2, ge=1, description="iterations of positions trained on (the newest ones)")
    holdout: float = Field(default=0.1, gt=0, lt=1, description="share of this iteration's games held out (the "
                                                                "Brier score and the agreement are measured on them)")
    policy: FitOne = Field(default_factory=FitOne)
    value: FitOne = Field(default_factory=lambda: FitOne(batch=4096))


class GateConfig(Section):
    """The gate: the candidate policy network against the best one, until the 95% interval decides."""

    games: int = Field(default=20_000, ge=1, description="most games of the gate")
    block: int = Field(default=2_000, ge=1, description="games played between two looks at the interval")
    workers: int = Field(default=1, ge=1, description="evaluation worker processes")


class MeasureConfig(Section):
    """What each iteration measures besides the gate: the search's edge over the network it searches."""

    search: str = Field(default="rollouts=128,rounds=1,z=2",
                        description="the search measured against its network, over the best pair: options of "
                                    "search:NET (the default: z=2, as the documented runs measured), or 'expert': the "
                                    "labelling search playing its policy target's most likely action")
    search_games: int = Field(default=1_000, ge=0, description="games of the search against its network "
                                                               "(0: not measured, no share kept)")
    workers: int = Field(default=1, ge=1, description="evaluation worker processes")

    @field_validator("search")
    @classmethod
    def _search_options(cls, v: str) -> str:
        from lama_dice.agents.registry import AgentSpecError
        from lama_dice.agents.search import parse_options

        if v == "expert":
            return v
        try:
            opts = parse_options(f"ppo:NET,{v}")
        except AgentSpecError as e:
            raise ValueError(str(e)) from None
        if "value" in opts:
            raise ValueError("the search runs over the best pair: its value network is the run's, not value=")
        return v


class ExpertIterationConfig(RunConfig):
    """A whole expert-iteration run (see :mod:`lama_dice.train.expert_iteration`)."""

    config_error = ExpertIterationConfigError

    algorithm: Literal["expert_iteration"] = Field(description="selects this trainer")
    name: str = Field(default="expert_iteration", min_length=1, pattern=r"^[A-Za-z0-9_.\-]+$",
                      description="run name (the run folder's prefix)")
    description: str = Field(default="", description="free text")
    seed: int = Field(default=0, ge=0, description="seed of the self-play, the search and the fits")
    iterations: int = Field(default=10, ge=1, description="iterations to run (a resumed run runs up to this many)")
    env: ExpertEnvConfig = Field(default_factory=ExpertEnvConfig)
    start: StartConfig = Field(default_factory=StartConfig)
    search: SearchConfig = Field(default_factory=SearchConfig)
    selfplay: SelfPlayConfig = Field(default_factory=SelfPlayConfig)
    fit: FitConfig = Field(default_factory=FitConfig)
    gate: GateConfig = Field(default_factory=GateConfig)
    measure: MeasureConfig = Field(default_factory=MeasureConfig)

    @model_validator(mode="after")
    def _check_consistency(self) -> ExpertIterationConfig:
        if self.gate.block > self.gate.games:
            raise ConfigKeyError("gate.block", f"{self.gate.block} is more than gate.games ({self.gate.games})")
        return self

    def agent_specs(self) -> list[tuple[str, str]]:
        """The start policy (built once by :func:`lama_dice.train.config.check_agent_specs`)."""
        spec = self.start.policy
        return [("start.policy", spec if spec.startswith("ppo:") else f"ppo:{spec}")]


def is_expert_iteration_config(path: str | os.PathLike) -> bool:
    """True when the YAML file at ``path`` says ``algorithm: expert_iteration`` (cheap; False if unreadable)."""
    return says_algorithm(path, ALGORITHM)


def load_expert_config(path: str | os.PathLike, check_agents: bool = True) -> ExpertIterationConfig:
    """Read and validate a YAML config; the run name defaults to the file's stem.

    With ``check_agents``, the start networks are loaded once: the policy must be an agent file
    (weights only: a ``.safetensors``) for ``env.num_players``, the value network one for that
    player count.

    Raises:
        ExpertIterationConfigError: the file is missing, is not YAML, or is not a valid config.
    """
    cfg = load_as(ExpertIterationConfig, path, check_agents)
    if check_agents:
        check_start(cfg, str(path))
    return cfg


def check_start(cfg: ExpertIterationConfig, source: str) -> None:
    """Refuse start networks that are not an agent file and a value network for ``env.num_players``."""
    from lama_dice.agents.agentfile import CheckpointError
    from lama_dice.agents.ppo import resolve_checkpoint
    from lama_dice.agents.value import load_value

    spec = cfg.start.policy.removeprefix("ppo:")
    try:
        path = resolve_checkpoint(spec)
    except CheckpointError as e:
        raise ExpertIterationConfigError(f"{source}: start.policy: {e}") from None
    if path.suffix != ".safetensors":
        raise ExpertIterationConfigError(f"{source}: start.policy: {path} is not an agent file (.safetensors; "
                                         "lama-dice export makes one)")
    try:
        value = load_value(cfg.start.value)
    except CheckpointError as e:
        raise ExpertIterationConfigError(f"{source}: start.value: {e}") from None
    if value.num_players != cfg.env.num_players:
        raise ExpertIterationConfigError(f"{source}: start.value: {cfg.start.value} is for {value.num_players} "
                                         f"players, env.num_players is {cfg.env.num_players}")


def parse_expert_config(data: Any, source: str = "config", check_agents: bool = True) -> ExpertIterationConfig:
    """Validate a mapping (as read from YAML) into an :class:`ExpertIterationConfig` (as :func:`load_expert_config`)."""
    from .config import parse_as

    cfg = parse_as(ExpertIterationConfig, data, source, check_agents)
    if check_agents:
        check_start(cfg, source)
    return cfg


__all__ = ["ALGORITHM", "ExpertIterationConfig", "ExpertIterationConfigError", "is_expert_iteration_config",
           "load_expert_config", "parse_expert_config"]
