# Ported from spcl/npbench (https://github.com/spcl/npbench),
# file npbench/benchmarks/go_fast/go_fast_numba_npr.py at commit f2d7f27d87ba4881991e62c18a607aa6ba52b260.
# Licence of the source: BSD-3-Clause, Copyright (c) 2021, SPCL.
# Port: `@nb.jit(nopython=True, parallel=True, fastmath=True)` -> `@asc.kernel(fastmath=True)`, `nb.prange` -> `asc.prange`;
# no other change to the kernel's statements (retyped, comments ours).
"""go_fast, the parallel variant: the trace is a prange reduction (npbench)."""
import numpy as np

import asc


@asc.kernel(fastmath=True)
def go_fast(a):
    trace = 0.0
    for i in asc.prange(a.shape[0]):
        trace += np.tanh(a[i, i])
    return a + trace


def args():
    rng = np.random.default_rng(33)
    return (rng.random((6, 6)),)


KERNEL = go_fast
