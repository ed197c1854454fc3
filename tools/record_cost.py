"""What LamaGame's Python view costs over the compiled step it drives (issue 31 item 1).

LamaGame is a view over one compiled record (lama_env._game); this measures it against the bare
compiled one-game step called from Python.

Measured alternating in one process (R rounds of N steps of every variant, the median and range
of microseconds per step): ``LamaGame.step`` with random legal actions (on the compiled streams,
the only ones since 0.2.0) against one compiled step of a one-game record of
``lama_env._kernel.STATE_DTYPE`` called from Python (Numba's dispatch with the record array, the
rules record and the action), with the legal actions listed by a second compiled call or the
action drawn inside; Numba's dispatch alone (the rules as ``np.void``, as the kernels take them,
and as a one-element array); the observation (``observation.encode`` vs the compiled
``_vector_kernel.encode`` of the record); reading totals and displays back from the record; and
``to_state``/``from_state``.  First it checks that the compiled encoder reads from
``lama_env.snapshot.to_state(game)`` the observation ``observation.encode`` gives.  A measurement, not a test::

    python -m tools.record_cost [N] [R]      # default 20000 steps, 7 rounds
"""
import random
import statistics
import sys
import time
from typing import Any

import numpy as np
from numba import njit

from lama_env import _kernel as K
from lama_env import _vector_kernel as VK
from lama_env import streams as S
from lama_env.engine import LamaGame
from lama_env.observation import encode, observation_size
from lama_env.rules import RulesConfig
from lama_env.snapshot import from_state, to_state
from lama_env.vector import encoder_rules

N = 20000  # steps a round (argv[1])
R = 7  # rounds (argv[2])
P = 2  # players


@njit(cache=False)
def _k_new(s, rr, mixed, game_id):
    r = rr[0]
    gs = s[0]
    K.start_streams(gs, mixed, game_id)
    K.new_game(gs, r)


@njit(cache=False)
def _k_step(s, rr, a):
    r = rr[0]
    gs = s[0]
    code = K.transition(gs, r, a)
    if code == K.ROUND_OVER:
        K.next_round(gs, r)
    return code


@njit(cache=False)
def _k_legal(s, rr, out):
    r = rr[0]
    gs = s[0]
    count = K.legal(gs, r, -1)[0]
    for i in range(count):
        out[i] = K.legal(gs, r, i)[1]
    return count


@njit(cache=False)
def _k_step_random(s, rr, agent):
    r = rr[0]
    gs = s[0]
    st, a = K.native_action(agent[0], gs, r, gs.ps)
    gs.ps = st
    code = K.transition(gs, r, a)
    if code == K.ROUND_OVER:
        K.next_round(gs, r)
    return code


@njit(cache=False)
def _k_noop_void(s, r, a):
    return a + s[0].cur + r.n


@njit(cache=False)
def _k_noop(s, rr, a):
    r = rr[0]
    return a + s[0].cur + r.n


@njit(cache=False)
def _k_encode(out, s, rr, seat):
    r = rr[0]
    gs = s[0]
    VK.encode(out, gs, r, seat, gs.cur, gs.phase, gs.phase != K.TURN)


RULES_VOID: Any = None  # the rules record with the observation's tables (the vector game's), as np.void
RULES_REC: Any = None  # the same as a one-element array (how it is passed here: an np.void costs ~7 us a call)
MIXED = np.uint64(S.seed_mix(S.base_seed(1)))
AGENT = K.agents_table(np.array([K.KIND_RANDOM]), np.zeros((1, 128), np.uint8), np.zeros((1, 128, 7), np.int64))


def _lama_steps(n):
    choice = random.Random(1).choice
    k = 0
    gid = 0
    g = LamaGame(P, seed=1, game_id=gid, record=False)
    t = time.perf_counter()
    while k < n:
        if g.game_over:
            gid += 1
            g = LamaGame(P, seed=1, game_id=gid, record=False)
            continue
        g.step(choice(g.legal_actions()))
        k += 1
    return time.perf_counter() - t


def _lama_steps_encode(n):
    choice = random.Random(1).choice
    k = 0
    g = LamaGame(P, seed=1, game_id=0, record=False)
    t = time.perf_counter()
    while k < n:
        if g.game_over:
            g = LamaGame(P, seed=1, game_id=k, record=False)
            continue
        encode(g, g.current_player)
        g.step(choice(g.legal_actions()))
        k += 1
    return time.perf_counter() - t


def _kernel_steps(n, observe=False):
    """Compiled step + compiled legal list + Python's random pick: two dispatches a step (three with ``observe``)."""
    rnd = random.Random(1).random
    s = K.new_state(1)
    r = RULES_REC
    buf = np.empty(64, np.int64)
    out = np.zeros(observation_size(P), np.float32)
    gid = 0
    _k_new(s, r, MIXED, gid)
    k = 0
    t = time.perf_counter()
    while k < n:
        if observe:
            _k_encode(out, s, r, int(s[0]["cur"]))
        c = _k_legal(s, r, buf)
        if _k_step(s, r, int(buf[int(rnd() * c)])) == K.GAME_OVER:
            gid += 1
            _k_new(s, r, MIXED, gid)
        k += 1
    return time.perf_counter() - t


