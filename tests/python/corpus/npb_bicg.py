# Ported from spcl/npbench (https://github.com/spcl/npbench),
# file npbench/benchmarks/polybench/bicg/bicg_numba_n.py at commit f2d7f27d87ba4881991e62c18a607aa6ba52b260.
# Licence of the source: BSD-3-Clause, Copyright (c) 2021, SPCL.
# Port: `@nb.jit(nopython=True, parallel=False, fastmath=True)` -> `@asc.kernel(fastmath=True)` on the entry point, `@asc.func(fastmath=True)` on the helpers it calls;
# no other change to the kernel's statements (retyped, comments ours).
"""bicg: two matrix-vector products, returned as a tuple (polybench)."""
import numpy as np

import asc


@asc.kernel(fastmath=True)
def kernel(A, p, r):
    return r @ A, A @ p


def args():
    rng = np.random.default_rng(2)
    return rng.random((6, 5)), rng.random(5), rng.random(6)


KERNEL = kernel
