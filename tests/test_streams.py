"""lama_env.streams, the Python form of the random streams, agrees with the compiled engine's draw for draw."""

import numpy as np
import pytest

from lama_env import _kernel as K
from lama_env import streams as S
from lama_env.batched import NativePolicyError, _seed64
from lama_env.vector import VectorGameError, _seed_mix


@pytest.mark.parametrize("seed", [0, 5, 123456789, 2**63 + 11])
def test_seed_hash_and_game_streams_match_the_kernel(seed):
    b = S.base_seed(seed)
    assert S.seed_mix(b) == int(K.seed_mix(np.uint64(b)))
    assert _seed64(seed) == np.uint64(b)
    assert _seed_mix(seed) == np.uint64(S.seed_mix(b))
    st = K.new_state(1)
    for g in (0, 1, 7, 10**6):
        K.start_streams(st[0], _seed_mix(seed), g)
        assert S.game_streams(seed, g) == (int(st[0]["es"]), int(st[0]["ps"]))


def test_below_and_block_match_the_kernel():
    es, ps = S.game_streams(3, 2)
    for state in (es, ps):
        u = S.block(state, 50)
        s = state
        for i in range(50):
            s = S.advance(s, 1)
            assert S.mix(s) >> 32 == u[i]
        s = state
        for k in (1, 2, 3, 8, 35, 36, 216):
            s1, x1 = S.below(s, k)
            s2, x2 = K.below(np.uint64(s), k)
            assert (s1, x1) == (int(s2), int(x2)) and 0 <= x1 < k
            s = s1


@pytest.mark.parametrize("bad", [-1, 1.5, "3", True])
def test_one_seed_hasher_one_message(bad):
    for error, fn in ((ValueError, S.base_seed), (NativePolicyError, _seed64), (VectorGameError, _seed_mix)):
        with pytest.raises(error, match="seed must be an integer >= 0 or None"):
            fn(bad)
