# Ported from spcl/npbench (https://github.com/spcl/npbench),
# file npbench/benchmarks/polybench/trisolv/trisolv_numba_n.py at commit f2d7f27d87ba4881991e62c18a607aa6ba52b260.
# Licence of the source: BSD-3-Clause, Copyright (c) 2021, SPCL.
# Port: `@nb.jit(nopython=True, parallel=False, fastmath=True)` -> `@asc.kernel(fastmath=True)` on the entry point, `@asc.func(fastmath=True)` on the helpers it calls;
# no other change to the kernel's statements (retyped, comments ours).
"""Triangular solve, one row-prefix product per row (polybench)."""
import numpy as np

import asc


@asc.kernel(fastmath=True)
def kernel(L, x, b):
    for i in range(x.shape[0]):
        x[i] = (b[i] - L[i, :i] @ x[:i]) / L[i, i]


def args():
    n = 7
    L = np.fromfunction(lambda i, j: (i + n - j + 1) * 2 / n, (n, n))
    return L, np.full(n, -999.0), np.arange(n, dtype=np.float64)


KERNEL = kernel
