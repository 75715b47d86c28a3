# Ported from spcl/npbench (https://github.com/spcl/npbench),
# file npbench/benchmarks/polybench/jacobi_2d/jacobi_2d_numba_n.py at commit f2d7f27d87ba4881991e62c18a607aa6ba52b260.
# Licence of the source: BSD-3-Clause, Copyright (c) 2021, SPCL.
# Port: `@nb.jit(nopython=True, parallel=False, fastmath=True)` -> `@asc.kernel(fastmath=True)` on the entry point, `@asc.func(fastmath=True)` on the helpers it calls;
# no other change to the kernel's statements (retyped, comments ours).
"""Jacobi 2-d: a 5-point slice stencil (polybench)."""
import numpy as np

import asc


@asc.kernel(fastmath=True)
def kernel(TSTEPS, A, B):
    for t in range(1, TSTEPS):
        B[1:-1, 1:-1] = 0.2 * (A[1:-1, 1:-1] + A[1:-1, :-2] + A[1:-1, 2:] +
                               A[2:, 1:-1] + A[:-2, 1:-1])
        A[1:-1, 1:-1] = 0.2 * (B[1:-1, 1:-1] + B[1:-1, :-2] + B[1:-1, 2:] +
                               B[2:, 1:-1] + B[:-2, 1:-1])


def args():
    n = 8
    A = np.fromfunction(lambda i, j: i * (j + 2) / n, (n, n))
    B = np.fromfunction(lambda i, j: i * (j + 3) / n, (n, n))
    return 4, A, B


KERNEL = kernel
