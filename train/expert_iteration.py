"""Expert iteration (``algorithm: expert_iteration``): the rollout search teaches the networks, iteration by iteration.

    lama-dice train configs/expert_iteration_2p.yaml
    lama-dice train --resume runs/expert_iteration_2p-YYYYmmdd-HHMMSS [--iterations 40]
    python -m lama_dice.train.expert_iteration table runs/expert_iteration_2p-... [--plot OUT.png]

The search is the expert, the networks the apprentice (Anthony et al., 2017).  Two pairs of networks
(a policy network and a value network each) are kept: the **best** pair, which plays the self-play
and which the search runs over, and the **candidate** pair, which is trained on every iteration's
labels (fine-tuned from its previous weights, never started afresh).  Iteration ``k`` = 1, 2, ...
does, in order:

1. **Positions** (:func:`play_positions`): ``selfplay.envs`` games at a time in the vector game,
   every seat played by the best policy network (its most likely action; a share
   ``selfplay.explore`` of the moves uniformly at random), each decision with a choice kept with
   probability ``selfplay.keep`` until ``selfplay.positions`` are kept.  The search
   (:class:`ExpertSearch`: ``search:BEST,rollouts=R,rounds=U,top=K`` over the best pair) labels
   them, ``search.batch`` at a time: the **policy target** is Gumbel MuZero's improved policy
   (:func:`policy_targets`), ``softmax(logits + (c_visit + R) * c_scale * completed Q)`` over the
   legal actions, where ``Q`` is the search's mean win share of each action searched and an
   action not searched (``top``) gets the prior-weighted mean of those searched (Danihelka et
   al., 2022; DeepMind's ``mctx``); the **value target** is the outcome, each seat's share of
   the win of the game the position comes from, seen from the player to act.
2. **Fit**: the candidate policy network on the cross-entropy of the policy targets, the
   candidate value network on that of the value targets, over this iteration's positions and
   the ``fit.replay - 1`` iterations before (:func:`lama_dice.train.fit.minibatch_fit`); the
   last ``fit.holdout`` share of this iteration's games is held out, and on it the value
   networks' Brier scores and the policies' agreement with the search are measured.
3. **Gate** (:func:`run_gate`): the candidate policy network against the best one (one seat
   against the others, seats rotating) in blocks of ``gate.block`` games, until the 95% Wilson
   interval of its win rate lies wholly above or below the fair share ``1/N``, or
   ``gate.games`` are played.  It is **accepted** (becomes the best) only when the interval's
   lower end is above ``1/N``.  The candidate value network replaces the best one when its
   held-out Brier score is no worse (a value network is judged by its calibration: the search
   asks it for chances to win).
4. **Measure**: the search over the best pair (``measure.search``: by default
   ``search:BEST,rollouts=128,rounds=1,z=2``, the default of ``search:NET`` until 2026-12-06 and the measure of
   the documented runs; ``expert``: the labelling search
   playing its policy target's most likely action) against the best policy network,
   ``measure.search_games`` games: the search's edge over its network, and the **share of it
   kept**: the candidate's edge over the best network (step 3) divided by the search's edge.
5. **Report**: one row per iteration in ``iterations/KKKK/report.json`` and TensorBoard
   (``tb/``), and the run's ``state.json`` (the best pair; written last, atomically).

Each step's result is a file of ``iterations/KKKK/`` written atomically (``os.replace``), and a
step whose file exists is not run again: Ctrl-C or SIGTERM stops the run, and
``lama-dice train --resume RUN`` continues at the step it stopped in, with the same seeds (each
step's from the run's seed, the iteration and the step), so that an interrupted run ends as an
uninterrupted one would.  Every network is a weights-only agent file (``ppo:FILE``) or value file
(``value=FILE``)::

    runs/NAME-YYYYmmdd-HHMMSS/
      config.yaml          the resolved config (--resume uses it)
      state.json           iterations done, the best pair
      tb/                  TensorBoard: the figures of step 5, one point per iteration
      iterations/0000/     policy.safetensors, value.safetensors: the start networks (copies)
      iterations/0001/     data.npz (step 1), policy.safetensors, value.safetensors, fit.json (2),
                           gate.json (3), measure.json (4), report.json (5)
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TextIO

import numpy as np

from lama_dice.agents.rollout import RolloutPolicy
from lama_dice.evaluation.stats import wilson_interval
from lama_env.engine import LamaGame
from lama_env.errors import LamaDiceError
from lama_env.rules import RulesConfig
from lama_env.snapshot import from_state
from lama_env.vector import VectorGame

from .expert_config import ExpertIterationConfig, ExpertIterationConfigError, load_expert_config, parse_expert_config
from .runs import make_run_dir

#: The files of an iteration's steps (a step whose file exists is done).
DATA, POLICY, VALUE, FIT, GATE, MEASURE, REPORT = ("data.npz", "policy.safetensors", "value.safetensors", "fit.json",
                                                   "gate.json", "measure.json", "report.json")
#: The step numbers of the seeds drawn (:func:`step_seed`).
_PLAY, _FIT, _GATE, _MEASURE = range(1, 5)


# --------------------------------------------------------------------------- the expert and its targets


def policy_targets(logits: np.ndarray, q: np.ndarray, rollouts: int, c_visit: float = 50.0,
                   c_scale: float = 0.1, se: np.ndarray | None = None, z: float = 0.0) -> np.ndarray:
    """Gumbel MuZero's improved policy: ``softmax(logits + sigma(completed Q))`` over the legal actions.

    Args:
        logits: ``[B, A]`` the prior network's logits, ``-inf`` on the illegal actions.
        q: ``[B, A]`` the search's mean win share for the player to act of each searched action,
            NaN elsewhere (at least one legal action searched per row).
        rollouts: the rollouts per searched action (the visit count ``N`` of each).
        c_visit: ``sigma(q) = (c_visit + N) * c_scale * q`` (the paper's monotone transform; ``q`` is
            already a win share in [0, 1], so it is not rescaled).
        c_scale: see ``c_visit``.
        se: ``[B, A]`` the standard error of each searched action's paired difference with the
            prior's most likely action (what the rollout search reports, which always searches that
            one; a row where it is not searched is not shrunk; None: all 0).
        z: shrink each difference with the prior's most likely action towards 0 by ``z`` standard
            errors (soft thresholding: ``d -> sign(d) max(|d| - z se, 0)``), so that the rollouts'
            noise moves the target only where the search is sure (the search's own ``z`` test).

    Returns:
        ``[B, A]`` float32 distributions: non-negative, summing to 1, zero on the illegal actions.
        An action not searched gets the completed value ``v_mix``, the prior-weighted mean of the
        searched ones' (shrunk) ``Q`` (the paper's ``v_mix`` with the visits' weight in full).
    """
    legal = np.isfinite(logits)
    searched = ~np.isnan(q) & legal
    z_ = np.where(legal, logits, -np.inf).astype(np.float64)
    prior = np.exp(z_ - z_.max(axis=1, keepdims=True))
    prior /= prior.sum(axis=1, keepdims=True)
    qs = np.where(searched, q, 0.0).astype(np.float64)
    if z > 0 and se is not None:
        top = np.argmax(z_, axis=1)  # the prior's most likely action: the differences' reference
        q0 = qs[np.arange(len(qs)), top][:, None]
        d = qs - q0
        sure = searched & searched[np.arange(len(qs)), top][:, None]  # a row without its reference: as it is
        qs = np.where(sure, q0 + np.sign(d) * np.maximum(np.abs(d) - z * np.nan_to_num(se), 0.0), qs)
    w = np.where(searched, prior, 0.0)
    v_mix = (w * qs).sum(axis=1) / np.maximum(w.sum(axis=1), 1e-300)
    completed = np.where(searched, qs, v_mix[:, None])
    z_ = np.where(legal, z_ + (c_visit + rollouts) * c_scale * completed, -np.inf)
    p = np.exp(z_ - z_.max(axis=1, keepdims=True))
    p /= p.sum(axis=1, keepdims=True)
    return p.astype(np.float32)


class ExpertSearch(RolloutPolicy):
    """The expert: the rollout search over a pair of networks, and the improved policy from its estimates.

    :meth:`label` returns each position's prior logits, the search's ``Q`` per searched action
    and the policy target (:func:`policy_targets`); as an agent (:meth:`act_batch`, what
    ``evaluate`` asks) it plays the target's most likely action, the policy the network is taught.
    """

    def __init__(self, policy: str | os.PathLike, value: str | os.PathLike, *, rollouts: int, rounds: int = 1,
                 top: int = 0, c_visit: float = 50.0, c_scale: float = 0.1, z: float = 0.0,
                 seed: int | None = None) -> None:
        """The search ``search:ppo:POLICY,value=VALUE,rollouts=R,rounds=U,top=K`` (its draws from ``seed``)."""
        super().__init__(f"ppo:{policy}", rollouts=rollouts, rounds=rounds, top=top, value=str(value), seed=seed)
        self.c_visit, self.c_scale, self.shrink = c_visit, c_scale, z
        self.spec = f"expert:{policy},rollouts={rollouts},rounds={rounds},top={top}"

    def label(self, games: Sequence[LamaGame]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(logits, q, target)`` at ``games`` (each ``[B, NUM_ACTIONS]``; see :func:`policy_targets`)."""
        legals = [g.legal_actions() for g in games]
        logits = self.prior._batch(games, legals, invariant=True)
        q = np.full(logits.shape, np.nan, dtype=np.float32)
        se = np.zeros(logits.shape, dtype=np.float32)
        for i, (_, values) in enumerate(self.search_many(games)):
            for a, v in values.items():
                q[i, a], se[i, a] = v[0], v[1]
        return logits, q, policy_targets(logits, q, self.rollouts, self.c_visit, self.c_scale, se, self.shrink)

    def act_batch(self, games: Sequence[LamaGame], legals: Sequence[Sequence[int]]) -> list[int]:
        """The improved policy's most likely action in every game (a forced one at once)."""
        out = [legal[0] for legal in legals]
        todo = [i for i, legal in enumerate(legals) if len(legal) > 1]
        if todo:
            target = self.label([games[i] for i in todo])[2]
            for i, a in zip(todo, target.argmax(axis=1).tolist(), strict=True):
                out[i] = int(a)
        return out


# --------------------------------------------------------------------------- step 1: positions


def play_positions(expert: ExpertSearch, positions: int, *, envs: int = 256, keep: float = 0.25,
                   explore: float = 0.05, batch: int = 256, seed: int = 0, rules: RulesConfig | None = None,
                   log: TextIO | None = None) -> dict[str, Any]:
    """Self-play of ``expert.prior``, ``positions`` of its decisions labelled by ``expert`` (module docstring, 1).

    Returns the arrays of the data file: ``obs`` (seen from the player to act), ``mask``,
    ``q``, ``policy`` (the policy targets), ``value`` (``[B, N]`` the win shares in the
    observation's seat order) and ``game`` (the game each position comes from, numbered as the
    games started), with ``games``, ``decisions`` and the seconds of the play and of the labels.
    Deterministic for a given ``seed`` (and the expert's).
    """
    from lama_env.rules import win_shares_of_games

    rules = rules or RulesConfig()
    n = expert.num_players
    rng = np.random.default_rng(seed)
    vg = VectorGame(envs, num_players=n, seed=seed, rules=rules)
    vg.reset()
    LamaGame(n, rules, record=False)  # loads the compiled engine, which snapshot.from_state needs loaded
    rot = (np.arange(n)[None, :] + np.arange(n)[:, None]) % n  # rot[p, k]: the seat k places after p
    episode = np.arange(envs, dtype=np.int64)
    next_game = envs
    kept: dict[str, list[np.ndarray]] = {k: [] for k in ("obs", "mask", "game", "seat", "logits", "q", "policy")}
    outcome: dict[int, np.ndarray] = {}  # game -> each seat's share of the win
    waiting: list[LamaGame] = []
    count = decisions = 0
    label_s = 0.0
    t0 = time.perf_counter()

    def label() -> None:
        nonlocal label_s
        t = time.perf_counter()
        logits, q, target = expert.label(waiting)
        label_s += time.perf_counter() - t
        kept["logits"].append(logits.astype(np.float32))
        kept["q"].append(q)
        kept["policy"].append(target)
        waiting.clear()
        if log is not None:
            print(f"  labelled {count:,} positions ({time.perf_counter() - t0:.0f} s)", file=log, flush=True)

    open_games = set(episode.tolist())
    while count < positions or open_games:
        obs, mask, seat = np.asarray(vg.observation), np.asarray(vg.action_mask), np.asarray(vg.current_player)
        if count < positions:
            sel = np.flatnonzero((mask.sum(axis=1) > 1) & (rng.random(envs) < keep))[: positions - count]
            if len(sel):
                records = vg.state()["games"][sel]
                waiting += [from_state(rec, n, rules) for rec in records]
                for name, a in (("obs", obs), ("mask", mask), ("game", episode), ("seat", seat)):
                    kept[name].append(a[sel].copy())
                count += len(sel)
                if len(waiting) >= batch:
                    label()
        actions = np.where(mask, expert.prior.logits(obs, mask), -np.inf).argmax(axis=1)
        wild = rng.random(envs) < explore
        if wild.any():  # a uniformly random legal action
            actions[wild] = np.where(mask[wild], rng.random((int(wild.sum()), mask.shape[1])), -1.0).argmax(axis=1)
        vg.step(actions)
        decisions += envs
        ended = np.flatnonzero(vg.terminated)
        if len(ended):
            shares = win_shares_of_games(vg.final_totals[ended]).astype(np.float32)
            for slot, share in zip(ended.tolist(), shares, strict=True):
                outcome[int(episode[slot])] = share
                open_games.discard(int(episode[slot]))
            episode[ended] = next_game + np.arange(len(ended))
            if count < positions:  # games started after the quota keep no positions: nobody waits for them
                open_games.update(episode[ended].tolist())
            next_game += len(ended)
    if waiting:
        label()
    data: dict[str, Any] = {k: np.concatenate(v) for k, v in kept.items()}
    seat = data.pop("seat")
    data["value"] = np.stack([outcome[int(g)] for g in data["game"]])[np.arange(len(seat))[:, None], rot[seat]]
    data.pop("logits")
    data.update(games=int(next_game), decisions=int(decisions), play_seconds=time.perf_counter() - t0 - label_s,
                label_seconds=label_s)
    return data


def check_targets(data: dict[str, Any]) -> str | None:
    """What is wrong with labelled positions (None: nothing): the targets must be distributions over the legal moves."""
    p, mask, v = data["policy"], data["mask"], data["value"]
    if p.shape != mask.shape or not np.isfinite(p).all() or (p < 0).any():
        return "policy targets that are not finite non-negative numbers, one per action"
    if (p[~mask] != 0).any():
        return "a policy target with weight on an illegal action"
    if not np.allclose(p.sum(axis=1), 1.0, atol=1e-5) or not np.allclose(v.sum(axis=1), 1.0, atol=1e-5):
        return "a target that does not sum to 1"
    return None


# --------------------------------------------------------------------------- step 3: the gate


def gate_decision(wins: float, games: int, num_players: int, confidence: float = 0.95) -> dict[str, Any]:
    """The gate's statistics after ``games`` games in which the candidate won ``wins`` (ties shared).

    ``win_rate`` with its Wilson interval ``ci``; ``edge`` over the fair share ``1/N``;
    ``decided`` when the interval lies wholly on one side of ``1/N``; ``accepted`` when its
    lower end is above it.
    """
    fair = 1.0 / num_players
    lo, hi = wilson_interval(wins, games, confidence)
    rate = wins / games if games else float("nan")
    return {"games": int(games), "wins": float(wins), "win_rate": rate, "ci": [lo, hi], "fair": fair,
            "edge": rate - fair, "decided": bool(lo > fair or hi < fair), "accepted": bool(lo > fair)}


def run_gate(play: Callable[[int, int], float], num_players: int, games: int, block: int,
             seeds: Iterator[int]) -> dict[str, Any]:
    """Play blocks of ``block`` games (``play(games, seed) -> the candidate's wins``) until decided or ``games``.

    Returns :func:`gate_decision` of all the games played, with ``blocks`` (each block's wins).
    """
    wins, played, blocks = 0.0, 0, []
    while played < games:
        g = min(block, games - played)
        w = float(play(g, next(seeds)))
        blocks.append(w)
        wins += w
        played += g
        if gate_decision(wins, played, num_players)["decided"]:
            break
    return {**gate_decision(wins, played, num_players), "blocks": blocks}


# --------------------------------------------------------------------------- the run


def step_seed(seed: int, iteration: int, step: int, k: int = 0) -> int:
    """The seed of ``step`` of ``iteration`` (its ``k``-th draw): from the run's seed, never reused."""
    return int(np.random.SeedSequence([seed, iteration, step, k]).generate_state(1, dtype=np.uint32)[0])


def write_json(path: Path, data: Any) -> None:
    """Write ``data`` as JSON to ``path`` atomically (a temporary file, then ``os.replace``)."""
    tmp = path.with_name(f".tmp-{path.name}")
    tmp.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
    os.replace(tmp, path)


def _save_npz(path: Path, arrays: dict[str, Any]) -> None:
    tmp = path.with_name(f".tmp-{path.name}")
    with open(tmp, "wb") as f:
        np.savez_compressed(f, **arrays)
    os.replace(tmp, path)


def _load_npz(path: Path) -> dict[str, Any]:
    with np.load(path, allow_pickle=False) as z:  # data, never code
        return {k: z[k] for k in z.files}


@contextmanager
def _stop_on_sigterm() -> Iterator[None]:
    """SIGTERM raises KeyboardInterrupt (as Ctrl-C) while the run is on, so that both stop it alike."""
    def handler(signum: int, frame: Any) -> None:
        raise KeyboardInterrupt

    try:
        old = signal.signal(signal.SIGTERM, handler)
    except ValueError:  # not the main thread
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, old)