def _kernel_steps_random(n):
    """Compiled step choosing its own random action: one dispatch a step."""
    s = K.new_state(1)
    r = RULES_REC
    gid = 0
    _k_new(s, r, MIXED, gid)
    k = 0
    t = time.perf_counter()
    while k < n:
        if _k_step_random(s, r, AGENT) == K.GAME_OVER:
            gid += 1
            _k_new(s, r, MIXED, gid)
        k += 1
    return time.perf_counter() - t


def _calls(fn, rules, n):
    """``n`` empty compiled calls ``fn(state, rules, 0)``: Numba's dispatch alone."""
    s = K.new_state(1)
    t = time.perf_counter()
    for _ in range(n):
        fn(s, rules, 0)
    return time.perf_counter() - t


def _read_back(n):
    """Totals and displays read from the record as Python tuples (what the properties would do)."""
    s = K.new_state(1)
    _k_new(s, RULES_REC, MIXED, 0)
    t = time.perf_counter()
    for _ in range(n):
        rec = s[0]
        tuple(rec["tot"][:P].tolist())
        tuple(map(tuple, rec["disp"][:P].tolist()))
    return time.perf_counter() - t


def _read_views(n):
    """The same through field views made once (what a record-backed LamaGame would keep)."""
    s = K.new_state(1)
    _k_new(s, RULES_REC, MIXED, 0)
    tot = s["tot"][0, :P]
    disp = s["disp"][0, :P]
    t = time.perf_counter()
    for _ in range(n):
        tuple(tot.tolist())
        tuple(map(tuple, disp.tolist()))
    return time.perf_counter() - t


def _read_lama(n):
    g = LamaGame(P, seed=1, game_id=0, record=False)
    t = time.perf_counter()
    for _ in range(n):
        _ = g.totals, g.displays
    return time.perf_counter() - t


def _to_state_calls(n):
    g = LamaGame(P, seed=1, game_id=0, record=False)
    t = time.perf_counter()
    for _ in range(n // 10):
        to_state(g)
    return (time.perf_counter() - t) * 10


def _from_state_calls(n):
    rec = to_state(LamaGame(P, seed=1, game_id=0, record=False))
    t = time.perf_counter()
    for _ in range(n // 10):
        from_state(rec, P)
    return (time.perf_counter() - t) * 10


VARIANTS = {
    "LamaGame.step (compiled streams), random legal": lambda: _lama_steps(N),
    "compiled step + compiled legal list (2 calls), Python pick": lambda: _kernel_steps(N),
    "compiled step choosing its random action (1 call)": lambda: _kernel_steps_random(N),
    "empty njit call (record array, rules (1,) array, int)": lambda: _calls(_k_noop, RULES_REC, N),
    "empty njit call (record array, rules np.void, int)": lambda: _calls(_k_noop_void, RULES_VOID, N),
    "LamaGame: encode() + step (compiled streams)": lambda: _lama_steps_encode(N),
    "compiled encode + legal + step (3 calls)": lambda: _kernel_steps(N, observe=True),
    "read totals+displays from record (tuples)": lambda: _read_back(N),
    "read totals+displays through field views made once": lambda: _read_views(N),
    "read LamaGame.totals+displays": lambda: _read_lama(N),
    "LamaGame.to_state()": lambda: _to_state_calls(N),
    "from_state()": lambda: _from_state_calls(N),
}


def main() -> None:
    """Check the compiled encoder on to_state(), then measure every variant alternately and print the table."""
    global N, R, RULES_VOID, RULES_REC
    N = int(sys.argv[1]) if len(sys.argv) > 1 else N
    R = int(sys.argv[2]) if len(sys.argv) > 2 else R
    RULES_VOID = encoder_rules(P, RulesConfig())[()]
    RULES_REC = np.array(RULES_VOID).reshape(1)
    # warm up (compile) and check the compiled encode of a record equals encode(game)'s
    _kernel_steps(100), _kernel_steps_random(100), _kernel_steps(100, observe=True)
    _calls(_k_noop, RULES_REC, 10), _calls(_k_noop_void, RULES_VOID, 10)
    g = LamaGame(P, seed=1, game_id=0, record=False)
    pick = random.Random(3)
    out = np.zeros(observation_size(P), np.float32)
    checked = 0
    while not g.game_over:
        s = to_state(g).reshape(1)
        out[:] = 0
        _k_encode(out, s, RULES_REC, g.current_player)
        assert np.array_equal(out, encode(g, g.current_player)), "compiled encode of to_state() differs"
        checked += 1
        g.step(pick.choice(g.legal_actions()))
    print(f"compiled encode(to_state()) == encode(game) at {checked} decisions")
    for f in VARIANTS.values():
        f()
    times = {k: [] for k in VARIANTS}
    for _ in range(R):
        for k, f in VARIANTS.items():
            times[k].append(f() / N * 1e6)
    base = statistics.median(times["LamaGame.step (compiled streams), random legal"])
    print(f"N={N} steps a round, R={R} rounds alternating; median us per step (ratio to LamaGame.step)")
    for k, v in times.items():
        m = statistics.median(v)
        print(f"  {k:62s} {m:7.3f} us  (x{m / base:.2f})  [min {min(v):.3f}, max {max(v):.3f}]")


if __name__ == "__main__":
    main()
