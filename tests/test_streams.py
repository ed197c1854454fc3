"""lama_env.streams, the one seed hasher: the batched engine and the vector game hash a seed alike."""

import pickle

import numpy as np
import pytest

from lama_env import _kernel as K
from lama_env import streams as S
from lama_env.batched import NativePolicyError, _seed64
from lama_env.vector import VectorGameError, _seed_mix


@pytest.mark.parametrize("seed", [0, 5, 123456789, 2**63 - 11])
def test_both_engines_hash_a_seed_with_the_one_hasher(seed):
    b = S.base_seed(seed)
    assert b == int(np.random.SeedSequence(seed).generate_state(1, dtype=np.uint64)[0])
    assert _seed64(seed) == np.uint64(b)
    assert _seed_mix(seed) == K.seed_mix(np.uint64(b))


@pytest.mark.parametrize("bad", [-1, 1.5, "3", True, 2**63])
def test_one_seed_hasher_one_message(bad):
    for error, fn in ((ValueError, S.base_seed), (NativePolicyError, _seed64), (VectorGameError, _seed_mix)):
        with pytest.raises(error, match=r"seed must be an integer 0\.\.2\*\*63 - 1, got "):
            fn(bad)


def _below_draws(st, ks):
    out = []
    for k in ks:
        st, x = S.below(st, k)
        out.append(x)
    return st, out


@pytest.mark.parametrize("seed", [0, 3, 2**63 - 1])
def test_the_block_draws_are_below_draws(seed):
    # Streams.draw / draw_each take the counters from blocks (streams._block); below() draws them one by one.
    # k = 2**31 + 7 rejects about half its counters: rejections, and blocks ended in the middle of a draw.
    rng = np.random.default_rng(seed)
    es = S.start_streams(S.seed_mix(S.base_seed(seed)), 5)[0]
    # mostly small bounds (no rejection possible: the fast paths), some huge ones (rejections: the slow paths)
    ks = [int(k) for k in rng.choice([1, 2, 6, 36, 216, 2**31 + 7, 2**32 - 1], size=3000,
                                     p=[0.15, 0.15, 0.2, 0.2, 0.22, 0.04, 0.04])]
    want_st, want = _below_draws(es, ks)
    s = S.Streams(es, 9)
    got = []
    i = 0
    copies = []
    while i < len(ks):
        if rng.random() < 0.5:
            got.append(s.draw(ks[i]))
            i += 1
        else:
            m = int(rng.integers(1, 15))
            got += s.draw_each(ks[i:i + m])
            i += m
        if rng.random() < 0.02:
            assert s.es == _below_draws(es, ks[:i])[0]  # the state below() leaves after these draws
            copies.append((i, s.copy(), pickle.loads(pickle.dumps(s))))
    assert got == want and s.es == want_st and s.ps == 9
    assert len(copies) > 3
    for i, c, p in copies:  # a copy and a pickled copy go on as the original went on, from where they were made
        assert c == p
        assert [c.draw(k) for k in ks[i:]] == want[i:] and c.es == want_st
        assert p.draw_each(ks[i:]) == want[i:] and p.es == want_st
    s.es = es  # setting the state starts over from it
    assert s.draw_each(ks[:100]) == want[:100]