def _copy_start(cfg: ExpertIterationConfig, folder: Path) -> None:
    """Copy the start networks into ``iterations/0000/`` (the run then needs nothing outside its folder)."""
    from lama_dice.agents.ppo import resolve_checkpoint
    from lama_dice.agents.value import resolve_value

    folder.mkdir(parents=True, exist_ok=True)
    for src, name in ((resolve_checkpoint(cfg.start.policy.removeprefix("ppo:")), POLICY),
                      (resolve_value(cfg.start.value), VALUE)):
        if not (folder / name).exists():
            tmp = folder / f".tmp-{name}"
            shutil.copyfile(src, tmp)
            os.replace(tmp, folder / name)


def _fit_networks(cfg: ExpertIterationConfig, run: Path, k: int, out: TextIO) -> dict[str, Any]:
    """Step 2: fine-tune the candidate pair on the replay; write both files and the held-out figures."""
    from safetensors.numpy import load_file

    from lama_dice.agents.agentfile import read_description, write_agent_file
    from lama_dice.agents.mlp import MLP
    from lama_dice.agents.value import ValueNet, write_value_file

    from . import distil
    from . import value as value_training

    it = run / "iterations"
    here = _load_npz(it / f"{k:04d}" / DATA)
    cut = np.quantile(here["game"], 1 - cfg.fit.holdout)
    test = here["game"] >= cut
    parts = [{name: here[name][~test] for name in ("obs", "mask", "policy", "value")}]
    for j in range(max(1, k - cfg.fit.replay + 1), k):
        older = _load_npz(it / f"{j:04d}" / DATA)
        parts.append({name: older[name] for name in ("obs", "mask", "policy", "value")})
    train = {name: np.concatenate([p[name] for p in parts]) for name in parts[0]}
    prev = it / f"{k - 1:04d}"
    best = _best(run)
    t0 = time.perf_counter()
    seed = step_seed(cfg.seed, k, _FIT)
    p_desc = read_description(prev / POLICY)
    print(f"  fit: policy network on {len(train['obs']):,} positions ({k - len(parts) + 1}..{k})", file=out,
          flush=True)
    p_tensors = distil.fit(load_file(str(prev / POLICY)), p_desc["network"]["activation"], train["obs"],
                           train["mask"], train["policy"], epochs=cfg.fit.policy.epochs, batch=cfg.fit.policy.batch,
                           lr=cfg.fit.policy.lr, seed=seed)
    v_desc = read_description(prev / VALUE)
    v_tensors = value_training.fit(train["obs"], train["value"], [], epochs=cfg.fit.value.epochs,
                                   batch=cfg.fit.value.batch, lr=cfg.fit.value.lr, seed=seed,
                                   init=load_file(str(prev / VALUE)))
    fit_s = time.perf_counter() - t0
    training = {"algorithm": "expert iteration: cross-entropy of the rollout search's improved policy",
                "run": run.name, "iteration": k, "positions": len(train["obs"]), "seed": seed}
    folder = it / f"{k:04d}"
    # the held-out games: the policies' agreement with the search, the value networks' Brier scores
    obs, mask, target = here["obs"][test], here["mask"][test], here["policy"][test]
    best_p = MLP(read_description(best["policy"])["network"], load_file(str(best["policy"])))
    new_p = MLP(p_desc["network"], p_tensors)
    figures: dict[str, Any] = {"heldout_positions": int(test.sum()), "fit_seconds": round(fit_s, 2)}
    for name, net in (("best", best_p), ("candidate", new_p)):
        z = np.where(mask, net(obs), -np.inf)
        logp = z - z.max(axis=1, keepdims=True)
        logp -= np.log(np.exp(logp).sum(axis=1, keepdims=True))
        figures[f"{name}_agree"] = float(np.mean(z.argmax(axis=1) == target.argmax(axis=1)))
        figures[f"{name}_cross_entropy"] = float(-(target * np.where(mask, logp, 0.0)).sum(axis=1).mean())
    best_v = ValueNet(read_description(best["value"]), load_file(str(best["value"])))
    new_v = ValueNet(v_desc, v_tensors)
    for name, net_v in (("best", best_v), ("candidate", new_v)):
        cal = value_training.calibration(net_v.win_probabilities(obs), here["value"][test])
        figures[f"{name}_brier"] = cal["brier"]
        figures["brier_constant"] = cal["brier_constant"]
    figures["value_accepted"] = bool(figures["candidate_brier"] <= figures["best_brier"])
    write_agent_file(folder / POLICY, {**{k_: v for k_, v in p_desc.items() if k_ != "training"},
                                       "training": training}, p_tensors)
    write_value_file(folder / VALUE, {**{k_: v for k_, v in v_desc.items() if k_ != "training"},
                                      "training": {**training, "brier": figures["candidate_brier"]}}, v_tensors)
    write_json(folder / FIT, figures)
    return figures


