# Ported from spcl/npbench (https://github.com/spcl/npbench),
# file npbench/benchmarks/polybench/cholesky2/cholesky2_numba_n.py at commit f2d7f27d87ba4881991e62c18a607aa6ba52b260.
# Licence of the source: BSD-3-Clause, Copyright (c) 2021, SPCL.
# Port: `@nb.jit(nopython=True, parallel=False, fastmath=True)` -> `@asc.kernel(fastmath=True)` on the entry point, `@asc.func(fastmath=True)` on the helpers it calls;
# no other change to the kernel's statements (retyped, comments ours).
"""Cholesky through np.linalg.cholesky plus np.triu, stored with A[:] = (polybench)."""
import numpy as np

import asc


@asc.kernel(fastmath=True)
def kernel(A):
    A[:] = np.linalg.cholesky(A) + np.triu(A, k=1)

def args():
    n = 6
    rng = np.random.default_rng(7)
    m = rng.random((n, n))
    return (m @ m.T + n * np.eye(n),)


KERNEL = kernel
