"""Training configs: the YAML schema, validated before anything starts.

A config file sets everything a run depends on: the environment (player
count, episode, reward, rules), the training opponents and the self-play
pool, every PPO hyperparameter, the network, evaluation and checkpoints::

    name: 2p_vs_heuristics
    total_timesteps: 2_000_000
    env: {num_players: 2, episode: game, reward: win, n_envs: 8, vec_env: subproc}
    opponents:
      - optimal
      - {agent: "threshold:20", weight: 0.5}
    ppo: {learning_rate: 3.0e-4, n_steps: 1024, batch_size: 256, gamma: 1.0}
    policy: {net_arch: [128, 128]}
    eval: {every: 50_000, games: 400, opponents: [optimal, lookahead]}

:func:`load_config` reads and validates a file; any problem (an unknown key,
a wrong type, an out-of-range value, a bad agent spec, bad rules) raises
:class:`ConfigError` with a one-line message that names the key, e.g.
``configs/x.yaml: ppo.learning_rat: unknown key (valid keys of ppo: ...)``.

The YAML reader refuses a key given twice and reads ``1e6`` as a number; every
section refuses booleans where numbers are expected and non-finite numbers
(:class:`Section`); network sizes are held to the agent files' limits before
anything is built (:func:`check_layer_sizes`, :func:`networks_problem`).

The resolved config (every default filled in) is saved as ``config.yaml`` in
each run folder, so ``lama-dice train RUN/config.yaml`` reproduces the run, and
``lama-dice train --resume RUN`` continues it with that config.

The pieces both trainers' schemas share are defined here once, and the RLlib
schema (:mod:`lama_dice.train.rllib.config`) builds on them: :class:`Section`,
the env basics (:class:`EnvSection` and the :data:`Rules` field), one
:class:`OpponentConfig`, the evaluation basics (:class:`EvalSection`), the
whole-run base (:class:`RunConfig`), the agent-spec check
(:func:`check_agent_specs`), the YAML reader (:func:`read_yaml`), validation
(:func:`parse_as`, :func:`load_as`) and the one-line error messages
(:func:`describe_error`).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Any, ClassVar, Literal, TypeVar, get_args

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PlainSerializer,
    PlainValidator,
    ValidationError,
    ValidationInfo,
    WithJsonSchema,
    field_validator,
    model_validator,
)

from lama_env.errors import LamaDiceError, clip
from lama_env.reader import MAX_SEED
from lama_env.rules import RulesConfig, RulesError


class ConfigError(LamaDiceError, ValueError):
    """A training config that is not valid (the message names the key)."""


class Section(BaseModel):
    """Base of every config section (here and in :mod:`lama_dice.train.rllib.config`).

    Unknown keys are errors; a number must be a finite number (``.inf`` and ``.nan`` are refused) and
    not a boolean (``num_players: true`` is not 1); an integer may be written ``1e6`` or ``2.5e5``
    (:func:`read_yaml` reads those as numbers, and a whole number is accepted as an integer).
    """

    model_config = ConfigDict(extra="forbid", validate_default=True, populate_by_name=True, allow_inf_nan=False)

    @field_validator("*", mode="before")
    @classmethod
    def _no_booleans_for_numbers(cls, v: Any, info: ValidationInfo) -> Any:
        field = cls.model_fields.get(info.field_name or "")
        if field is not None and _is_boolean_for_number(v, field.annotation):
            kind = "a number" if float in _leaf_types(field.annotation) else "an integer"
            raise ValueError(f"must be {kind}, not a boolean (true/false)")
        return v


def _leaf_types(ann: Any) -> set[Any]:
    """The types an annotation is made of (``list[int] | None`` -> ``{int, NoneType}``)."""
    args = get_args(ann)
    if not args:
        return {ann}
    return set().union(*(_leaf_types(a) for a in args))


def _is_boolean_for_number(v: Any, ann: Any) -> bool:
    """Whether ``v`` (or an item of the list ``v``) is a boolean where ``ann`` wants an int or a float."""
    leaves = _leaf_types(ann)
    if bool in leaves or not leaves & {int, float}:
        return False
    items = v if isinstance(v, list) else [v]
    return any(isinstance(x, bool) for x in items)


def parse_rules(v: Any) -> RulesConfig:
    """The ``env.rules`` of a config (a mapping of rules-config fields) as the :class:`RulesConfig` it travels as.

    Raises:
        ValueError: a bad rules field (the :class:`RulesError` message, for :func:`describe_error`).
    """
    try:
        return RulesConfig.from_dict(v)
    except RulesError as e:
        raise ValueError(str(e)) from None


#: The ``env.rules`` field of both trainers: a mapping of rules-config fields in the YAML, parsed once by
#: :func:`parse_rules` into a :class:`RulesConfig` (the object the trainers hand to the envs) and written back
#: as its fields (:meth:`RulesConfig.to_dict`) in the resolved config. Declared with
#: ``rules: Rules = Field(default_factory=RulesConfig)`` where each env section wants it in its key order.
Rules = Annotated[RulesConfig, PlainValidator(parse_rules),
                  PlainSerializer(lambda r: r.to_dict(), return_type=dict),
                  WithJsonSchema({"type": "object", "description": "rules-config fields"}),
                  Field(default_factory=RulesConfig, description="rules-config fields (RULES.md [choice]s)")]


def opponent_shorthand(v: Any) -> Any:
    """``"optimal"`` in an opponents list is shorthand for ``{agent: optimal, weight: 1}``."""
    if isinstance(v, list):
        return [{"agent": o} if isinstance(o, str) else o for o in v]
    return v


class EnvSection(Section):
    """The env keys of both trainers: who plays, what an episode is, what is rewarded.

    Each trainer's env section extends it with its own keys and ``rules: Rules``
    (:class:`EnvConfig` here, ``RLlibEnvConfig`` for RLlib).
    """

    num_players: int = Field(default=2, ge=1, le=6, description="players at the table, the learner included (1 = solo)")
    episode: Literal["game", "round"] = Field(default="game",
                                              description="one episode = a whole game or a single round")
    reward: Literal["win", "points"] = Field(default="win",
                                             description="win: the zero-sum win share at the episode's end; points: "
                                                         "minus the points of each round")


class EnvConfig(EnvSection):
    """The Gymnasium environment ``LamaDice-v1`` the learner plays in."""

    reward_scale: float = Field(default=1.0, gt=0,
                                description="multiply every reward by this (e.g. 0.05 for points rewards)")
    rules: Rules = Field(default_factory=RulesConfig)  # repeated here for mypy, which sees no default in Annotated
    n_envs: int = Field(default=8, ge=1, le=4096,
                        description="parallel environments (at most 256 with subproc or dummy)")
    vec_env: Literal["subproc", "dummy", "native"] = Field(
        default="subproc", description="subproc: one process per env; dummy: all in this process; native: all "
                                       "in one compiled vector env (lama_env.vector_env), native opponents inside it")

    @field_validator("vec_env", mode="before")
    @classmethod
    def _vec_env_choice(cls, v: Any) -> Any:
        if v not in ("subproc", "dummy", "native"):
            raise ValueError("must be 'subproc' or 'dummy' (one Gymnasium env per learner seat, in processes or "
                             "here) or 'native' (one compiled vector env)")
        return v


class OpponentConfig(Section):
    """One opponent (of either trainer): an agent spec and its sampling weight."""

    agent: str = Field(description="agent spec (optimal, threshold:20, ppo:PATH, rllib:PATH, ...)")
    weight: float = Field(default=1.0, gt=0, description="relative probability of drawing this opponent")


class SelfPlayConfig(Section):
    """An opponent pool of the learner's own past snapshots, mixed with the heuristic opponents."""

    enabled: bool = Field(default=False, description="add past snapshots of the learner to the opponents")
    weight: float = Field(default=0.5, ge=0, le=1,
                          description="probability that an opponent seat plays a pool snapshot (once the pool is "
                                      "non-empty)")
    pool_size: int = Field(default=8, ge=1, description="most recent snapshots kept in the pool")
    snapshot_every: int = Field(default=50_000, ge=1, description="timesteps between snapshots added to the pool")
    deterministic: bool = Field(default=False, description="snapshots play their argmax action instead of sampling")
    initial: list[str] = Field(default_factory=list, description="checkpoints (.zip or run folders) that seed the pool")