def _best(run: Path) -> dict[str, Path]:
    """The best pair's files, from ``state.json`` (the start networks before the first report)."""
    state = _state(run)
    return {k: run / v for k, v in state["best"].items()}


def _state(run: Path) -> dict[str, Any]:
    path = run / "state.json"
    if path.exists():
        state: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
        return state
    return {"iterations": 0, "best": {"policy": f"iterations/0000/{POLICY}", "value": f"iterations/0000/{VALUE}"}}


def _measured_search(cfg: ExpertIterationConfig, best: dict[str, Path]) -> Any:
    """The search of step 4 over the best pair: ``search:BEST,value=BEST,OPTIONS``, or the expert itself."""
    from lama_dice.agents.registry import make_agent

    s = cfg.search
    if cfg.measure.search == "expert":
        return ExpertSearch(best["policy"], best["value"], rollouts=s.rollouts, rounds=s.rounds, top=s.top,
                            c_visit=s.c_visit, c_scale=s.c_scale, z=s.z)
    return make_agent(f"search:ppo:{best['policy']},value={best['value']},{cfg.measure.search}")


def _evaluate_wins(agents: list[Any], games: int, seed: int, workers: int, rules: RulesConfig) -> float:
    """The first agent's wins (ties shared) in ``games`` games, seats rotating (the evaluation harness)."""
    from lama_dice.evaluation import evaluate

    result = evaluate(agents, games=games, seed=seed, workers=workers, rules=rules, progress=False)
    return float(result.agents[0].wins)


