"""Train a value network on self-play: each seat's chance to win from a state.

    python -m lama_dice.train.value --players 2 --games 60000 --out agents/pretrained/value_2p.safetensors

The steps, in order:

1. **Self-play** (:func:`selfplay_positions`): ``--envs`` games at a time in the vector game
   (:class:`lama_env.vector.VectorGame`), every seat played by ``--agent`` (default the shipped
   ``ppo:Np``) with one batched forward pass per step; a share ``--explore`` of the decisions
   is a uniformly random legal action instead of the policy's most likely one, so that the
   data hold states the policy itself would not reach (a search asks the value of every
   choice, the policy's or not: the first value network, trained with 3% of the decisions
   sampled from the policy's own distribution, valued quitting far too well, as ``ppo:2p``
   almost never quits where the search asked).  Each decision is kept with probability
   ``--keep`` (fewer, less correlated positions per game), seen from the player to act.  Once a
   game ends, its kept positions get their targets: each seat's share of the win (1 for the
   sole winner, 1/k each for k tied winners), in the observation's seat order.
2. **Held-out games**: the last ``--holdout`` share of the finished games (by game, not by
   position, so that no held-out game is also trained on) is kept apart.
3. **Fit** (:func:`fit`): an MLP (``--hidden``, ReLU) with a softmax over the seats,
   trained with Adam on the cross-entropy of the win shares (a proper score: its minimiser is
   the chance to win), ``--epochs`` passes in minibatches of ``--batch``.
4. **Calibration** (:func:`calibration`): on the held-out positions, the Brier score of the
   player to act's predicted chance to win against whether that player won (and of the
   constant 1/N, for scale), the log loss, and a reliability table (predictions in ten bins:
   the mean prediction beside the observed win share); ``--plot`` draws it.
5. **The file**: a value file (:mod:`lama_dice.agents.value`) with the data, fit and
   calibration figures (the reliability table included) in its ``training`` description;
   ``--report`` writes them as JSON.

``python -m lama_dice.train.value plot OUT.png 2p 4p`` draws the reliability tables of value
networks (files or shipped names) as one plot.
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
import time
from dataclasses import dataclass
from typing import Any

import numpy as np

from lama_dice.agents.learned import LearnedPolicy, observation_fingerprint
from lama_dice.agents.registry import make_agent
from lama_dice.atomic import atomic_path, write_text
from lama_dice.train.fit import minibatch_fit, mlp_model, mlp_tensors
from lama_env.observation import observation_size
from lama_env.rules import RulesConfig, win_shares_of_games
from lama_env.vector import VectorGame


@dataclass
class Positions:
    """Self-play positions: observations (seen from the player to act) and the seats' win shares.

    ``target[i, k]`` is the share of the win of the ``k``-th seat of ``obs[i]``'s order
    (the player to act first); ``game[i]`` numbers the game the position comes from.
    """

    obs: np.ndarray
    target: np.ndarray
    game: np.ndarray
    games: int
    decisions: int
    seconds: float


def selfplay_positions(num_players: int, agent: str, games: int, *, envs: int = 1024, explore: float = 0.05,
                       keep: float = 0.25, seed: int = 0, rules: RulesConfig | None = None,
                       log: Any = None) -> Positions:
    """Play ``games`` self-play games of ``agent`` (a ``ppo:`` spec) and return their kept positions.

    See the module docstring (step 1).  Deterministic for a given ``seed``.
    """
    rules = rules or RulesConfig()
    policy = make_agent(agent, seed=seed)
    if not isinstance(policy, LearnedPolicy):
        raise ValueError(f"the self-play agent must be a policy network (ppo:...), got {agent}")
    policy.check_compatible(num_players)
    rng = np.random.default_rng(seed)
    vg = VectorGame(envs, num_players=num_players, seed=seed, **rules.to_dict())
    vg.reset()
    n = num_players
    rot = (np.arange(n)[None, :] + np.arange(n)[:, None]) % n  # rot[p, k]: seat k places after p
    episode = np.zeros(envs, dtype=np.int64)
    kept_obs: list[np.ndarray] = []
    kept_key: list[np.ndarray] = []  # episode * envs + slot
    kept_seat: list[np.ndarray] = []
    done_key: list[np.ndarray] = []
    done_share: list[np.ndarray] = []
    finished = decisions = 0
    t0 = time.perf_counter()
    while finished < games:
        obs, mask, seat = vg.observation, vg.action_mask, vg.current_player
        sel = rng.random(envs) < keep
        if sel.any():
            kept_obs.append(obs[sel].copy())
            kept_key.append(episode[sel] * envs + np.flatnonzero(sel))
            kept_seat.append(seat[sel].copy())
        z = np.where(mask, policy.logits(np.array(obs), mask), -np.inf)
        actions = z.argmax(axis=1)
        wild = rng.random(envs) < explore
        if wild.any():  # a uniformly random legal action
            actions[wild] = np.where(mask[wild], rng.random((int(wild.sum()), mask.shape[1])), -1.0).argmax(axis=1)
        vg.step(actions)
        decisions += envs
        ended = vg.terminated  # no max_rounds: every game ends
        if ended.any():
            slots = np.flatnonzero(ended)
            done_key.append(episode[slots] * envs + slots)
            done_share.append(win_shares_of_games(vg.final_totals[slots]).astype(np.float32))
            episode[slots] += 1
            finished += len(slots)
            if log is not None and finished // 5000 != (finished - len(slots)) // 5000:
                print(f"  self-play: {finished:,} games, {decisions:,} decisions, "
                      f"{time.perf_counter() - t0:.0f} s", file=log, flush=True)
    keys = np.concatenate(done_key)
    shares = np.concatenate(done_share)
    order = np.argsort(keys)
    keys, shares = keys[order], shares[order]
    all_keys = np.concatenate(kept_key)
    idx = np.searchsorted(keys, all_keys)
    idx_c = np.minimum(idx, len(keys) - 1)
    ok = (idx < len(keys)) & (keys[idx_c] == all_keys)
    seats = np.concatenate(kept_seat)[ok]
    target = shares[idx_c[ok]][np.arange(ok.sum())[:, None], rot[seats]]
    # number the games in the order they finished (held-out games are the last ones)
    game_no = np.empty(len(keys), dtype=np.int64)
    game_no[order] = np.arange(len(keys))
    return Positions(obs=np.concatenate(kept_obs)[ok], target=target,
                     game=game_no[idx_c[ok]], games=len(keys), decisions=decisions,
                     seconds=time.perf_counter() - t0)


def fit(obs: np.ndarray, target: np.ndarray, hidden: list[int], *, epochs: int = 4, batch: int = 4096,
        lr: float = 1e-3, seed: int = 0, log: Any = None,
        init: dict[str, np.ndarray] | None = None) -> dict[str, np.ndarray]:
    """Fit an MLP (ReLU, softmax over the seats) to the win shares; return its tensors as NumPy arrays.

    The tensors are named as in value files (``hidden.I.weight``..., ``logits.weight``, ``logits.bias``).
    ``init``: start from these tensors (a value network's, whose layers then replace ``hidden``)
    instead of fresh weights.
    """
    import torch
    from torch.nn import functional as F

    torch.manual_seed(seed)
    if init is not None:
        model = mlp_model(init, "relu")
    else:
        sizes = [obs.shape[1], *hidden]
        layers: list[Any] = []
        for a, b in itertools.pairwise(sizes):
            layers += [torch.nn.Linear(a, b), torch.nn.ReLU()]
        layers.append(torch.nn.Linear(sizes[-1], target.shape[1]))
        model = torch.nn.Sequential(*layers)
    x_all = torch.as_tensor(obs)
    y_all = torch.as_tensor(target)

    def loss(j: Any) -> Any:
        return -(y_all[j] * F.log_softmax(model(x_all[j]), dim=1)).sum(dim=1).mean()

    minibatch_fit(model, loss, len(obs), epochs=epochs, batch=batch, lr=lr, seed=seed, log=log)
    return mlp_tensors(model)


def calibration(pred: np.ndarray, target: np.ndarray, bins: int = 10) -> dict[str, Any]:
    """Calibration of the player to act's chance to win (column 0) on held-out positions.

    Returns the Brier score (mean squared error of the prediction against the win share),
    that of always predicting 1/N, the log loss over the seats, and the reliability
    table: per bin of predictions, how many, their mean and the observed mean win share.
    """
    p, y = pred[:, 0].astype(np.float64), target[:, 0].astype(np.float64)
    n = target.shape[1]
    edges = np.linspace(0.0, 1.0, bins + 1)
    which = np.clip(np.digitize(p, edges) - 1, 0, bins - 1)
    table = []
    for b in range(bins):
        m = which == b
        if m.any():
            table.append({"low": float(edges[b]), "high": float(edges[b + 1]), "count": int(m.sum()),
                          "predicted": float(p[m].mean()), "observed": float(y[m].mean())})
    return {"positions": len(p), "brier": float(np.mean((p - y) ** 2)),
            "brier_constant": float(np.mean((1.0 / n - y) ** 2)),
            "log_loss": float(-(target * np.log(np.clip(pred, 1e-7, 1.0))).sum(axis=1).mean()),
            "reliability": table}


def plot_reliability(reports: dict[str, dict[str, Any]], out: str) -> None:
    """Draw the reliability tables of :func:`calibration` (one line per network) to ``out`` (a PNG)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(4.6, 4.2), dpi=110)
    ax.plot([0, 1], [0, 1], color="0.7", lw=1, ls="--", label="perfect calibration")
    for name, rep in reports.items():
        t = rep["reliability"]
        ax.plot([r["predicted"] for r in t], [r["observed"] for r in t], marker="o", ms=4,
                label=f"{name} (Brier {rep['brier']:.3f})")
    ax.set_xlabel("predicted chance to win (player to act)")
    ax.set_ylabel("observed win share")
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1)
    ax.set_title("Value networks on held-out self-play games", fontsize=9)
    ax.legend(fontsize=7, loc="upper left")
    fig.tight_layout()
    with atomic_path(out) as tmp:
        fig.savefig(tmp)
    plt.close(fig)


