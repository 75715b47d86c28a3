# Ported from spcl/npbench (https://github.com/spcl/npbench),
# file npbench/benchmarks/polybench/gemver/gemver_numba_n.py at commit f2d7f27d87ba4881991e62c18a607aa6ba52b260.
# Licence of the source: BSD-3-Clause, Copyright (c) 2021, SPCL.
# Port: `@nb.jit(nopython=True, parallel=False, fastmath=True)` -> `@asc.kernel(fastmath=True)` on the entry point, `@asc.func(fastmath=True)` on the helpers it calls;
# no other change to the kernel's statements (retyped, comments ours).
"""gemver: np.outer updates and matrix-vector products in place (polybench)."""
import numpy as np

import asc


@asc.kernel(fastmath=True)
def kernel(alpha, beta, A, u1, v1, u2, v2, w, x, y, z):
    A += np.outer(u1, v1) + np.outer(u2, v2)
    x += beta * y @ A + z
    w += alpha * A @ x


def args():
    rng = np.random.default_rng(9)
    n = 6
    return (1.5, 1.2, rng.random((n, n))) + tuple(rng.random(n) for _ in range(8))


KERNEL = kernel
