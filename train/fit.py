"""The minibatch loop that fits the project's small MLPs (value networks, distilled policies), on torch.

:func:`minibatch_fit` is Adam with cosine decay over shuffled minibatches, one torch thread;
:func:`mlp_tensors` turns the fitted ``torch.nn.Sequential`` back into the tensors of an agent or
value file (``hidden.I.weight``..., ``logits.weight``, ``logits.bias``, float32 NumPy arrays).
Callers build the model (seeding torch first) and give the loss of a minibatch.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np


def minibatch_fit(model: Any, loss: Callable[[Any], Any], n: int, *, epochs: int, batch: int, lr: float, seed: int,
                  log: Any = None) -> None:
    """Train ``model`` in place: ``epochs`` passes over ``n`` examples in shuffled minibatches of ``batch``.

    ``loss(j)`` is the mean loss of the examples ``j`` (a tensor of their indices); Adam at
    learning rate ``lr`` with cosine decay to 0 over all the steps; the shuffles drawn from
    ``seed``; one line per epoch on ``log`` (the mean loss).  Runs on one torch thread (on a busy
    machine torch's intra-op threads cost far more than they save on networks this small).
    """
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        opt = torch.optim.Adam(model.parameters(), lr=lr)
        steps = epochs * ((n + batch - 1) // batch)
        sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, max(steps, 1))
        gen = torch.Generator().manual_seed(seed)
        for epoch in range(epochs):
            perm = torch.randperm(n, generator=gen)
            total = 0.0
            for i in range(0, n, batch):
                j = perm[i:i + batch]
                value = loss(j)
                opt.zero_grad()
                value.backward()
                opt.step()
                sched.step()
                total += float(value.detach()) * len(j)
            if log is not None:
                print(f"  fit: epoch {epoch + 1}/{epochs}, cross-entropy {total / n:.4f}", file=log, flush=True)
    finally:
        torch.set_num_threads(threads)


def mlp_model(tensors: dict[str, np.ndarray], activation: str) -> Any:
    """A ``torch.nn.Sequential`` MLP holding copies of ``tensors`` (named as in agent and value files).

    ``activation`` (``tanh``, ``relu``, ``elu``, ``leaky_relu``) follows every hidden layer; the
    inverse of :func:`mlp_tensors`.  What a fine-tuning starts from (a network's own weights).
    """
    import torch

    hidden = sorted({int(k.split(".")[1]) for k in tensors if k.startswith("hidden.")})
    act = {"tanh": torch.nn.Tanh, "relu": torch.nn.ReLU, "elu": torch.nn.ELU,
           "leaky_relu": torch.nn.LeakyReLU}[activation]
    layers: list[Any] = []
    for name in [f"hidden.{i}" for i in hidden] + ["logits"]:
        w = tensors[f"{name}.weight"]
        lin = torch.nn.Linear(w.shape[1], w.shape[0])
        lin.weight.data = torch.as_tensor(np.array(w, dtype=np.float32))
        lin.bias.data = torch.as_tensor(np.array(tensors[f"{name}.bias"], dtype=np.float32))
        layers += [lin, act()] if name != "logits" else [lin]
    return torch.nn.Sequential(*layers)


def mlp_tensors(model: Any) -> dict[str, np.ndarray]:
    """The tensors of ``model``'s linear layers, named as in agent and value files (the last one ``logits``)."""
    import torch

    linears = [m for m in model if isinstance(m, torch.nn.Linear)]
    out: dict[str, np.ndarray] = {}
    for i, m in enumerate(linears[:-1]):
        out[f"hidden.{i}.weight"] = m.weight.detach().numpy().astype(np.float32)
        out[f"hidden.{i}.bias"] = m.bias.detach().numpy().astype(np.float32)
    out["logits.weight"] = linears[-1].weight.detach().numpy().astype(np.float32)
    out["logits.bias"] = linears[-1].bias.detach().numpy().astype(np.float32)
    return out
