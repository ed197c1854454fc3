"""lama_env.streams, the one seed hasher: the batched engine and the vector game hash a seed alike."""

import pickle

import numpy as np
import pytest

from lama_env import streams as S
from lama_env.batched import NativePolicyError
from lama_env.vector import VectorGameError


@pytest.mark.parametrize("seed", [0, 5, 123456789, 2**63 - 11])
def test_both_engines_hash_a_seed_with_the_one_hasher(seed):
    b = S.base_seed(seed)
    assert b == int(np.random.SeedSequence(seed).generate_state(1, dtype=np.uint64)[0])
    assert S.kernel_seed(seed) == np.uint64(S.seed_mix(b))


@pytest.mark.parametrize("bad", [-1, 1.5, "3", True, 2**63])
def test_one_seed_hasher_one_message(bad):
    for error in (ValueError, NativePolicyError, VectorGameError):
        with pytest.raises(error, match=r"seed must be an integer 0\.\.2\*\*63 - 1, got "):
            S.kernel_seed(bad, error)


def _below_draws(st, ks):
    out = []
    for k in ks:
        st, x = S.below(st, k)
        out.append(x)
    return st, out


@pytest.mark.parametrize("seed", [0, 3, 2**63 - 1])
def test_streams_draw_as_below_and_copies_go_on_alike(seed):
    # k = 2**31 + 7 rejects about half its counters
    rng = np.random.default_rng(seed)
    es = S.start_streams(S.seed_mix(S.base_seed(seed)), 5)[0]
    ks = [int(k) for k in rng.choice([1, 2, 6, 36, 216, 2**31 + 7, 2**32 - 1], size=300)]
    want_st, want = _below_draws(es, ks)
    s = S.Streams(es, 9)
    copies = []
    got = []
    for i, k in enumerate(ks):
        if i % 50 == 0:
            copies.append((i, s.copy(), pickle.loads(pickle.dumps(s))))
        got.append(s.draw(k))
    assert got == want and s.es == want_st and s.ps == 9
    for i, c, p in copies:  # a copy and a pickled copy go on as the original went on, from where they were made
        assert c == p
        assert [c.draw(k) for k in ks[i:]] == want[i:] and c.es == want_st
        assert [p.draw(k) for k in ks[i:]] == want[i:] and p.es == want_st