def iteration(cfg: ExpertIterationConfig, run: Path, k: int, writer: Any, out: TextIO) -> dict[str, Any]:
    """Iteration ``k`` of the run in ``run``: the five steps of the module docstring, each skipped when done."""
    n, rules = cfg.env.num_players, cfg.rules
    folder = run / "iterations" / f"{k:04d}"
    folder.mkdir(parents=True, exist_ok=True)
    best = _best(run)
    s = cfg.search
    t_start = time.perf_counter()

    # 1. positions: self-play of the best policy network, labelled by the search over the best pair
    if not (folder / DATA).exists():
        print(f"iteration {k}: 1. positions: {cfg.selfplay.positions:,}, labelled by the search "
              f"(rollouts={s.rollouts}, rounds={s.rounds}, top={s.top})", file=out, flush=True)
        expert = ExpertSearch(best["policy"], best["value"], rollouts=s.rollouts, rounds=s.rounds, top=s.top,
                              c_visit=s.c_visit, c_scale=s.c_scale, z=s.z, seed=step_seed(cfg.seed, k, _PLAY, 1))
        data = play_positions(expert, cfg.selfplay.positions, envs=cfg.selfplay.envs, keep=cfg.selfplay.keep,
                              explore=cfg.selfplay.explore, batch=s.batch, seed=step_seed(cfg.seed, k, _PLAY),
                              rules=rules, log=out)
        problem = check_targets(data)
        if problem:  # pragma: no cover - a bug, not a user error
            raise RuntimeError(f"iteration {k}: {problem}")
        _save_npz(folder / DATA, data)
    meta = _load_npz(folder / DATA)
    positions, label_s = len(meta["obs"]), float(meta["label_seconds"])

    # 2. fit: the candidate pair, fine-tuned on the replay of labelled positions
    if not (folder / FIT).exists():
        print(f"iteration {k}: 2. fit", file=out, flush=True)
        _fit_networks(cfg, run, k, out)
    fit = json.loads((folder / FIT).read_text(encoding="utf-8"))

    # 3. gate: the candidate policy network against the best one, until the 95% interval decides
    if not (folder / GATE).exists():
        print(f"iteration {k}: 3. gate: candidate against best, up to {cfg.gate.games:,} games", file=out, flush=True)
        t = time.perf_counter()
        cand, prev = f"ppo:{folder / POLICY}", f"ppo:{best['policy']}"
        seeds = (step_seed(cfg.seed, k, _GATE, b) for b in range(1 << 30))
        gate = run_gate(lambda g, sd: _evaluate_wins([cand] + [prev] * (n - 1), g, sd, cfg.gate.workers, rules),
                        n, cfg.gate.games, cfg.gate.block, seeds)
        gate["seconds"] = time.perf_counter() - t
        write_json(folder / GATE, gate)
    gate = json.loads((folder / GATE).read_text(encoding="utf-8"))

    # 4. measure: the search over the best pair against the best policy network
    if not (folder / MEASURE).exists():
        measure: dict[str, Any] = {"games": 0}
        t = time.perf_counter()
        if cfg.measure.search_games:
            print(f"iteration {k}: 4. measure: the search ({cfg.measure.search}) against its network, "
                  f"{cfg.measure.search_games:,} games", file=out, flush=True)
            wins = _evaluate_wins([_measured_search(cfg, best)] + [f"ppo:{best['policy']}"] * (n - 1),
                                  cfg.measure.search_games, step_seed(cfg.seed, k, _MEASURE), cfg.measure.workers,
                                  rules)
            measure = gate_decision(wins, cfg.measure.search_games, n)
        measure["seconds"] = time.perf_counter() - t
        write_json(folder / MEASURE, measure)
    measure = json.loads((folder / MEASURE).read_text(encoding="utf-8"))

    # 5. report: the row of this iteration, TensorBoard, and the new best pair (state.json, written last)
    search_edge = measure.get("edge")
    kept = gate["edge"] / search_edge if search_edge is not None and search_edge > 0 else None
    report = {"iteration": k, "positions": positions, "games": int(meta["games"]),
              "label_decisions_per_s": positions / label_s if label_s > 0 else None,
              "search_win_rate": measure.get("win_rate"), "search_ci": measure.get("ci"), "search_edge": search_edge,
              "search_games": measure["games"],
              "new_win_rate": gate["win_rate"], "new_ci": gate["ci"], "new_edge": gate["edge"],
              "gate_games": gate["games"], "accepted": gate["accepted"], "share_kept": kept,
              "value_brier": fit["candidate_brier"], "value_brier_best": fit["best_brier"],
              "value_brier_constant": fit["brier_constant"], "value_accepted": fit["value_accepted"],
              "agree": fit["candidate_agree"], "agree_best": fit["best_agree"],
              "cross_entropy": fit["candidate_cross_entropy"], "cross_entropy_best": fit["best_cross_entropy"],
              "seconds": {"positions": round(float(meta["play_seconds"]) + label_s, 1), "label": round(label_s, 1),
                          "fit": fit["fit_seconds"], "gate": round(gate["seconds"], 1),
                          "measure": round(measure["seconds"], 1)}}
    report["seconds"]["iteration"] = round(sum(report["seconds"][x] for x in ("positions", "fit", "gate", "measure")),
                                           1)
    report["session_seconds"] = round(time.perf_counter() - t_start, 1)
    write_json(folder / REPORT, report)
    _log_report(writer, report)
    state = _state(run)
    if gate["accepted"]:
        state["best"]["policy"] = f"iterations/{k:04d}/{POLICY}"
    if fit["value_accepted"]:
        state["best"]["value"] = f"iterations/{k:04d}/{VALUE}"
    state["iterations"] = k
    write_json(run / "state.json", state)
    print(f"iteration {k}: search {_pct(measure.get('win_rate'))} against its network, candidate "
          f"{_pct(gate['win_rate'])} [{_pct(gate['ci'][0])}, {_pct(gate['ci'][1])}] against the best over "
          f"{gate['games']:,} games ({'accepted' if gate['accepted'] else 'not accepted'}), share kept "
          f"{'-' if kept is None else f'{kept:.2f}'}, value Brier {fit['candidate_brier']:.4f} (best "
          f"{fit['best_brier']:.4f}); {report['seconds']['iteration']:.0f} s", file=out, flush=True)
    return report


