"""PettingZoo's classic wrappers for :func:`lama_env.lama_dice_v1.env`, reading the raw env directly (faster)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
from pettingzoo import AECEnv
from pettingzoo.utils import wrappers
from pettingzoo.utils.env_logger import EnvLogger
from pettingzoo.utils.wrappers.order_enforcing import AECOrderEnforcingIterable

from . import actions as A
from .episode import illegal_move

__all__ = ["AssertOutOfBounds", "OrderEnforcing", "TerminateIllegal"]

_NUM_ACTIONS = A.NUM_ACTIONS

#: The attributes every step reads, forwarded directly to the unwrapped env.
_PER_STEP = ("agents", "agent_selection", "rewards", "terminations", "truncations", "infos",
             "_cumulative_rewards")


def _forward(name: str, check_reset: bool) -> property:
    if check_reset and name != "_cumulative_rewards":  # OrderEnforcingWrapper's error before reset()
        def get(self):
            f = self._f
            if not f.has_reset:
                raise AttributeError(f"{name} cannot be accessed before reset")
            return f.raw.__dict__[name]  # instance attributes of the raw env, set by reset()
    else:
        def get(self):
            return getattr(self._raw, name)

    return property(get, lambda self, value: setattr(self._raw, name, value))


class _State:
    """The per-step state in a plain object, shown under PettingZoo's names (``_prev_obs``...) as properties."""

    __slots__ = ("has_reset", "has_updated", "prev_info", "prev_obs", "raw", "ti")

    def __init__(self, raw: Any) -> None:
        self.raw = raw
        self.ti: TerminateIllegal | None = None
        self.prev_obs: Any = None
        self.prev_info: Any = None
        self.has_reset = self.has_updated = False


def _state_property(field: str) -> property:
    return property(lambda self: getattr(self._f, field), lambda self, value: setattr(self._f, field, value))


class TerminateIllegal(wrappers.TerminateIllegalWrapper):
    """``TerminateIllegalWrapper`` with direct attribute access and a warning that names the move."""

    _terminated: bool  # set by TerminateIllegalWrapper: the episode was ended by an illegal move

    _prev_obs = _state_property("prev_obs")
    _prev_info = _state_property("prev_info")

    def __init__(self, env: AECEnv, illegal_reward: float) -> None:
        """Wrap ``env`` (the raw env, whose per-step attributes are read directly)."""
        self._f = _State(env.unwrapped)
        self._f.ti = self
        super().__init__(env, illegal_reward)
        self._raw = env.unwrapped

    def observe(self, agent: str):
        """The raw env's observation of ``agent``, remembered when ``agent`` is the one to act."""
        f = self._f
        raw = f.raw
        obs = raw.observe(agent)  # self.env is the raw env
        if agent == raw.agent_selection:
            f.prev_obs = obs
            info = raw.infos.get(agent)
            f.prev_info = {} if info is None else info
        return obs

    def step(self, action: Any) -> None:
        """Step ``action``; an illegal one ends the game with ``illegal_reward`` for the mover (and a warning)."""
        raw = self._raw
        agent = raw.agent_selection
        if self._prev_obs is None:
            self.observe(agent)
        mask = self._prev_obs["action_mask"]
        self._prev_obs = self._prev_info = None
        dead = raw.terminations[agent] or raw.truncations[agent]
        if self._terminated and dead:
            raw._was_dead_step(action)
        elif not dead and not mask[action]:
            g, value = raw.game, self._illegal_value
            EnvLogger._generic_warning(  # as EnvLogger.warn_on_illegal_move(), with the move and the legal ones
                f"[WARNING]: Illegal move made, game terminating with current player losing. lama_dice_v1: "
                f"{illegal_move(action, agent, () if g is None else g.legal_actions())}. {agent} gets {value}, the "
                "others 0.")
            raw._cumulative_rewards[agent] = 0
            raw.terminations = dict.fromkeys(raw.agents, True)
            raw.truncations = dict.fromkeys(raw.agents, True)
            raw.rewards = {a: float(value) if a == agent else 0 for a in raw.agents}
            raw._accumulate_rewards()
            raw._deads_step_first()
            raw._over = True
            self._terminated = True
        else:
            self.env.step(action)


class AssertOutOfBounds(wrappers.AssertOutOfBoundsWrapper):
    """``AssertOutOfBoundsWrapper`` with a fast path for in-range integer actions."""

    def __init__(self, env: AECEnv) -> None:
        """Wrap ``env``."""
        super().__init__(env)
        self._raw = env.unwrapped

    def step(self, action: Any) -> None:
        """Step ``action``: an in-range integer at once, anything else through PettingZoo's checks."""
        if (type(action) is int or isinstance(action, np.integer)) and 0 <= action < A.NUM_ACTIONS:
            self.env.step(action)
        else:
            super().step(action)


