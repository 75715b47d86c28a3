# Ported from spcl/npbench (https://github.com/spcl/npbench),
# file npbench/benchmarks/polybench/k2mm/k2mm_numba_n.py at commit f2d7f27d87ba4881991e62c18a607aa6ba52b260.
# Licence of the source: BSD-3-Clause, Copyright (c) 2021, SPCL.
# Port: `@nb.jit(nopython=True, parallel=False, fastmath=True)` -> `@asc.kernel(fastmath=True)` on the entry point, `@asc.func(fastmath=True)` on the helpers it calls;
# no other change to the kernel's statements (retyped, comments ours).
"""2mm: D[:] = alpha * A @ B @ C + beta * D (polybench)."""
import numpy as np

import asc


@asc.kernel(fastmath=True)
def kernel(alpha, beta, A, B, C, D):
    D[:] = alpha * A @ B @ C + beta * D


def args():
    rng = np.random.default_rng(12)
    return (1.5, 1.2, rng.random((4, 5)), rng.random((5, 6)), rng.random((6, 3)),
            rng.random((4, 3)))


KERNEL = kernel