def _log_report(writer: Any, r: dict[str, Any]) -> None:
    """The iteration's figures as TensorBoard scalars (one point per iteration)."""
    if writer is None:
        return
    k = r["iteration"]
    scalars = {"exit/search_edge": r["search_edge"], "exit/search_win_rate": r["search_win_rate"],
               "exit/new_edge": r["new_edge"], "exit/new_win_rate": r["new_win_rate"],
               "exit/share_kept": r["share_kept"], "exit/accepted": float(r["accepted"]),
               "exit/gate_games": r["gate_games"], "value/brier": r["value_brier"],
               "value/brier_best": r["value_brier_best"], "value/brier_constant": r["value_brier_constant"],
               "policy/agree_with_search": r["agree"], "policy/cross_entropy": r["cross_entropy"],
               "data/positions": r["positions"], "data/games": r["games"],
               "data/label_decisions_per_s": r["label_decisions_per_s"],
               **{f"time/{name}_s": v for name, v in r["seconds"].items()}}
    for tag, v in scalars.items():
        if v is not None:
            writer.add_scalar(tag, float(v), k)
    writer.flush()


def _pct(x: Any) -> str:
    return "-" if x is None else f"{100 * x:.1f}%"


def run_expert_iteration(config: ExpertIterationConfig | str | os.PathLike | None = None, *,
                         resume: str | os.PathLike | None = None, run_dir: str | os.PathLike | None = None,
                         iterations: int | None = None, seed: int | None = None, runs_root: str | os.PathLike = "runs",
                         tensorboard: bool = True, out: TextIO | None = None) -> tuple[Path, bool]:
    """Run (or continue) an expert-iteration run; returns its folder and whether it was interrupted.

    Args:
        config: a config or the path of one (not needed with ``resume``: the run's own ``config.yaml``).
        resume: a run folder to continue.
        run_dir: the folder of a new run (default ``runs_root/NAME-YYYYmmdd-HHMMSS``).
        iterations: run up to this many iterations (default the config's).
        seed: override the config's seed (a new run only).
        runs_root: parent of new run folders.
        tensorboard: write TensorBoard events in ``tb/``.
        out: where to print (default stdout).

    Raises:
        ExpertIterationConfigError: a bad config, or a folder that is not such a run.
    """
    out = out or sys.stdout
    if resume is not None:
        run = Path(resume)
        if not (run / "config.yaml").is_file():
            raise ExpertIterationConfigError(f"{resume}: not a run folder (no config.yaml)")
        cfg = load_expert_config(run / "config.yaml")
        if config is not None:
            other = config if isinstance(config, ExpertIterationConfig) else load_expert_config(config)
            if _settings(other) != _settings(cfg):
                raise ExpertIterationConfigError(f"{config} is not the config of {resume}; give only --resume RUN")
        if seed is not None and seed != cfg.seed:
            raise ExpertIterationConfigError(f"--seed {seed}: {resume} runs with seed {cfg.seed} (a resumed run "
                                             "keeps its seed)")
    else:
        if config is None:
            raise ExpertIterationConfigError("give a config, or --resume RUN")
        cfg = config if isinstance(config, ExpertIterationConfig) else load_expert_config(config)
        if seed is not None:
            cfg = parse_expert_config({**cfg.to_dict(), "seed": seed}, source="command line")
        run = make_run_dir(run_dir, runs_root, cfg.name)
        _copy_start(cfg, run / "iterations" / "0000")
        (run / "config.yaml").write_text(cfg.to_yaml(), encoding="utf-8")
    total = iterations if iterations is not None else cfg.iterations
    if iterations is not None and iterations != cfg.iterations:  # the run's target from now on
        cfg = cfg.model_copy(update={"iterations": iterations})
        tmp = run / ".tmp-config.yaml"
        tmp.write_text(cfg.to_yaml(), encoding="utf-8")
        os.replace(tmp, run / "config.yaml")
    writer = None
    if tensorboard:
        from torch.utils.tensorboard import SummaryWriter

        writer = SummaryWriter(str(run / "tb"))
    done = _state(run)["iterations"]
    print(f"expert iteration: {run} (iterations {done + 1}..{total} of {total})", file=out, flush=True)
    try:
        with _stop_on_sigterm():
            for k in range(done + 1, total + 1):
                iteration(cfg, run, k, writer, out)
    except KeyboardInterrupt:
        print(f"\nstopped; continue with: lama-dice train --resume {run}", file=out, flush=True)
        return run, True
    finally:
        if writer is not None:
            writer.close()
    best = _best(run)
    print(f"done: {total} iterations; the best pair: ppo:{best['policy']} with value={best['value']}", file=out,
          flush=True)
    return run, False