class PPOConfig(Section):
    """MaskablePPO hyperparameters (sb3-contrib names)."""

    learning_rate: float = Field(default=3e-4, gt=0, description="Adam step size")
    lr_schedule: Literal["constant", "linear"] = Field(default="constant", description="linear: decay to 0 at the end")
    n_steps: int = Field(default=1024, ge=2, description="steps per env per rollout")
    batch_size: int = Field(default=256, ge=2, description="minibatch size")
    n_epochs: int = Field(default=10, ge=1, description="passes over each rollout")
    gamma: float = Field(default=1.0, ge=0, le=1, description="discount (1: episodes are short and finite)")
    gae_lambda: float = Field(default=0.95, ge=0, le=1, description="GAE lambda")
    clip_range: float = Field(default=0.2, gt=0, description="PPO clip range")
    ent_coef: float = Field(default=0.01, ge=0, description="entropy bonus")
    vf_coef: float = Field(default=0.5, ge=0, description="value-loss weight")
    max_grad_norm: float = Field(default=0.5, gt=0, description="gradient clipping")
    target_kl: float | None = Field(default=None, gt=0, description="early-stop an update past this KL (null = off)")
    normalize_advantage: bool = Field(default=True, description="normalize advantages per minibatch")


class NetArchSplit(Section):
    """Separate hidden layers for the policy and the value network."""

    pi: list[int] = Field(min_length=1)
    vf: list[int] = Field(min_length=1)