class OrderEnforcing(wrappers.OrderEnforcingWrapper):
    """``OrderEnforcingWrapper`` with the per-step attributes forwarded (over ``env()``'s chain: a short cut)."""

    _has_reset = _state_property("has_reset")
    _has_updated = _state_property("has_updated")

    def __init__(self, env: AECEnv) -> None:
        """Wrap ``env``; over ``env()``'s chain, share the ``TerminateIllegal`` layer's state for the short cut."""
        inner = getattr(env, "env", None)
        if type(env) is AssertOutOfBounds and type(inner) is TerminateIllegal:
            self._f = inner._f  # ti is set: the short cut
            self._observe = inner.observe
        else:  # another chain: go through every layer
            self._f = _State(env.unwrapped)
            self._observe = env.observe
        super().__init__(env)
        self._raw = env.unwrapped

    def step(self, action: Any) -> None:
        """Step ``action`` (a legal action of a live agent: straight to the raw env)."""
        f = self._f
        raw = f.raw
        if type(action) is int and f.ti is not None and f.has_reset and 0 <= action < _NUM_ACTIONS:
            # AssertOutOfBoundsWrapper's checks passed; TerminateIllegal.step for a live agent's legal action, inline
            prev = f.prev_obs
            if prev is not None and raw.agents:
                agent = raw.agent_selection
                if not (raw.terminations[agent] or raw.truncations[agent]) and prev["action_mask"][action]:
                    f.has_updated = True
                    f.prev_obs = f.prev_info = None
                    raw._play(agent, action)
                    return
        super().step(action)  # anything else (dead steps, illegal actions...) through every layer

    def __str__(self) -> str:
        """``lama_dice_v1``, as PettingZoo's classic envs print (``save_observation`` names a folder after it)."""
        return str(self.env)

    def observe(self, agent: str):
        """The observation of ``agent`` (PettingZoo's error before ``reset()``)."""
        return self._observe(agent) if self._has_reset else super().observe(agent)

    def last(self, observe: bool = True):
        """``(observation, reward, termination, truncation, info)`` of the agent to act."""
        f = self._f
        if not f.has_reset:
            return super().last(observe)
        raw = f.raw
        agent = raw.agent_selection
        obs = self._observe(agent) if observe else None
        return obs, raw._cumulative_rewards[agent], raw.terminations[agent], raw.truncations[agent], raw.infos[agent]

    @property
    def num_agents(self) -> int:
        """``len(agents)`` (PettingZoo's error before ``reset()``)."""
        return len(self._f.raw.agents) if self._f.has_reset else wrappers.OrderEnforcingWrapper.num_agents.fget(self)

    def reset(self, seed: int | None = None, options: dict | None = None) -> None:
        """Reset the chain (over ``env()``'s chain: each layer's reset bookkeeping, then the raw env's reset)."""
        f = self._f
        ti = f.ti
        if ti is None:
            super().reset(seed=seed, options=options)
            return
        f.has_reset = f.has_updated = True  # OrderEnforcingWrapper.reset
        ti._terminated = False  # TerminateIllegalWrapper.reset
        f.prev_obs = f.prev_info = None
        f.raw.reset(seed=seed, options=options)  # AssertOutOfBoundsWrapper (BaseWrapper) resets the env below

    def agent_iter(self, max_iter: int = 2**63) -> AECOrderEnforcingIterable:
        """The agents in turn (PettingZoo's iterator, reading the raw env directly)."""
        return _AgentIterable(self, max_iter) if self._has_reset else super().agent_iter(max_iter)


class _AgentIterable(AECOrderEnforcingIterable):
    def __iter__(self) -> Iterator[str]:
        """PettingZoo's order-enforcing agent iterator (``AECOrderEnforcingIterator``), reading the raw env."""
        f, max_iter = self.env._f, self.max_iter
        raw = f.raw
        while raw.agents and max_iter > 0:
            max_iter -= 1
            assert f.has_updated, "need to call step() or reset() in a loop over `agent_iter`"
            f.has_updated = False
            yield raw.agent_selection


for _name in _PER_STEP:
    setattr(TerminateIllegal, _name, _forward(_name, False))
    setattr(AssertOutOfBounds, _name, _forward(_name, False))
    setattr(OrderEnforcing, _name, _forward(_name, True))
del _name