def plot_command(argv: list[str]) -> int:
    """``python -m lama_dice.train.value plot OUT.png NET...``: the reliability plot of value networks.

    Each ``NET`` is a value file or a shipped name (``2p``); its reliability table is the
    one in its description (``training.reliability``, measured on its held-out games).
    """
    from lama_dice.agents.value import load_value

    ap = argparse.ArgumentParser(prog="python -m lama_dice.train.value plot", description=plot_command.__doc__)
    ap.add_argument("out")
    ap.add_argument("nets", nargs="+")
    args = ap.parse_args(argv)
    reports = {}
    for name in args.nets:
        training = load_value(name).description.get("training", {})
        if "reliability" not in training:
            ap.error(f"value network {name} has no reliability table in its description")
        reports[f"value:{name}" if "/" not in name else name] = training
    plot_reliability(reports, args.out)
    print(f"wrote {args.out}")
    return 0


def main(argv: list[str] | None = None) -> int:
    """Command line: self-play, fit, calibration, value file (see the module docstring); ``plot``: the plot."""
    from lama_dice.agents.value import HEAD, ValueNet, write_value_file

    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["plot"]:
        return plot_command(argv[1:])

    ap = argparse.ArgumentParser(prog="python -m lama_dice.train.value", description=__doc__.splitlines()[0])
    ap.add_argument("--players", type=int, default=2)
    ap.add_argument("--agent", help="the self-play policy (default: the shipped ppo:Np)")
    ap.add_argument("--games", type=int, default=40_000, help="self-play games (default 40,000)")
    ap.add_argument("--envs", type=int, default=1024, help="games played at once")
    ap.add_argument("--explore", type=float, default=0.05, help="share of decisions played uniformly at random")
    ap.add_argument("--keep", type=float, default=0.25, help="share of decisions kept as positions")
    ap.add_argument("--holdout", type=float, default=0.1, help="share of the games held out for calibration")
    ap.add_argument("--hidden", default="256,256", help="hidden layer sizes, comma-separated")
    ap.add_argument("--epochs", type=int, default=4)
    ap.add_argument("--batch", type=int, default=4096)
    ap.add_argument("--lr", type=float, default=1e-3)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", required=True, help="the value file to write (.safetensors)")
    ap.add_argument("--report", help="write the data, fit and calibration figures as JSON here")
    args = ap.parse_args(argv)
    if not 2 <= args.players <= 6:
        ap.error("--players must be 2..6 (solo has no winner to predict)")
    for name in ("games", "envs", "epochs", "batch"):
        if getattr(args, name) < 1:
            ap.error(f"--{name} must be a positive integer")
    if not (0 <= args.explore <= 1 and 0 < args.keep <= 1 and 0 < args.holdout < 1 and args.lr > 0):
        ap.error("--explore must lie in [0, 1], --keep in (0, 1], --holdout in (0, 1), --lr above 0")
    try:
        hidden = [int(h) for h in args.hidden.split(",")]
    except ValueError:
        ap.error(f"--hidden must be comma-separated integers, got {args.hidden!r}")
    if not hidden or min(hidden) < 1:
        ap.error("--hidden sizes must be positive")
    agent = args.agent or f"ppo:{args.players}p"
    t0 = time.perf_counter()
    print(f"self-play: {args.games:,} games of {agent} ({args.players} players)", flush=True)
    pos = selfplay_positions(args.players, agent, args.games, envs=args.envs, explore=args.explore,
                             keep=args.keep, seed=args.seed, log=sys.stdout)
    cut = int(pos.games * (1 - args.holdout))
    train_sel, test_sel = pos.game < cut, pos.game >= cut
    print(f"positions: {len(pos.obs):,} from {pos.games:,} games ({pos.seconds:.0f} s); "
          f"{int(test_sel.sum()):,} held out", flush=True)
    t1 = time.perf_counter()
    tensors = fit(pos.obs[train_sel], pos.target[train_sel], hidden, epochs=args.epochs, batch=args.batch,
                  lr=args.lr, seed=args.seed, log=sys.stdout)
    fit_seconds = time.perf_counter() - t1
    description: dict[str, Any] = {
        "num_players": args.players,
        "rules": RulesConfig().to_dict(),
        "observation": {"size": observation_size(args.players), "layout": observation_fingerprint(args.players)},
        "network": {"kind": "mlp", "inputs": observation_size(args.players), "hidden": hidden,
                    "activation": "relu", "outputs": args.players},
        "head": HEAD,
    }
    net = ValueNet(description, tensors)
    cal = calibration(net.win_probabilities(pos.obs[test_sel]), pos.target[test_sel])
    training = {"algorithm": "win-share regression (softmax cross-entropy) on self-play",
                "command": "python -m lama_dice.train.value " + " ".join(argv),
                "agent": agent, "games": pos.games, "decisions": pos.decisions,
                "positions": int(train_sel.sum()), "heldout_games": pos.games - cut,
                "heldout_positions": int(test_sel.sum()), "explore": args.explore, "keep": args.keep,
                "epochs": args.epochs, "batch": args.batch, "lr": args.lr, "seed": args.seed,
                "selfplay_seconds": round(pos.seconds, 1), "fit_seconds": round(fit_seconds, 1),
                "brier": round(cal["brier"], 5), "brier_constant": round(cal["brier_constant"], 5),
                "log_loss": round(cal["log_loss"], 5),
                "reliability": [{k: round(v, 5) if isinstance(v, float) else v for k, v in row.items()}
                                for row in cal["reliability"]]}
    description["training"] = training
    write_value_file(args.out, description, tensors)
    print(f"held out: Brier {cal['brier']:.4f} (constant 1/N: {cal['brier_constant']:.4f}), "
          f"log loss {cal['log_loss']:.4f}; wrote {args.out} ({time.perf_counter() - t0:.0f} s)", flush=True)
    if args.report:
        write_text(args.report, json.dumps({"training": training, "calibration": cal}, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
