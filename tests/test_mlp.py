"""The NumPy forward pass: MLP.invariant gives a row the same bits in a batch of any size."""

import numpy as np
import pytest

from lama_dice.agents.mlp import ACTIVATIONS, MLP, tensor_shapes
from lama_dice.agents.registry import make_agent
from lama_dice.agents.value import load_value


def _nets():
    return [("ppo:2p", make_agent("ppo:2p").mlp), ("value:2p", load_value("2p").mlp)]


@pytest.mark.parametrize("name,net", _nets())
def test_invariant_rows_do_not_depend_on_the_batch(name, net):
    rng = np.random.default_rng(0)
    x = rng.random((150, net.inputs)).astype(np.float32)
    ref = net.invariant(x)
    assert ref.dtype == np.float32 and ref.shape == (150, net.outputs)
    for size in (1, 2, 3, 31, 32, 33, 64, 149):
        for start in (0, 5):
            part = x[start:start + size]
            assert np.array_equal(net.invariant(part), ref[start:start + len(part)]), (size, start)
    perm = rng.permutation(150)
    assert np.array_equal(net.invariant(x[perm]), ref[perm])
    assert np.array_equal(net.invariant(x[7]), ref[7])  # one observation, 1-D
    assert net.invariant(x[:0]).shape == (0, net.outputs)
    np.testing.assert_allclose(ref, net(x), rtol=1e-5, atol=1e-5)  # the same network, to float32 rounding


@pytest.mark.parametrize("activation", sorted(ACTIVATIONS))
def test_invariant_rows_do_not_depend_on_their_place_or_neighbours(activation):
    """One row at every place of batches of other rows, for every activation: the same bits."""
    network = {"inputs": 52, "hidden": [64, 48], "activation": activation, "outputs": 37}
    rng = np.random.default_rng(1)
    tensors = {name: rng.normal(0, 0.3, shape).astype(np.float32) for name, shape in tensor_shapes(network).items()}
    net = MLP(network, tensors)
    row = rng.normal(0, 1, 52).astype(np.float32)
    ref = net.invariant(row)
    for size in (1, 7, 8, 9, 17, 40):
        for place in range(size):
            x = rng.normal(0, 1, (size, 52)).astype(np.float32)
            x[place] = row
            assert np.array_equal(net.invariant(x)[place], ref), (size, place)
    np.testing.assert_allclose(ref, net(row), rtol=1e-5, atol=1e-5)
