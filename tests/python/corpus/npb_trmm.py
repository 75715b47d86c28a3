# Ported from spcl/npbench (https://github.com/spcl/npbench),
# file npbench/benchmarks/polybench/trmm/trmm_numba_n.py at commit f2d7f27d87ba4881991e62c18a607aa6ba52b260.
# Licence of the source: BSD-3-Clause, Copyright (c) 2021, SPCL.
# Port: `@nb.jit(nopython=True, parallel=False, fastmath=True)` -> `@asc.kernel(fastmath=True)` on the entry point, `@asc.func(fastmath=True)` on the helpers it calls;
# no other change to the kernel's statements (retyped, comments ours).
"""trmm: triangular matrix product by column-suffix dot products, then B *= alpha (polybench)."""
import numpy as np

import asc


@asc.kernel(fastmath=True)
def kernel(alpha, A, B):
    for i in range(B.shape[0]):
        for j in range(B.shape[1]):
            B[i, j] += np.dot(A[i + 1:, i], B[i + 1:, j])
    B *= alpha


def args():
    rng = np.random.default_rng(19)
    return 1.5, rng.random((5, 5)), rng.random((5, 6))


KERNEL = kernel
