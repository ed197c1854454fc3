"""The affine layer of :meth:`lama_dice.agents.mlp.MLP.invariant` in compiled loops (private).

:func:`affine` computes ``x @ w + b`` in float32 as a fixed sequence of IEEE operations per
output: ``out[i, k]`` starts at 0, adds ``x[i, j] * w[j, k]`` for ``j = 0, 1, ...`` in that
order (each product and each sum rounded to float32), then adds ``b[k]``.  Numba compiles it
without ``fastmath``, so LLVM may not reorder those sums nor fuse a product and a sum (no FMA):
it vectorises across ``k`` (independent outputs) and computes 8 rows per pass over ``w``
(each weight loaded once for them), which changes the order of the operations of different
outputs, never of one.  So a row's outputs are a function of that row alone, the same bits
whatever rows, and however many, are in the batch, and whatever the CPU or the BLAS (none is
called).  BLAS cannot promise this: OpenBLAS computes a row differently depending on its
position in the block its kernel works on (tests/test_mlp.py).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from lama_env import jit_cache  # noqa: F401  (a writable Numba cache folder before the first cache=True decorator)

__all__ = ["affine"]


@njit(cache=True)
def affine(x, w, b):
    """``x @ w + b`` for ``x`` ``[n, m]``, ``w`` ``[m, p]`` (C-contiguous), ``b`` ``[p]``, all float32 (see above)."""
    n, m = x.shape
    p = w.shape[1]
    out = np.zeros((n, p), np.float32)
    i = 0
    while i + 8 <= n:  # 8 rows at a time: each row of w read once for the 8
        o0 = out[i]
        o1 = out[i + 1]
        o2 = out[i + 2]
        o3 = out[i + 3]
        o4 = out[i + 4]
        o5 = out[i + 5]
        o6 = out[i + 6]
        o7 = out[i + 7]
        for j in range(m):
            a0 = x[i, j]
            a1 = x[i + 1, j]
            a2 = x[i + 2, j]
            a3 = x[i + 3, j]
            a4 = x[i + 4, j]
            a5 = x[i + 5, j]
            a6 = x[i + 6, j]
            a7 = x[i + 7, j]
            wj = w[j]
            for k in range(p):
                wk = wj[k]
                o0[k] += a0 * wk
                o1[k] += a1 * wk
                o2[k] += a2 * wk
                o3[k] += a3 * wk
                o4[k] += a4 * wk
                o5[k] += a5 * wk
                o6[k] += a6 * wk
                o7[k] += a7 * wk
        i += 8
    while i < n:  # the last rows one at a time: the same operations on each output
        o0 = out[i]
        for j in range(m):
            a0 = x[i, j]
            wj = w[j]
            for k in range(p):
                o0[k] += a0 * wj[k]
        i += 1
    for i in range(n):
        o0 = out[i]
        for k in range(p):
            o0[k] += b[k]
    return out
