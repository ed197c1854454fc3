"""The forward pass of a policy or value MLP in NumPy: what agent files run on, with no torch installed.

An :class:`MLP` is the network an agent file describes (:mod:`lama_dice.agents.agentfile`):
``hidden`` linear layers, each followed by one ``activation`` (``tanh``, ``relu``, ``elu``,
``leaky_relu``, at torch's default settings), then a linear layer to ``outputs``.  Its weights
are float32 arrays in torch's ``[out, in]`` layout, named ``hidden.I.weight``, ``hidden.I.bias``,
``logits.weight``, ``logits.bias``; the forward pass computes, as ``torch.nn.Linear`` does,
``x @ weight.T + bias`` in float32::

    from lama_dice.agents.mlp import MLP
    net = MLP(description["network"], tensors)      # tensors: name -> float32 NumPy array
    logits = net(obs)                                # obs: [B, inputs] float32 -> [B, outputs] float32

Its results equal torch's to float32 rounding (a few units in the last place); an agent plays
the legal action of largest logit, the lowest action index among exact ties
(:meth:`lama_dice.agents.learned.LearnedPolicy.act_batch`), so that torch and NumPy play the
same moves except where two logits lie within that rounding of each other.  Other modules
that need a fast forward pass on a batch of observations (value networks, search) use this class.

The matrix products run on one BLAS thread (the caller's setting is restored after each
pass, with :mod:`threadpoolctl`): a network this small on a few hundred observations is
fastest so, and several BLAS threads per evaluation worker on a busy machine are many
times slower (torch's path set one torch thread for the same reason).  :meth:`MLP.invariant`,
what the searches call, runs its products in compiled loops instead, so that a row's outputs
are the same bits in any batch (BLAS's are not).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any

import numpy as np

__all__ = ["ACTIVATIONS", "MLP", "tensor_shapes"]


def _elu(x: np.ndarray) -> np.ndarray:
    return np.where(x > 0, x, np.expm1(np.minimum(x, 0), dtype=np.float32))


def _relu(x: np.ndarray) -> np.ndarray:
    return np.maximum(x, np.float32(0), out=x)


def _leaky_relu(x: np.ndarray) -> np.ndarray:
    return np.where(x > 0, x, x * np.float32(0.01))


def _tanh(x: np.ndarray) -> np.ndarray:
    return np.tanh(x, out=x)


#: Hidden-layer activations by name (torch's defaults: ELU alpha 1, LeakyReLU slope 0.01).
ACTIVATIONS: dict[str, Callable[[np.ndarray], np.ndarray]] = {
    "tanh": _tanh, "relu": _relu, "elu": _elu, "leaky_relu": _leaky_relu,
}


_BLAS: list[Any] | None = None


@contextmanager
def _one_blas_thread() -> Iterator[None]:
    """Run the matrix products on one BLAS thread; restore the caller's setting afterwards."""
    blas = _blas()
    saved = [c.num_threads for c in blas]
    for c, n in zip(blas, saved, strict=True):
        if n != 1:
            c.set_num_threads(1)
    try:
        yield
    finally:
        for c, n in zip(blas, saved, strict=True):
            if n != 1:
                c.set_num_threads(n)


def _blas() -> list[Any]:
    """The BLAS libraries loaded (NumPy's), as threadpoolctl's controllers, found once."""
    global _BLAS
    if _BLAS is None:
        try:
            from threadpoolctl import ThreadpoolController

            _BLAS = [c for c in ThreadpoolController().lib_controllers if c.user_api == "blas"]
        except Exception:  # threadpoolctl missing or unable to read a library: leave the threads as they are
            _BLAS = []
    return _BLAS


def tensor_shapes(net: Mapping[str, Any]) -> dict[str, tuple[int, ...]]:
    """The tensor names and shapes of the MLP ``net`` describes (torch's ``[out, in]`` weights)."""
    sizes = [net["inputs"], *net["hidden"]]
    shapes: dict[str, tuple[int, ...]] = {}
    for i, (a, b) in enumerate(itertools.pairwise(sizes)):
        shapes[f"hidden.{i}.weight"] = (b, a)
        shapes[f"hidden.{i}.bias"] = (b,)
    shapes["logits.weight"] = (net["outputs"], sizes[-1])
    shapes["logits.bias"] = (net["outputs"],)
    return shapes


