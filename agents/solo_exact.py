"""Exact solo values of any deterministic agent that acts on observations (trained networks).

The solo round is a finite Markov decision process over displays
(:mod:`lama_dice.agents.solver`), so a deterministic policy has an exact
expected round points: no sampling, no confidence interval.  The rule-based
agents give the solver their decisions directly (``wants_quit``,
``choose_discard``); a network decides from the observation vector, which
also shows the dice.  :class:`ObservationSoloPolicy` asks such a policy at
every turn and after every roll of the round (through ``act_observations``,
the batched interface of :class:`~lama_dice.agents.learned.LearnedPolicy`),
with the observation :func:`lama_env.observation.encode` makes of that state,
and :meth:`SoloSolver.policy_value` does the rest::

    from lama_dice.agents.ppo import PPOPolicy
    from lama_dice.agents.solo_exact import ObservationSoloPolicy
    from lama_dice.agents.solver import solver_for
    from lama_env.rules import RulesConfig

    rules = RulesConfig()
    net = ObservationSoloPolicy(PPOPolicy("solo"), rules)
    solver_for(rules).policy_value(net)     # exact expected round points, e.g. 10.2...

The observation also holds the player's chip total: ``total`` fixes it (a solo
training episode is one round from 0 chips; in a whole solo game the total
grows from round to round, and a network may play differently there).
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Any, Protocol

import numpy as np

from lama_env import actions as A
from lama_env.engine import Phase
from lama_env.observation import observation_size
from lama_env.rules import HAND_SIZE, RulesConfig
from lama_env.transitions import match_limits
from lama_env.vector import VectorGame

from .solver import Display, SoloSolver, SolverError, displays, is_solo_policy

_TURN_LEGAL = (A.ROLL, A.QUIT)


class ObservationPolicy(Protocol):
    """What :class:`ObservationSoloPolicy` needs: batched actions from observations and masks."""

    deterministic: bool

    def act_observations(self, obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """One action per row of ``obs`` (``[B, obs_size]`` float32) among the legal ones of ``mask``."""


#: Solo states encoded per call of the compiled encoder (at most; a vector game of that many records).
_CHUNK = 4096
#: (rules, records) -> a vector game of that many fresh solo games and its state (a template); few are kept.
_ENCODERS: dict[tuple[RulesConfig, int], tuple[VectorGame, dict[str, np.ndarray]]] = {}
_LOCK = threading.Lock()


def solo_observations(rules: RulesConfig, states: Sequence[tuple[Display, int, Phase, tuple[int, ...] | None]],
                      ) -> np.ndarray:
    """The observations of solo decisions, one row per ``(display, total, phase, dice)``: a ``(B, O)`` float32 array.

    Each state is written as a one-player game record (the full llama row, seat 0 to act, ``total``
    chips; ``phase`` TURN, or DISCARD after the matching roll ``dice``) and encoded by the package's
    one encoder (:meth:`lama_env.vector.VectorGame.observe` over those records, bit-equal to
    :func:`lama_env.observation.encode` of such a game), :data:`_CHUNK` records at a time.
    """
    out = np.empty((len(states), observation_size(1)), dtype=np.float32)
    for lo in range(0, len(states), _CHUNK):
        chunk = states[lo:lo + _CHUNK]
        with _LOCK:
            key = (rules, len(chunk))
            if key not in _ENCODERS:
                if len(_ENCODERS) >= 8:
                    _ENCODERS.clear()
                vg = VectorGame(len(chunk), num_players=1, seed=0, reward="points", **rules.to_dict())
                vg.reset()  # fresh solo games: seat 0 to act at a turn, the row full, nothing quit
                _ENCODERS[key] = (vg, vg.state())
            vg, template = _ENCODERS[key]
            games = template["games"].copy()
            display, total, phase, dice = zip(*chunk, strict=True)
            games["disp"][:, 0] = display
            games["tot"][:, 0] = games["rstart"][:, 0] = total
            games["phase"] = [int(p) for p in phase]
            for i, (d, x) in enumerate(zip(display, dice, strict=True)):
                if x is not None:  # after a roll: its dice and what they let the player discard
                    games["dice"][i] = x
                    games["lim"][i] = match_limits(d, x) or (0,) * len(d)
            vg.set_state({**template, "games": games})
            out[lo:lo + len(chunk)] = vg.observe(0)
    return out


def solo_observation(rules: RulesConfig, display: Display, total: int, phase: Phase,
                     dice: tuple[int, ...] | None = None) -> np.ndarray:
    """The observation (:func:`lama_env.observation.encode`) of a solo decision (:func:`solo_observations`).

    ``display`` at a turn (``phase`` TURN) or after the roll ``dice`` (``phase``
    DISCARD), with ``total`` chips; the row is full.
    """
    return solo_observations(rules, [(display, total, phase, dice)])[0]


class ObservationSoloPolicy:
    """A deterministic observation policy as a :class:`~lama_dice.agents.solver.SoloPolicy` that sees the dice.

    Args:
        policy: a one-player policy with ``act_observations`` and ``deterministic=True``
            (e.g. :class:`~lama_dice.agents.ppo.PPOPolicy` of a solo checkpoint).
        rules: the rules of the round.
        total: the chip total the observation shows (0: a fresh game).

    Raises:
        SolverError: the policy samples its actions (an exact value needs one action per state).
    """

    def __init__(self, policy: ObservationPolicy, rules: RulesConfig, total: int = 0) -> None:
        """Wrap ``policy`` (see the class docstring)."""
        if not getattr(policy, "deterministic", False):
            raise SolverError(f"{policy!r} samples its actions; an exact value needs a deterministic policy")
        self.policy = policy
        self.rules = rules
        self.total = int(total)
        self.decisions = 0  # forward passes asked for (each cached state counts once)
        self._quit: dict[Display, bool] = {}
        self._discard: dict[tuple[Display, tuple[int, ...]], int] = {}

    def _act(self, display: Display, phase: Phase, dice: tuple[int, ...] | None, legal: Sequence[int]) -> int:
        return self._act_many([(display, phase, dice, legal)])[0]

    def prefetch(self, solver: SoloSolver, max_cards: int = HAND_SIZE) -> None:
        """Ask the policy about every solo decision with at most ``max_cards`` cards at once (two batched calls).

        Every display at a turn and every display with each matching roll, so that
        :meth:`SoloSolver.policy_value` then runs on cached decisions.
        """
        turns = displays(max_cards)
        discards = [(d, dice, legal) for d in turns for dice, legal in solver.discard_rolls(d)]
        quits = self._act_many([(d, Phase.TURN, None, _TURN_LEGAL) for d in turns])
        self._quit.update((d, a == A.QUIT) for d, a in zip(turns, quits, strict=True))
        chosen = self._act_many([(d, Phase.DISCARD, dice, legal) for d, dice, legal in discards])
        self._discard.update(((d, dice), a) for (d, dice, _), a in zip(discards, chosen, strict=True))

    def _act_many(self, states: list[tuple[Display, Phase, tuple[int, ...] | None, Sequence[int]]]) -> list[int]:
        """The policy's actions at ``(display, phase, dice, legal)`` states, in one batched call."""
        if not states:
            return []
        obs = solo_observations(self.rules, [(d, self.total, phase, dice) for d, phase, dice, _ in states])
        mask = np.zeros((len(states), A.NUM_ACTIONS), dtype=bool)
        for i, (_, _, _, legal) in enumerate(states):
            mask[i, list(legal)] = True
        self.decisions += len(states)
        return [int(a) for a in self.policy.act_observations(obs, mask)]

    def wants_quit(self, display: Display, rules: RulesConfig) -> bool:
        """At a turn with ``display``: does the policy quit?"""
        q = self._quit.get(display)
        if q is None:
            q = self._quit[display] = self._act(display, Phase.TURN, None, _TURN_LEGAL) == A.QUIT
        return q

    def choose_discard(self, display: Display, legal: Sequence[int], rules: RulesConfig) -> int:
        """Not used: the policy sees the dice (:meth:`choose_discard_for_roll`)."""
        raise SolverError("an observation policy chooses its discard from the dice: use choose_discard_for_roll")

    def choose_discard_for_roll(self, display: Display, dice: tuple[int, ...], legal: Sequence[int],
                                rules: RulesConfig) -> int:
        """After the matching roll ``dice`` (sorted face indices): the policy's discard among ``legal``."""
        key = (display, dice)
        a = self._discard.get(key)
        if a is None:
            a = self._discard[key] = self._act(display, Phase.DISCARD, dice, legal)
        return a

    def __repr__(self) -> str:
        """Name the wrapped policy and the total."""
        return f"ObservationSoloPolicy({getattr(self.policy, 'spec', self.policy)!r}, total={self.total})"


def exact_solo_value(policy: Any, rules: RulesConfig | None = None, total: int = 0) -> float:
    """The exact expected round points of a deterministic one-player agent from a fresh deal.

    Rule-based agents (``wants_quit`` / ``choose_discard``) go to the solver as
    they are; observation policies (trained networks) through :class:`ObservationSoloPolicy`
    with the chip total ``total``.

    Raises:
        SolverError: the agent is neither, or it samples its actions.
    """
    from .solver import solver_for

    rules = rules if rules is not None else RulesConfig()
    if hasattr(policy, "act_observations"):
        if getattr(policy, "num_players", 1) != 1:
            raise SolverError(f"{getattr(policy, 'spec', policy)} plays {policy.num_players} players, not solo")
        policy = ObservationSoloPolicy(policy, rules, total)
        policy.prefetch(solver_for(rules))
    elif not is_solo_policy(policy):
        raise SolverError(f"{getattr(policy, 'spec', policy)!r} has no exact solo value: it is neither a "
                          f"rule-based agent nor a network")
    return solver_for(rules).policy_value(policy)
