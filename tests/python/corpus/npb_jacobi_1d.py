# Ported from spcl/npbench (https://github.com/spcl/npbench),
# file npbench/benchmarks/polybench/jacobi_1d/jacobi_1d_numba_n.py at commit f2d7f27d87ba4881991e62c18a607aa6ba52b260.
# Licence of the source: BSD-3-Clause, Copyright (c) 2021, SPCL.
# Port: `@nb.jit(nopython=True, parallel=False, fastmath=True)` -> `@asc.kernel(fastmath=True)` on the entry point, `@asc.func(fastmath=True)` on the helpers it calls;
# no other change to the kernel's statements (retyped, comments ours).
"""Jacobi 1-d: a 3-point slice stencil (polybench)."""
import numpy as np

import asc


@asc.kernel(fastmath=True)
def kernel(TSTEPS, A, B):
    for t in range(1, TSTEPS):
        B[1:-1] = 0.33333 * (A[:-2] + A[1:-1] + A[2:])
        A[1:-1] = 0.33333 * (B[:-2] + B[1:-1] + B[2:])


def args():
    n = 12
    return 5, (np.arange(n) + 2.0) / n, (np.arange(n) + 3.0) / n


KERNEL = kernel
