"""Distil a search agent into a policy network (expert iteration): imitate ``search:NET,...``.

    python -m lama_dice.train.distil --positions 100000 --batch 128 --data distil_100k.npz --out distilled.safetensors
    python -m lama_dice.train.distil --search search:ppo:2p,rollouts=256,rounds=1,z=2 --out stronger.safetensors

The steps, in order:

1. **Positions** (:func:`search_positions`): ``--envs`` games at a time in the vector game
   (:class:`lama_env.vector.VectorGame`), every seat played by the search's own policy network
   ``NET`` (its most likely action, one batched forward pass per step), so that the positions
   are those the new network will meet.  Each decision with more than one legal action is
   kept with probability ``--keep``; the kept ones become games again
   (:func:`lama_env.snapshot.from_state` of the slot's record) and the search decides
   them, ``--batch`` at a time (one lockstep search for all of them).  A position's label is
   the search's choice; its observation and mask are the vector game's (bit-equal to what
   an agent encodes).  The search draws its rollouts from its own ``seed``, so the labels are
   deterministic for a given ``--seed``.
2. **Held out**: the positions of the last ``--holdout`` share of the games (by game).
3. **Fit** (:func:`fit`): ``NET``'s own network (same layers, same activation), started from
   its weights, trained with Adam (cosine decay) on a cross-entropy over the legal actions
   (illegal ones masked as the agent masks them), ``--epochs`` passes in minibatches of
   ``--batch-fit``, towards ``--target`` (:func:`targets`): ``differences`` (default), ``NET``'s
   own distribution where the search keeps its choice and the search's choice where it
   differs, so that the network is pulled only where the search leaves it; or ``search``, the
   search's choice everywhere (which also sharpens the network where it agrees).
4. **Agreement** on the held-out positions: the share of positions where the new network's
   most likely legal action is the search's, overall and where the search differs from
   ``NET``, beside ``NET``'s own (which agrees with the search wherever it does not differ).
5. **The file**: an agent file (:mod:`lama_dice.agents.agentfile`, plays as ``ppo:FILE``)
   with the data, fit and agreement figures in its ``training`` description; ``--report``
   writes them as JSON.

Whether the distilled network is stronger is measured by playing it, not by the agreement:
``lama-dice evaluate --agents ppo:FILE ppo:2p --games 20000``.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from lama_dice.agents.learned import LearnedPolicy
from lama_dice.agents.registry import AgentSpecError, make_agent
from lama_dice.agents.rollout import RolloutPolicy
from lama_dice.atomic import atomic_path, write_text
from lama_dice.train.fit import minibatch_fit, mlp_model, mlp_tensors
from lama_env.engine import LamaGame
from lama_env.rules import RulesConfig
from lama_env.snapshot import from_state
from lama_env.vector import VectorGame

if TYPE_CHECKING:
    from lama_dice.agents.mlp import MLP

#: What the fit can imitate (:func:`targets`).
TARGETS = ("search", "differences")


@dataclass
class Labelled:
    """Positions labelled by the search: observations, masks, the search's and ``NET``'s choices.

    ``game[i]`` numbers the game ``obs[i]`` comes from, in the order the games started;
    ``states[i]`` is the position as the compiled engine's record
    (:func:`lama_env.snapshot.from_state` makes it a game again; None when loaded
    from a file saved without them).
    """

    obs: np.ndarray
    mask: np.ndarray
    search: np.ndarray
    prior: np.ndarray
    game: np.ndarray
    games: int
    seconds: float
    states: np.ndarray | None = None


def _search_agent(spec: str, seed: int) -> RolloutPolicy:
    """The search to imitate: a ``search:NET,rollouts=R,...`` spec (the rollout search)."""
    agent = make_agent(spec, seed=seed)
    if not isinstance(agent, RolloutPolicy):
        raise AgentSpecError(f"distil needs a rollout search (search:NET,rollouts=R,...), got {spec}")
    return agent


def search_positions(search: RolloutPolicy, positions: int, *, envs: int = 256, keep: float = 0.5,
                     batch: int = 256, seed: int = 0, rules: RulesConfig | None = None,
                     log: Any = None) -> Labelled:
    """Play ``search.prior``'s self-play games and label ``positions`` of their decisions by ``search``.

    See the module docstring (step 1).  Deterministic for a given ``seed`` (and the search's own).
    """
    rules = rules or RulesConfig()
    policy: LearnedPolicy = search.prior
    n = search.num_players
    rng = np.random.default_rng(seed)
    vg = VectorGame(envs, num_players=n, seed=seed, **rules.to_dict())
    vg.reset()
    episode = np.arange(envs, dtype=np.int64)  # each slot's game number (a new one when it ends)
    next_game = envs
    obs_l: list[np.ndarray] = []
    mask_l: list[np.ndarray] = []
    prior_l: list[np.ndarray] = []
    game_l: list[np.ndarray] = []
    search_l: list[np.ndarray] = []
    state_l: list[np.ndarray] = []
    pending: list[LamaGame] = []
    kept = 0
    t0 = time.perf_counter()

    def label() -> None:
        chosen = [a for a, _ in search.search_many(pending)]
        search_l.append(np.array(chosen, dtype=np.int64))
        pending.clear()
        if log is not None:
            print(f"  labelled {kept:,} positions ({time.perf_counter() - t0:.0f} s)", file=log, flush=True)

    while kept < positions:
        obs, mask = np.asarray(vg.observation), np.asarray(vg.action_mask)
        actions = np.where(mask, policy.logits(obs, mask), -np.inf).argmax(axis=1)
        sel = np.flatnonzero((mask.sum(axis=1) > 1) & (rng.random(envs) < keep))[: positions - kept]
        if len(sel):
            records = vg.state()["games"][sel]
            pending += [from_state(rec, n, rules) for rec in records]
            state_l.append(records)
            obs_l.append(obs[sel].copy())
            mask_l.append(mask[sel].copy())
            prior_l.append(actions[sel].copy())
            game_l.append(episode[sel].copy())
            kept += len(sel)
            if len(pending) >= batch:
                label()
        vg.step(actions)
        ended = np.flatnonzero(vg.terminated)
        episode[ended] = next_game + np.arange(len(ended))
        next_game += len(ended)
    if pending:
        label()
    return Labelled(obs=np.concatenate(obs_l), mask=np.concatenate(mask_l), search=np.concatenate(search_l),
                    prior=np.concatenate(prior_l), game=np.concatenate(game_l), games=int(next_game),
                    seconds=time.perf_counter() - t0, states=np.concatenate(state_l))


def fit(tensors: dict[str, np.ndarray], activation: str, obs: np.ndarray, mask: np.ndarray, target: np.ndarray,
        *, epochs: int = 4, batch: int = 1024, lr: float = 1e-4, seed: int = 0,
        log: Any = None) -> dict[str, np.ndarray]:
    """Fine-tune the MLP ``tensors`` (``NET``'s) on the cross-entropy of ``target`` over the legal actions.

    ``target``: an action per position (``int[B]``), or a distribution over the actions per
    position (``float[B, NUM_ACTIONS]``, zero on the illegal ones).  Returns the new tensors,
    named as in agent files.
    """
    import torch
    from torch.nn import functional as F

    torch.manual_seed(seed)
    model = mlp_model(tensors, activation)
    x_all, m_all = torch.as_tensor(obs), torch.as_tensor(mask)
    y_all = torch.as_tensor(target)

    def loss(j: Any) -> Any:
        z = model(x_all[j]).masked_fill(~m_all[j], -1e9)  # not -inf: a soft target's 0 there adds 0
        return F.cross_entropy(z, y_all[j])

    minibatch_fit(model, loss, len(obs), epochs=epochs, batch=batch, lr=lr, seed=seed, log=log)
    return mlp_tensors(model)


def targets(kind: str, data: Labelled, base: MLP) -> np.ndarray:
    """What the fit imitates (``kind``: one of :data:`TARGETS`).

    ``search``: the search's choice everywhere (an action per position);
    ``differences``: ``NET``'s own distribution where the search keeps ``NET``'s choice and the
    search's choice where it differs (a distribution per position: the network is pulled only
    where the search leaves it).
    """
    if kind == "search":
        return data.search
    logits = np.where(data.mask, base(data.obs), -np.inf)
    p = np.exp(logits - logits.max(axis=1, keepdims=True))
    p /= p.sum(axis=1, keepdims=True)
    differs = np.flatnonzero(data.search != data.prior)
    p[differs] = 0.0
    p[differs, data.search[differs]] = 1.0
    return p.astype(np.float32)


def _data_problem(data: Labelled, inputs: int) -> str | None:
    """What makes loaded positions unfit to train a network reading ``inputs`` observations on (None: nothing)."""
    from lama_env.actions import NUM_ACTIONS

    b = len(data.obs)
    if data.obs.ndim != 2 or data.obs.shape[1] != inputs or data.obs.dtype.kind != "f":
        return f"observations of shape {data.obs.shape} ({data.obs.dtype}), the network reads {inputs} floats"
    if data.mask.shape != (b, NUM_ACTIONS) or data.mask.dtype != np.bool_:
        return f"masks of shape {data.mask.shape} ({data.mask.dtype}), not {b} x {NUM_ACTIONS} booleans"
    for name in ("search", "prior", "game"):
        a = getattr(data, name)
        if a.shape != (b,) or a.dtype.kind not in "iu":
            return f"{name} of shape {a.shape} ({a.dtype}), not {b} integers"
    for name in ("search", "prior"):
        a = getattr(data, name)
        if ((a < 0) | (a >= NUM_ACTIONS)).any() or not data.mask[np.arange(b), np.clip(a, 0, NUM_ACTIONS - 1)].all():
            return f"a {name} action that is not legal at its position"
    return None


def agreement(choice: np.ndarray, search: np.ndarray, prior: np.ndarray) -> dict[str, Any]:
    """How often ``choice`` is the search's: overall, and where the search differs from ``NET``."""
    differs = search != prior
    return {"positions": len(choice), "agree": float(np.mean(choice == search)),
            "search_differs": int(differs.sum()),
            "agree_where_search_differs": float(np.mean(choice[differs] == search[differs])) if differs.any()
            else None}


def main(argv: list[str] | None = None) -> int:
    """Command line: positions, search labels, fit, agreement, agent file (see the module docstring)."""
    from safetensors.numpy import load_file

    from lama_dice.agents.agentfile import CheckpointError, read_description, write_agent_file
    from lama_dice.agents.mlp import MLP
    from lama_dice.agents.ppo import resolve_checkpoint

    argv = list(sys.argv[1:] if argv is None else argv)
    ap = argparse.ArgumentParser(prog="python -m lama_dice.train.distil", description=__doc__.splitlines()[0])
    ap.add_argument("--search", default="search:ppo:2p,rollouts=128,rounds=1,z=2",
                    help="the search to imitate, a search:NET,rollouts=R,... spec (its NET: the network started from)")
    ap.add_argument("--positions", type=int, default=200_000, help="positions labelled by the search")
    ap.add_argument("--envs", type=int, default=256, help="games played at once")
    ap.add_argument("--keep", type=float, default=0.5, help="share of the decisions (with a choice) kept")
    ap.add_argument("--batch", type=int, default=256, help="positions searched together")
    ap.add_argument("--holdout", type=float, default=0.1, help="share of the games held out for the agreement")
    ap.add_argument("--target", choices=TARGETS, default="differences",
                    help="differences (default): NET's own distribution where the search keeps NET's choice, "
                         "the search's choice where it differs; search: the search's choice everywhere")
    ap.add_argument("--epochs", type=int, default=8)
    ap.add_argument("--batch-fit", type=int, default=1024)
    ap.add_argument("--lr", type=float, default=1e-3)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--data", help="save the labelled positions here (.npz), or load them from it if it exists")
    ap.add_argument("--out", required=True, help="the agent file to write (.safetensors)")
    ap.add_argument("--report", help="write the data, fit and agreement figures as JSON here")
    args = ap.parse_args(argv)
    for name in ("positions", "envs", "batch", "epochs", "batch_fit"):
        if getattr(args, name) < 1:
            ap.error(f"--{name.replace('_', '-')} must be a positive integer")
    if not (0 < args.keep <= 1 and 0 < args.holdout < 1 and args.lr > 0):
        ap.error("--keep must lie in (0, 1], --holdout in (0, 1), --lr above 0")
    try:
        search = _search_agent(args.search, args.seed)
    except AgentSpecError as e:
        ap.error(str(e))
    net_spec = args.search.split(":", 1)[1].split(",", 1)[0]  # search:ppo:2p,... -> ppo:2p
    try:
        net_path = resolve_checkpoint(net_spec.split(":", 1)[1])
    except CheckpointError as e:
        ap.error(str(e))
    if net_path.suffix != ".safetensors":
        ap.error(f"distil starts from an agent file (.safetensors; lama-dice export makes one), got {net_path}")
    base = read_description(net_path)
    base_tensors = load_file(str(net_path))
    t0 = time.perf_counter()
    if args.data and Path(args.data).exists():
        try:
            z = np.load(args.data, allow_pickle=False)  # data, never code
            data = Labelled(obs=z["obs"], mask=z["mask"], search=z["search"], prior=z["prior"], game=z["game"],
                            games=int(z["games"]), seconds=float(z["seconds"]),
                            states=z["states"] if "states" in z.files else None)
        except (OSError, KeyError, ValueError) as e:
            ap.error(f"--data {args.data} is not a file of labelled positions this command wrote: {e}")
        problem = _data_problem(data, base["network"]["inputs"])
        if problem:
            ap.error(f"--data {args.data} does not fit {net_spec}: {problem}")
        print(f"positions: {len(data.obs):,} loaded from {args.data}", flush=True)
    else:
        print(f"positions: {args.positions:,} of {net_spec}'s self-play, labelled by {args.search}", flush=True)
        data = search_positions(search, args.positions, envs=args.envs, keep=args.keep, batch=args.batch,
                                seed=args.seed, log=sys.stdout)
        if args.data:
            arrays: dict[str, Any] = {"obs": data.obs, "mask": data.mask, "search": data.search, "prior": data.prior,
                                      "game": data.game, "games": data.games, "seconds": data.seconds}
            if data.states is not None:
                arrays["states"] = data.states
            with atomic_path(args.data) as tmp, open(tmp, "wb") as fh:  # a file: NumPy adds no .npz
                np.savez_compressed(fh, **arrays)
    cut = np.quantile(data.game, 1 - args.holdout)
    train_sel, test_sel = data.game < cut, data.game >= cut
    if not train_sel.any() or not test_sel.any():
        ap.error(f"{len(data.obs):,} positions from {len(np.unique(data.game))} game(s) cannot be split into "
                 f"trained and held-out games (--holdout {args.holdout}): ask for more --positions")
    print(f"positions: {len(data.obs):,} ({data.seconds:.0f} s), the search differs from {net_spec} at "
          f"{np.mean(data.search != data.prior):.2%}; {int(test_sel.sum()):,} held out", flush=True)
    t1 = time.perf_counter()
    base_mlp = MLP(base["network"], base_tensors)
    target = targets(args.target, data, base_mlp)
    tensors = fit(base_tensors, base["network"]["activation"], data.obs[train_sel], data.mask[train_sel],
                  target[train_sel], epochs=args.epochs, batch=args.batch_fit, lr=args.lr, seed=args.seed,
                  log=sys.stdout)
    fit_seconds = time.perf_counter() - t1
    new = MLP(base["network"], tensors)
    test = np.flatnonzero(test_sel)
    choice = np.where(data.mask[test], new(data.obs[test]), -np.inf).argmax(axis=1)
    agree = agreement(choice, data.search[test], data.prior[test])
    before = agreement(data.prior[test], data.search[test], data.prior[test])
    description = {k: v for k, v in base.items() if k != "training"}
    training = {"algorithm": "distillation of a search (expert iteration): cross-entropy of the search's choice",
                "command": "python -m lama_dice.train.distil " + " ".join(argv),
                "search": args.search, "init_from": net_spec, "target": args.target, "positions": int(train_sel.sum()),
                "games": data.games, "heldout_positions": int(test_sel.sum()), "keep": args.keep,
                "epochs": args.epochs, "batch": args.batch_fit, "lr": args.lr, "seed": args.seed,
                "search_seconds": round(data.seconds, 1), "fit_seconds": round(fit_seconds, 1),
                "search_differs": round(float(np.mean(data.search != data.prior)), 5),
                "heldout_agree": round(agree["agree"], 5),
                "heldout_agree_where_search_differs": agree["agree_where_search_differs"],
                "heldout_agree_before": round(before["agree"], 5)}
    description["training"] = training
    write_agent_file(args.out, description, tensors)
    print(f"held out: agrees with the search at {agree['agree']:.2%} ({net_spec}: {before['agree']:.2%}); "
          f"where the search differs from {net_spec}: {agree['agree_where_search_differs'] or 0:.2%}; "
          f"wrote {args.out} ({time.perf_counter() - t0:.0f} s)", flush=True)
    if args.report:
        write_text(args.report, json.dumps({"training": training, "agreement": agree}, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
