"""lama_env.streams, the one seed hasher: the batched engine and the vector game hash a seed alike."""

import numpy as np
import pytest

from lama_env import _kernel as K
from lama_env import streams as S
from lama_env.batched import NativePolicyError, _seed64
from lama_env.vector import VectorGameError, _seed_mix


@pytest.mark.parametrize("seed", [0, 5, 123456789, 2**63 + 11])
def test_both_engines_hash_a_seed_with_the_one_hasher(seed):
    b = S.base_seed(seed)
    assert b == int(np.random.SeedSequence(seed).generate_state(1, dtype=np.uint64)[0])
    assert _seed64(seed) == np.uint64(b)
    assert _seed_mix(seed) == K.seed_mix(np.uint64(b))


@pytest.mark.parametrize("bad", [-1, 1.5, "3", True])
def test_one_seed_hasher_one_message(bad):
    for error, fn in ((ValueError, S.base_seed), (NativePolicyError, _seed64), (VectorGameError, _seed_mix)):
        with pytest.raises(error, match="seed must be an integer >= 0 or None"):
            fn(bad)
