"""``lama_env._kernel.legal`` with ``i = -1`` (the count and the last legal action) and the table agents on it.

The native agents ask ``legal(gs, r, -1)`` for the last legal action (a table agent's
discard of every card; the start of its take search); these tests hold it to the
enumeration itself (``legal(gs, r, count - 1)``) and to the vector game's mask, and the
table agent's decisions to their definition, at every state of seeded random play.
"""

import numpy as np
import pytest
from conftest import RULES_CONFIG_IDS, RULES_CONFIGS

from lama_env import _kernel as K
from lama_env.vector import VectorGame


def _states(n, rules, steps=60, slots=64, seed=3):
    vg = VectorGame(slots, num_players=n, rules=rules, seed=seed, reward="points")
    vg.reset()
    for _ in range(steps):
        yield vg
        vg.step(vg.sample_actions())


@pytest.mark.parametrize("n", [1, 2, 4])
@pytest.mark.parametrize("rules", RULES_CONFIGS, ids=RULES_CONFIG_IDS)
def test_minus_one_is_the_count_and_the_last_legal_action(n, rules):
    rng = np.random.default_rng(n)
    # two table agents, their take ranks full of ties (the first face wins a tie)
    agents = K.agents_table(np.array([K.KIND_TABLE, K.KIND_TABLE]), rng.integers(0, 2, size=(2, 128)),
                            rng.integers(0, 3, size=(2, 128, 7)))
    phases = set()
    for vg in _states(n, rules):
        r = vg._r
        mask = vg.action_mask
        for g in range(vg.num_envs):
            gs = vg._s[g]
            count, last = K.legal(gs, r, -1)
            every = [K.legal(gs, r, i)[1] for i in range(count)]
            assert count == int(mask[g].sum()) and sorted(every) == np.flatnonzero(mask[g]).tolist()
            assert last == every[-1] and K.legal(gs, r, count)[1] == -1
            phases.add(int(gs["phase"]))
            m = 0
            for f in range(7):
                m |= (1 << f) if gs["disp"][gs["cur"], f] > 0 else 0
            for agent in agents:
                a = K.native_action(agent, gs, r, np.uint64(0))[1]
                ph = gs["phase"]
                if ph == K.TURN:
                    want = K.QUIT if agent["quit_table"][m] else K.ROLL
                elif ph == K.DISCARD:
                    want = last  # every card it may discard
                else:  # the shown row card of smallest rank, the first face on ties
                    want = min(every, key=lambda b: (agent["take_rank"][m, b - K.TAKE_BASE], b))
                assert a == want
    assert phases == ({K.TURN, K.DISCARD} if n == 1 else {K.TURN, K.DISCARD, K.TAKE})  # solo: no takes