class MLP:
    """An MLP's forward pass on float32 NumPy arrays.

    Args:
        network: the description (``inputs``, ``hidden``, ``activation``, ``outputs``), already checked
            (:func:`lama_dice.agents.agentfile.check_network`).
        tensors: the weights by name (:func:`tensor_shapes`), as arrays of exactly those shapes;
            anything with ``__array__`` (a torch tensor on the CPU) is converted.

    Raises:
        ValueError: a tensor is missing or has another shape (the loaders check first and say which file).
    """

    def __init__(self, network: Mapping[str, Any], tensors: Mapping[str, Any]) -> None:
        """Copy ``tensors`` into the layers of ``network`` (see the class docstring)."""
        self.network = dict(network)
        self.activation = ACTIVATIONS[self.network["activation"]]
        self.layers: list[tuple[np.ndarray, np.ndarray]] = []
        names = [f"hidden.{i}" for i in range(len(self.network["hidden"]))] + ["logits"]
        shapes = tensor_shapes(self.network)
        for name in names:
            w = np.array(tensors[f"{name}.weight"], dtype=np.float32)
            b = np.array(tensors[f"{name}.bias"], dtype=np.float32)
            if w.shape != shapes[f"{name}.weight"] or b.shape != shapes[f"{name}.bias"]:
                raise ValueError(f"{name}: weight {w.shape} and bias {b.shape}, the network needs "
                                 f"{shapes[f'{name}.weight']} and {shapes[f'{name}.bias']}")
            # stored transposed (C-contiguous [in, out]): x @ w_t is one row-major matrix product
            self.layers.append((np.ascontiguousarray(w.T), b))

    @property
    def inputs(self) -> int:
        """The observation size the network reads."""
        return int(self.network["inputs"])

    @property
    def outputs(self) -> int:
        """The number of outputs (action logits)."""
        return int(self.network["outputs"])

    def __call__(self, obs: np.ndarray) -> np.ndarray:
        """The outputs for a batch ``[B, inputs]`` (or one observation ``[inputs]``) as float32."""
        with _one_blas_thread():
            return self._forward(np.asarray(obs, dtype=np.float32))

    def invariant(self, obs: np.ndarray) -> np.ndarray:
        """:meth:`__call__`, each row's outputs a function of that row alone: the same bits in any batch.

        BLAS picks its kernels by the shape of a product, and computes a row differently
        depending on its place among the rows of a product, whatever the other rows hold
        (OpenBLAS here: a row's last bits at rows 0-5 of a product of 32 differ from its bits
        at rows 6-11), so no blocking of the rows makes a row's float32 sums its own.  Here the
        products run in compiled loops instead (:func:`lama_dice.agents._mlp_kernel.affine`, no
        BLAS): each output is the sum of its row's products in a fixed order, then the bias,
        every operation rounded to float32 as written (no fastmath), and the activations are
        elementwise (NumPy).  So the outputs of an observation are the same bits whatever rows,
        and however many, are batched with it, on any machine and BLAS: what a search that must
        decide alike whatever games are batched with it calls (:mod:`lama_dice.agents.search`,
        :mod:`lama_dice.agents.rollout`, ``tests/test_mlp.py``).  The results equal
        :meth:`__call__`'s to float32 rounding.  Faster than BLAS on a few rows, 1.0-1.5 times
        its time on hundreds (docs/agents-and-evaluation.md); the first call in a process
        imports Numba and loads the kernel from its cache (compiled once, about a second).
        """
        from ._mlp_kernel import affine

        x = np.ascontiguousarray(obs, dtype=np.float32)
        single = x.ndim == 1
        x = x.reshape(-1, x.shape[-1])
        if not x.flags.writeable:  # a read-only array would be another type for Numba: one more compile
            x = x.copy()
        *hidden, (w_out, b_out) = self.layers
        for w, b in hidden:
            x = np.ascontiguousarray(self.activation(affine(x, w, b)))
        out = affine(x, w_out, b_out)
        return out[0] if single else out

    def _forward(self, x: np.ndarray) -> np.ndarray:
        *hidden, (w_out, b_out) = self.layers
        for w, b in hidden:
            x = self.activation(np.add(x @ w, b, dtype=np.float32))
        return np.add(x @ w_out, b_out, dtype=np.float32)

    def tensors(self) -> dict[str, np.ndarray]:
        """The weights by agent-file name, in torch's ``[out, in]`` layout (copies)."""
        names = [f"hidden.{i}" for i in range(len(self.network["hidden"]))] + ["logits"]
        out: dict[str, np.ndarray] = {}
        for name, (w_t, b) in zip(names, self.layers, strict=True):
            out[f"{name}.weight"] = np.ascontiguousarray(w_t.T)
            out[f"{name}.bias"] = b.copy()
        return out

    def logits(self, obs: np.ndarray) -> np.ndarray:
        """Same as calling the network (the interface of the learned policies' actors)."""
        return self(obs)