class PolicyConfig(Section):
    """The actor-critic MLP."""

    net_arch: list[int] | NetArchSplit = Field(default_factory=lambda: [128, 128],
                                               description="hidden layers of the policy and the value MLPs (a list: "
                                                           "the same for both; or {pi: [...], vf: [...]})")
    activation: Literal["tanh", "relu", "elu", "leaky_relu"] = Field(default="tanh",
                                                                     description="hidden-layer activation")
    ortho_init: bool = Field(default=True, description="orthogonal initialization")
    init_from: str | None = Field(default=None,
                                  description="warm start: a network (ppo:PATH: a .zip, a run folder, an agent file "
                                              "or a shipped agent such as ppo:2p, read as data) whose weights start "
                                              "the network: policy and value from a .zip, the policy only from an "
                                              "agent file (its net_arch and activation must be these; null = fresh "
                                              "weights)")

    @field_validator("net_arch")
    @classmethod
    def _positive(cls, v: Any) -> Any:
        for layers in ([v] if isinstance(v, list) else [v.pi, v.vf]):
            check_layer_sizes(layers)
        return v

    def network_problem(self, num_players: int) -> str | None:
        """Why the policy or value network of ``net_arch`` is too large for ``num_players`` (None if it is not)."""
        arch = self.net_arch
        pi, vf = (arch, arch) if isinstance(arch, list) else (arch.pi, arch.vf)
        return networks_problem(num_players, pi, vf)


def check_layer_sizes(layers: list[int]) -> None:
    """Refuse hidden layer sizes (of either trainer's config) that are not positive or past the agent files' limits.

    Raises:
        ValueError: the message for :func:`describe_error` (the limits and why: ``agentfile.SIZE_LIMITS``).
    """
    from lama_dice.agents.agentfile import MAX_HIDDEN_LAYERS, MAX_LAYER_SIZE, SIZE_LIMITS

    if any(n < 1 for n in layers):
        raise ValueError("layer sizes must be positive")
    if len(layers) > MAX_HIDDEN_LAYERS or any(n > MAX_LAYER_SIZE for n in layers):
        raise ValueError(f"{clip(layers)} is too large: {SIZE_LIMITS}")