def _settings(cfg: ExpertIterationConfig) -> dict[str, Any]:
    """What a resumed run must keep: the config but its name and its number of iterations."""
    return {k: v for k, v in cfg.to_dict().items() if k not in ("name", "iterations")}


def run_command(args: argparse.Namespace) -> int:
    """``lama-dice train`` for an ``algorithm: expert_iteration`` config (or ``--resume`` of such a run)."""
    if getattr(args, "total_timesteps", None) is not None:
        raise ExpertIterationConfigError("--total-timesteps is not an option of algorithm: expert_iteration "
                                         "(it runs iterations: --iterations N)")
    if args.check:
        cfg = (load_expert_config(Path(args.resume) / "config.yaml") if args.resume else
               load_expert_config(args.config))
        print(cfg.to_yaml(), end="")
        return 0
    _, interrupted = run_expert_iteration(args.config, resume=args.resume, run_dir=args.run_dir,
                                          iterations=getattr(args, "iterations", None), seed=args.seed,
                                          runs_root=args.runs_root)
    return 130 if interrupted else 0


def is_expert_iteration_run(path: str | os.PathLike) -> bool:
    """Whether ``path`` is the folder of an expert-iteration run (its ``config.yaml`` says so)."""
    from .expert_config import is_expert_iteration_config

    return (Path(path) / "config.yaml").is_file() and is_expert_iteration_config(Path(path) / "config.yaml")


