# Ported from spcl/npbench (https://github.com/spcl/npbench),
# file npbench/benchmarks/compute/compute_numba_n.py at commit f2d7f27d87ba4881991e62c18a607aa6ba52b260.
# Licence of the source: BSD-3-Clause, Copyright (c) 2021, SPCL.
# Port: `@nb.jit(nopython=True, parallel=False, fastmath=True)` -> `@asc.kernel(fastmath=True)` on the entry point, `@asc.func(fastmath=True)` on the helpers it calls;
# no other change to the kernel's statements (retyped, comments ours).
"""Clip-and-affine on int64 arrays with np.minimum/np.maximum, returned (npbench; from the Cython tutorial)."""
import numpy as np

import asc


@asc.kernel(fastmath=True)
def compute(array_1, array_2, a, b, c):
    return np.minimum(np.maximum(array_1, 2), 10) * a + array_2 * b + c


def args():
    rng = np.random.default_rng(24)
    return (rng.integers(0, 15, (5, 6), dtype=np.int64), rng.integers(0, 15, (5, 6), dtype=np.int64),
            4, 3, 9)


KERNEL = compute