def networks_problem(num_players: int, pi: list[int], vf: list[int]) -> str | None:
    """Why a policy network of hidden layers ``pi`` or a value network of ``vf`` is too large (None if neither is).

    Counted before anything is created, with the limits of agent files
    (:func:`lama_dice.agents.agentfile.network_size_problem`), so that every trained network exports.
    """
    from lama_dice.agents.agentfile import network_size_problem
    from lama_env.actions import NUM_ACTIONS
    from lama_env.observation import observation_size

    inputs = observation_size(num_players)
    for which, layers, outputs in (("policy", pi, NUM_ACTIONS), ("value", vf, 1)):
        problem = network_size_problem(inputs, list(layers), outputs)
        if problem is not None:
            return f"the {which} network of {clip(list(layers))} has {problem}"
    return None


class EvalSection(Section):
    """Periodic and final evaluation through the evaluation harness, in both trainers.

    Each trainer's subclass declares ``every``, ``games`` and ``final_games``
    again with its own defaults and unit (timesteps or iterations); they have
    no default here. The keys keep this order in every subclass.
    """

    every: int = Field(ge=0, description="training progress between evaluations (0 = only at the end)")
    games: int = Field(ge=1, description="games per opponent at each periodic evaluation")
    final_games: int = Field(ge=0, description="games per opponent in the final evaluation (0 = none)")
    opponents: list[str] = Field(default_factory=lambda: ["optimal"],
                                 description="agent specs to evaluate against (solo: baselines to compare with)")
    workers: int = Field(default=1, ge=1, description="evaluation worker processes")
    seed: int = Field(default=12345, ge=0, le=MAX_SEED,
                      description="evaluation seed (the same games at every evaluation)")


class EvalConfig(EvalSection):
    """Periodic and final evaluation through the evaluation harness."""

    every: int = Field(default=50_000, ge=0, description="timesteps between evaluations (0 = only at the end)")
    games: int = Field(default=400, ge=1, description="games per opponent at each periodic evaluation")
    final_games: int = Field(default=2000, ge=0,
                             description="games per opponent in the final evaluation table (0 = none)")


class CheckpointConfig(Section):
    """Periodic checkpoints in ``checkpoints/`` (best.zip and final.zip are always written)."""

    every: int = Field(default=100_000, ge=0, description="timesteps between checkpoints (0 = none)")
    keep_last: int | None = Field(default=None, ge=1,
                                  description="keep only the newest N periodic checkpoints (null = all)")


class PretrainConfig(Section):
    """Behaviour-cloning warm start before PPO (see :mod:`lama_dice.train.pretrain`)."""

    teacher: str | None = Field(default=None, description="agent spec to imitate first (null = no warm start)")
    states: Literal["episodes", "solo"] = Field(
        default="episodes", description="episodes: the teacher plays `episodes` episodes of the training env; "
                                        "solo: every decision of the solo round, weighted by how often the "
                                        "teacher meets it, at chip totals 0..end_threshold-1 (solo only)")
    episodes: int = Field(default=2000, ge=1, description="episodes the teacher plays in the training env")
    epochs: int = Field(default=10, ge=1, description="passes over the teacher's decisions")
    batch_size: int = Field(default=512, ge=1, description="minibatch size")
    learning_rate: float = Field(default=1e-3, gt=0, description="Adam learning rate of the warm start")
    value_coef: float = Field(default=0.5, ge=0, description="weight of the value-head loss (fit to the returns seen)")