# --------------------------------------------------------------------------- the table and the plot


def reports(run: str | os.PathLike) -> list[dict[str, Any]]:
    """Every finished iteration's report of the run, in order."""
    folder = Path(run) / "iterations"
    if not folder.is_dir():
        raise ExpertIterationConfigError(f"{run}: not an expert-iteration run folder (no iterations/)")
    return [json.loads(p.read_text(encoding="utf-8")) for p in sorted(folder.glob(f"*/{REPORT}"))]


def markdown_table(rows: list[dict[str, Any]]) -> str:
    """The per-iteration table of the docs (markdown)."""
    def ci(r: dict[str, Any], key: str) -> str:
        c = r.get(key)
        return "-" if not c else f"{100 * c[0]:.1f}\N{EN DASH}{100 * c[1]:.1f}%"

    lines = ["| iteration | positions | search vs its network | 95% CI | new vs previous | 95% CI (games) | "
             "accepted | share kept | value Brier (previous) | wall time |",
             "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for r in rows:
        kept = "-" if r["share_kept"] is None else f"{r['share_kept']:.2f}"
        lines.append(f"| {r['iteration']} | {r['positions']:,} | {_pct(r['search_win_rate'])} "
                     f"({r['search_games']:,} games) | {ci(r, 'search_ci')} | {_pct(r['new_win_rate'])} | "
                     f"{ci(r, 'new_ci')} ({r['gate_games']:,}) | {'yes' if r['accepted'] else 'no'} | {kept} | "
                     f"{r['value_brier']:.4f} ({r['value_brier_best']:.4f}) | {r['seconds']['iteration']:,.0f} s |")
    return "\n".join(lines)


def plot(rows: list[dict[str, Any]], out: str) -> None:
    """The per-iteration plot: the search's and the new network's win rates (with intervals), and the share kept."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import MaxNLocator

    k = [r["iteration"] for r in rows]
    fig, (a, b) = plt.subplots(1, 2, figsize=(9, 3.6), dpi=110)
    for key, ci, label in (("search_win_rate", "search_ci", "search vs its network"),
                           ("new_win_rate", "new_ci", "new network vs previous")):
        pts = [(x, r[key], r[ci]) for x, r in zip(k, rows, strict=True) if r[key] is not None]
        if pts:
            xs, ys, cis = zip(*pts, strict=True)
            err = np.array([[y - c[0] for y, c in zip(ys, cis, strict=True)],
                            [c[1] - y for y, c in zip(ys, cis, strict=True)]])
            a.errorbar(xs, ys, yerr=err, marker="o", ms=4, capsize=3, label=label)
    if rows:  # the fair share 1/N
        a.axhline(rows[0]["new_win_rate"] - rows[0]["new_edge"], color="0.6", lw=1, ls="--")
    a.set_xlabel("iteration")
    a.set_ylabel("win rate (95% CI)")
    a.legend(fontsize=7)
    b.plot(k, [r["share_kept"] if r["share_kept"] is not None else np.nan for r in rows], marker="o", ms=4)
    b.axhline(0, color="0.6", lw=1)
    b.set_xlabel("iteration")
    b.set_ylabel("share of the search's edge kept")
    for ax in (a, b):
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    fig.tight_layout()
    fig.savefig(out)
    plt.close(fig)


def main(argv: list[str] | None = None) -> int:
    """``table RUN [--plot OUT.png]``: the run's per-iteration table (markdown) and plot."""
    ap = argparse.ArgumentParser(prog="python -m lama_dice.train.expert_iteration",
                                 description="the per-iteration table and plot of an expert-iteration run")
    sub = ap.add_subparsers(dest="command", required=True)
    t = sub.add_parser("table", help="print the run's per-iteration table (markdown)")
    t.add_argument("run")
    t.add_argument("--plot", metavar="OUT.png", help="also draw the plot")
    t.add_argument("--json", metavar="OUT", help="also write the rows as JSON")
    args = ap.parse_args(argv)
    try:
        rows = reports(args.run)
    except LamaDiceError as e:
        ap.error(str(e))
    print(markdown_table(rows))
    if args.json:
        write_json(Path(args.json), rows)
    if args.plot:
        plot(rows, args.plot)
    return 0


if __name__ == "__main__":
    sys.exit(main())
