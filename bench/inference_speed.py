"""Agent files on NumPy beside the same network on torch, in evaluation (``python -m lama_dice.bench.inference_speed``).

The shipped agents run on NumPy (:class:`lama_dice.agents.mlp.MLP`) since the core install has no
torch; before, they ran on a torch ``Sequential`` (one torch thread).  This plays the same
evaluation, ``ppo:NAME`` against ``random`` (seats rotating, batched inference: one forward pass
per wave of games), with each of the two forward passes, alternately (A, B, A, B...) so that
both see the same load, and reports games per second, the median paired ratio, and whether the
two played the same games (the same actions, so the same results).  It also times the bare
forward pass on batches of several sizes, alternately in slices (medians, and the median of the
ratios of adjacent slices).  Needs torch (the ``train`` extra) for the torch side.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from typing import Any

import numpy as np

from .install_size import emit_json, progress
from .measure import alternate, load_average, paired_ratio, summary, timed

#: Batch sizes of the bare forward-pass timing.
BATCHES = (1, 64, 256, 1024)
#: Alternating slices per batch size of the forward-pass timing (medians over them).
FORWARD_SLICES = 15


def torch_actor(mlp: Any) -> Any:
    """The torch path the agent files ran on before: a ``Sequential`` of the same weights, on one torch thread."""
    import torch

    from lama_dice.agents.agentfile import MLPActor

    net = mlp.network
    act = {"tanh": torch.nn.Tanh, "relu": torch.nn.ReLU, "elu": torch.nn.ELU, "leaky_relu": torch.nn.LeakyReLU}
    sizes = [net["inputs"], *net["hidden"], net["outputs"]]
    layers: list[Any] = []
    tensors = mlp.tensors()
    names = [f"hidden.{i}" for i in range(len(net["hidden"]))] + ["logits"]
    for i, name in enumerate(names):
        lin = torch.nn.Linear(sizes[i], sizes[i + 1])
        with torch.no_grad():
            lin.weight.copy_(torch.from_numpy(tensors[f"{name}.weight"]))
            lin.bias.copy_(torch.from_numpy(tensors[f"{name}.bias"]))
        layers.append(lin)
        if name != "logits":
            layers.append(act[net["activation"]]())
    return MLPActor(torch.nn.Sequential(*layers).eval())


def measure(agent: str = "2p", games: int = 2000, repeats: int = 5, seed: int = 0,
            log: Any = None) -> dict[str, Any]:
    """Games/s of ``ppo:AGENT`` vs ``random`` with the NumPy and the torch forward pass; forward-pass times."""
    from lama_dice.agents.ppo import PPOPolicy
    from lama_dice.evaluation import evaluate

    numpy_agent = PPOPolicy(agent)
    torch_agent = PPOPolicy(agent)
    torch_agent._actor = torch_actor(numpy_agent._actor)
    players = numpy_agent.num_players
    opponents = ["random"] * (players - 1)
    results: dict[str, Any] = {}

    def contender(name: str, policy: PPOPolicy) -> Any:
        def go(_i: int) -> Any:
            def play() -> dict:
                res = evaluate([policy, *opponents], num_players=players, games=games, seed=seed)
                results[name] = json.dumps(res.to_json(), sort_keys=True)  # no timings in it
                return {}
            return timed(games, play)
        return go

    evaluate([numpy_agent, *opponents], num_players=players, games=2 * players, seed=seed)  # compile, warm up
    evaluate([torch_agent, *opponents], num_players=players, games=2 * players, seed=seed)
    samples = alternate({"numpy": contender("numpy", numpy_agent), "torch": contender("torch", torch_agent)},
                        repeats, log=log)
    same = results["numpy"] == results["torch"]
    obs = np.random.default_rng(seed).random((max(BATCHES), numpy_agent._actor.inputs), dtype=np.float32)
    forward = {}
    actors = {"numpy": numpy_agent._actor, "torch": torch_agent._actor}
    for b in BATCHES:
        x = obs[:b]
        reps = max(5, 2_000 // b)  # calls per slice; slices alternate between the two (A, B, A, B...)
        times: dict[str, list[float]] = {"numpy": [], "torch": []}
        for actor in actors.values():
            actor.logits(x)
        for _ in range(FORWARD_SLICES):
            for name, actor in actors.items():
                t = time.perf_counter()
                for _ in range(reps):
                    actor.logits(x)
                times[name].append((time.perf_counter() - t) / reps * 1e6)
        forward[str(b)] = {"numpy_us": statistics.median(times["numpy"]), "torch_us": statistics.median(times["torch"]),
                           "numpy_over_torch": statistics.median(
                               t / n for n, t in zip(times["numpy"], times["torch"], strict=True))}
    return {"agent": f"ppo:{agent}", "opponents": opponents, "games": games, "repeats": repeats,
            "numpy": summary(samples["numpy"], "games"), "torch": summary(samples["torch"], "games"),
            "numpy_over_torch": paired_ratio(samples["numpy"], samples["torch"]),
            "same_results": same, "forward_us": forward, "load_average": load_average()}


def main(argv: list[str] | None = None) -> int:
    """Print the measurement as one JSON document."""
    ap = argparse.ArgumentParser(prog="python -m lama_dice.bench.inference_speed", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--agent", default="2p", help="a shipped agent's name or an agent file (default 2p)")
    ap.add_argument("--games", type=int, default=2000)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--json", default=None, metavar="OUT", help="also write the JSON to OUT")
    args = ap.parse_args(argv)
    emit_json(measure(args.agent, args.games, args.repeats, log=progress), args.json)
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