class RunConfig(Section):
    """Base of both trainers' whole-run configs (:class:`TrainConfig`, ``RLlibTrainConfig``).

    A subclass has the fields ``name`` (its default is the fallback run name),
    ``env`` (an :class:`EnvSection`), ``opponents`` and ``eval`` (an
    :class:`EvalSection`), and sets :attr:`config_error`, the error its
    validation raises.
    """

    #: The error type of this schema's problems (a :class:`ConfigError`).
    config_error: ClassVar[type[ConfigError]] = ConfigError

    @property
    def rules(self) -> RulesConfig:
        """The rules config of ``env``."""
        rules: RulesConfig = self.env.rules  # type: ignore[attr-defined]
        return rules

    def agent_specs(self) -> list[tuple[str, str]]:
        """``(key, spec)`` for every agent spec of the config, checked by :func:`check_agent_specs`."""
        specs = [(f"opponents[{i}].agent", o.agent) for i, o in enumerate(self.opponents)]  # type: ignore[attr-defined]
        specs += [(f"eval.opponents[{i}]", s) for i, s in enumerate(self.eval.opponents)]  # type: ignore[attr-defined]
        return specs

    def to_dict(self) -> dict[str, Any]:
        """The resolved config (every default filled in, keys by their YAML names), ready for YAML."""
        return self.model_dump(mode="json", by_alias=True)

    def to_yaml(self) -> str:
        """The resolved config as YAML text (keys in declaration order)."""
        import yaml

        return yaml.safe_dump(self.to_dict(), sort_keys=False, default_flow_style=False, width=100)


class TrainConfig(RunConfig):
    """A whole training run."""

    name: str = Field(default="run", min_length=1, pattern=r"^[A-Za-z0-9_.\-]+$",
                      description="run name (the run folder's prefix)")
    description: str = Field(default="", description="free text")
    seed: int = Field(default=0, ge=0, le=MAX_SEED, description="seed of everything random in training")
    total_timesteps: int = Field(default=1_000_000, ge=1, description="learner steps to train for")
    device: Literal["cpu", "auto", "cuda"] = Field(default="cpu", description="torch device for training")
    torch_threads: int = Field(default=1, ge=0,
                               description="torch CPU threads of the trainer (0 = torch's default); small MLPs train "
                                           "fastest on 1")
    env: EnvConfig = Field(default_factory=EnvConfig)
    opponents: list[OpponentConfig] = Field(default_factory=list,
                                            description="training opponents: specs or {agent, weight}, drawn per "
                                                        "seat and episode")
    selfplay: SelfPlayConfig = Field(default_factory=SelfPlayConfig)
    pretrain: PretrainConfig = Field(default_factory=PretrainConfig)
    ppo: PPOConfig = Field(default_factory=PPOConfig)
    policy: PolicyConfig = Field(default_factory=PolicyConfig)
    eval: EvalConfig = Field(default_factory=EvalConfig)
    checkpoint: CheckpointConfig = Field(default_factory=CheckpointConfig)

    _opponent_shorthand = field_validator("opponents", mode="before")(opponent_shorthand)

    @model_validator(mode="after")
    def _check_consistency(self) -> TrainConfig:
        n = self.env.num_players
        if n == 1:
            if self.opponents:
                raise ConfigKeyError("opponents", "must be empty for the solo variant (env.num_players: 1)")
            if self.selfplay.enabled:
                raise ConfigKeyError("selfplay.enabled", "self-play needs env.num_players >= 2")
            if self.env.reward == "win":
                raise ConfigKeyError("env.reward",
                                     "'win' is always 0 in the solo variant (env.num_players: 1); use points")
        elif self.pretrain.states == "solo":
            raise ConfigKeyError("pretrain.states", f"'solo' is for the solo variant (env.num_players: 1), not {n}")
        elif not self.opponents and not self.selfplay.enabled:
            raise ConfigKeyError("opponents", f"env.num_players is {n}: list at least one opponent or enable selfplay")
        if self.env.vec_env != "native" and self.env.n_envs > 256:
            raise ConfigKeyError("env.n_envs", f"{self.env.n_envs} environments need env.vec_env: native "
                                               f"(subproc and dummy take at most 256)")
        if n > 1 and not self.eval.opponents:
            raise ConfigKeyError("eval.opponents", "list at least one agent to evaluate against")
        problem = self.policy.network_problem(n)
        if problem is not None:
            raise ConfigKeyError("policy.net_arch", problem)
        if self.ppo.batch_size > self.ppo.n_steps * self.env.n_envs:
            raise ConfigKeyError("ppo.batch_size", f"{self.ppo.batch_size} exceeds the rollout size "
                                              f"n_steps * n_envs = {self.ppo.n_steps * self.env.n_envs}")
        return self

    # --------------------------------------------------------------- helpers
    @property
    def rollout_size(self) -> int:
        """Learner steps of one rollout, ``ppo.n_steps * env.n_envs``: training runs whole rollouts."""
        return self.ppo.n_steps * self.env.n_envs

    def steps_to_train(self, done: int = 0) -> int:
        """The steps a session that starts at ``done`` steps trains: up to ``total_timesteps``, in whole rollouts.

        SB3 collects rollouts until the total is reached, so the last one runs to its end:
        ``--total-timesteps 20000`` with rollouts of 16,384 steps trains 32,768.
        """
        return whole_rollouts(self.total_timesteps - done, self.rollout_size)

    def rounding_note(self, done: int = 0) -> str | None:
        """One line saying that the steps trained differ from ``total_timesteps`` and why (None if they do not)."""
        todo = self.steps_to_train(done)
        if done + todo == self.total_timesteps:
            return None
        p = self.ppo
        more = f"{todo:,} more to {done + todo:,} in all" if done else f"{todo:,}"
        return (f"total_timesteps is {self.total_timesteps:,}: will train {more}, because training runs whole "
                f"rollouts of ppo.n_steps x env.n_envs = {p.n_steps:,} x {self.env.n_envs:,} = "
                f"{self.rollout_size:,} steps")

    def agent_specs(self) -> list[tuple[str, str]]:
        """Training opponents, the warm-start teacher, self-play seeds, eval opponents (in this order)."""
        specs = [(f"opponents[{i}].agent", o.agent) for i, o in enumerate(self.opponents)]
        if self.pretrain.teacher:
            specs.append(("pretrain.teacher", self.pretrain.teacher))
        if self.policy.init_from:
            init = self.policy.init_from
            specs.append(("policy.init_from", init if init.startswith("ppo:") else f"ppo:{init}"))
        specs += [(f"selfplay.initial[{i}]", s if s.startswith("ppo:") else f"ppo:{s}")
                  for i, s in enumerate(self.selfplay.initial)]
        specs += [(f"eval.opponents[{i}]", s) for i, s in enumerate(self.eval.opponents)]
        return specs


