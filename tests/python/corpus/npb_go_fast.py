# Ported from spcl/npbench (https://github.com/spcl/npbench),
# file npbench/benchmarks/go_fast/go_fast_numba_n.py at commit f2d7f27d87ba4881991e62c18a607aa6ba52b260.
# Licence of the source: BSD-3-Clause, Copyright (c) 2021, SPCL.
# Port: `@nb.jit(nopython=True, parallel=False, fastmath=True)` -> `@asc.kernel(fastmath=True)` on the entry point, `@asc.func(fastmath=True)` on the helpers it calls;
# no other change to the kernel's statements (retyped, comments ours).
"""numba's 5-minute-guide example: a tanh trace, then a + trace returned as a new array (npbench)."""
import numpy as np

import asc


@asc.kernel(fastmath=True)
def go_fast(a):
    trace = 0.0
    for i in range(a.shape[0]):
        trace += np.tanh(a[i, i])
    return a + trace


def args():
    rng = np.random.default_rng(32)
    return (rng.random((6, 6)),)


KERNEL = go_fast