def whole_rollouts(steps: int, rollout: int) -> int:
    """``steps`` rounded up to whole rollouts of ``rollout`` steps (what SB3 trains when asked for ``steps``)."""
    return -(-steps // rollout) * rollout


class ConfigKeyError(ValueError):
    """A cross-field problem raised in a validator, tied to the key it concerns (reported as that key's error)."""

    def __init__(self, key: str, message: str) -> None:
        """The error ``message`` about the config key ``key`` (dotted, e.g. ``env.reward``)."""
        super().__init__(message)
        self.key = key
        self.message = message


# ---------------------------------------------------------------------------
# loading and error reporting

C = TypeVar("C", bound=RunConfig)


def parse_as(model: type[C], data: Any, source: str = "config", check_agents: bool = True) -> C:
    """Validate a config mapping (as read from YAML) into ``model`` (a :class:`RunConfig`).

    Raises:
        ``model.config_error``: one line naming the first bad key.
    """
    error = model.config_error
    if not isinstance(data, Mapping):
        raise error(f"{source}: a config must be a mapping of keys, got {type(data).__name__}")
    try:
        cfg = model.model_validate(dict(data))
    except ValidationError as e:
        raise error(f"{source}: {describe_error(e, model)}") from None
    if check_agents:
        check_agent_specs(cfg, source)
    return cfg


def load_as(model: type[C], path: str | os.PathLike, check_agents: bool = True) -> C:
    """Read and validate a YAML config file into ``model``; the run name defaults to the file's stem.

    Raises:
        ``model.config_error``: the file is missing, is not YAML, or is not a valid config.
    """
    data = read_yaml(path, model.config_error)
    if data is None:
        data = {}
    if isinstance(data, Mapping) and "name" not in data:
        data = {"name": _safe_name(Path(path).stem, str(model.model_fields["name"].default)), **data}
    return parse_as(model, data, source=str(path), check_agents=check_agents)


def parse_config(data: Any, source: str = "config", check_agents: bool = True) -> TrainConfig:
    """Validate a config mapping (as read from YAML) into a :class:`TrainConfig`.

    Args:
        data: the mapping.
        source: how to name the config in error messages (usually the file path).
        check_agents: also build every agent spec once to check it (unknown
            names, bad arguments, missing or incompatible ``ppo:`` checkpoints).

    Raises:
        ConfigError: one line naming the first bad key.
    """
    return parse_as(TrainConfig, data, source, check_agents)


def shipped_configs() -> dict[str, Path]:
    """The configs that ship with the package (``lama_dice/configs/*.yaml``), by name."""
    from lama_dice.configs import shipped

    return shipped()


def resolve_config(arg: str | os.PathLike) -> Path:
    """The config file ``arg`` names: a path, or the name of a shipped config (``default``, ``solo``...).

    A path that exists wins; otherwise a bare name (with or without ``.yaml``) is looked up
    among :func:`shipped_configs`, so that ``lama-dice train default`` works from a plain
    ``pip install``.

    Raises:
        ConfigError: neither a file nor a shipped config.
    """
    p = Path(arg)
    if p.is_dir():
        run = (f" (a run folder: continue it with --resume {arg}, or train its config again: {p / 'config.yaml'})"
               if (p / "config.yaml").is_file() else "")
        raise ConfigError(f"{arg} is a folder, not a config file{run}")
    if p.exists():
        return p
    shipped = shipped_configs()
    name = p.name.removesuffix(".yaml").removesuffix(".yml")
    if len(p.parts) == 1 and name in shipped:
        return shipped[name]
    raise ConfigError(f"no config file {str(arg)!r}, and no shipped config of that name "
                      f"(shipped: {', '.join(shipped)})")


def load_config(path: str | os.PathLike, check_agents: bool = True) -> TrainConfig:
    """Read and validate a YAML config file; the run name defaults to the file's stem.

    Raises:
        ConfigError: the file is missing, is not YAML, or is not a valid config.
    """
    return load_as(TrainConfig, path, check_agents)


#: The largest config file read (bytes): a config is a few KB.
MAX_CONFIG_BYTES = 1024 * 1024


def read_yaml(path: str | os.PathLike, error: type[Exception] = ConfigError) -> Any:
    """The content of the YAML file at ``path`` (``None`` for an empty file).

    Read with the bounded reader (:func:`lama_dice.yaml_reader.read_yaml`): a key given twice in one mapping, an
    integer over 2**63 - 1, a float that is not finite, nesting over 64 levels are errors, and ``1e6`` is a
    number; the file must be a regular file of at most :data:`MAX_CONFIG_BYTES`.

    Raises:
        error: the file cannot be read, is not a regular file, is too large, is not UTF-8 text or is not YAML,
            or breaks a bound (one line, naming the file and the line).
    """
    from lama_dice.yaml_reader import read_yaml as read_bounded_yaml
    from lama_env.reader import InputError
    from lama_env.reader import read_file as read_bounded_file

    try:
        return read_bounded_yaml(read_bounded_file(path, MAX_CONFIG_BYTES, f"config {path}"), str(path))
    except InputError as e:
        raise error(str(e)) from None


def says_algorithm(path: str | os.PathLike, algorithm: str) -> bool:
    """True when the YAML file at ``path`` says ``algorithm: ALGORITHM`` (cheap: no trainer imported; else False).

    How ``lama-dice train`` tells one trainer's config from another's before validating it.
    """
    try:
        data = read_yaml(path)
    except ConfigError:
        return False
    return isinstance(data, Mapping) and data.get("algorithm") == algorithm


def check_agent_specs(cfg: RunConfig, source: str = "config") -> None:
    """Build every agent spec of ``cfg`` once (:meth:`RunConfig.agent_specs`).

    Raises:
        ``cfg.config_error``: naming the key of the first spec that does not build or
            does not fit ``env.num_players``.
    """
    from lama_dice.agents.registry import make_agent
    from lama_dice.agents.solver import is_solo_policy

    num_players = cfg.env.num_players  # type: ignore[attr-defined]
    built: set[str] = set()
    for key, spec in cfg.agent_specs():
        if spec in built:
            continue
        try:
            agent = make_agent(spec)
            check = getattr(agent, "check_compatible", None)
            if check is not None:
                check(num_players)
        except LamaDiceError as e:
            raise cfg.config_error(f"{source}: {key}: {e}") from None
        pretrain = getattr(cfg, "pretrain", None)
        if key == "pretrain.teacher" and pretrain is not None and pretrain.states == "solo" and not is_solo_policy(
                agent):
            raise cfg.config_error(f"{source}: pretrain.teacher: {spec} is not a rule-based agent; pretrain.states: "
                                   f"solo needs one (optimal, threshold:T, points:K, always-roll)")
        built.add(spec)


def _safe_name(stem: str, fallback: str = "run") -> str:
    import re

    return re.sub(r"[^A-Za-z0-9_.\-]", "_", stem) or fallback


def describe_error(err: ValidationError, root: type[BaseModel]) -> str:
    """One line for the first error of a pydantic ValidationError of config model ``root``, naming the key."""
    errors = err.errors(include_url=False)
    # a union (net_arch) reports one error per member: keep the most specific one
    e = max(errors, key=lambda x: len(x["loc"]))
    loc = [p for p in e["loc"] if not (isinstance(p, str) and p in _UNION_TAGS)]
    key = _dotted(loc)
    ctx = e.get("ctx") or {}
    inner = ctx.get("error")
    if isinstance(inner, ConfigKeyError):
        return f"{inner.key}: {inner.message}"
    if e["type"] == "extra_forbidden":
        valid = _valid_keys(root, loc[:-1])
        where = _dotted(loc[:-1]) or "the top level"
        hint = f" (valid keys of {where}: {', '.join(valid)})" if valid else ""
        return f"{key}: unknown key{hint}"
    if e["type"] == "missing":
        return f"{key}: required key is missing"
    msg = str(inner) if isinstance(inner, Exception) else e["msg"]
    if msg.startswith("Value error, "):
        msg = msg[len("Value error, "):]
    got = e.get("input")
    hidden = isinstance(got, (dict, list)) or (got is None and e["type"] != "none_forbidden")
    shown = "" if hidden else f" (got {got!r})"
    return f"{key or 'config'}: {msg}{shown}"


#: Names pydantic puts in an error's location for the members of a union (``policy.net_arch``).
_UNION_TAGS = {"list[int]", "NetArchSplit"}


def _dotted(loc: list[Any]) -> str:
    out = ""
    for p in loc:
        if isinstance(p, int):
            out += f"[{p}]"
        else:
            out += ("." if out else "") + str(p)
    return out


def _valid_keys(root: type[BaseModel], loc: list[Any]) -> list[str]:
    """Field names of the section of ``root`` at ``loc`` (for the unknown-key hint)."""
    model: Any = root
    for p in loc:
        if isinstance(p, int):
            continue
        field = getattr(model, "model_fields", {}).get(p)
        if field is None:
            return []
        ann = field.annotation
        args = getattr(ann, "__args__", ()) or ()
        candidates = [ann, *args, *(a for x in args for a in (getattr(x, "__args__", ()) or ()))]
        model = next((c for c in candidates if isinstance(c, type) and issubclass(c, BaseModel)), None)
        if model is None:
            return []
    return list(model.model_fields)


#: The keys of each section with their descriptions (used by the table in docs/training.md and ``--help``).
def describe_keys() -> list[tuple[str, str, str]]:
    """``(dotted key, default, description)`` for every config key."""
    rows: list[tuple[str, str, str]] = []

    def walk(model: type[BaseModel], prefix: str) -> None:
        for name, f in model.model_fields.items():
            key = f"{prefix}{name}"
            ann = f.annotation
            if isinstance(ann, type) and issubclass(ann, Section):
                walk(ann, key + ".")
                continue
            default = f.get_default(call_default_factory=True)
            if isinstance(default, RulesConfig):
                default = default.to_dict()  # as the resolved config writes it
            rows.append((key, repr(default), f.description or ""))

    walk(TrainConfig, "")
    return rows
