# Ported from spcl/npbench (https://github.com/spcl/npbench),
# file npbench/benchmarks/polybench/syr2k/syr2k_numba_n.py at commit f2d7f27d87ba4881991e62c18a607aa6ba52b260.
# Licence of the source: BSD-3-Clause, Copyright (c) 2021, SPCL.
# Port: `@nb.jit(nopython=True, parallel=False, fastmath=True)` -> `@asc.kernel(fastmath=True)` on the entry point, `@asc.func(fastmath=True)` on the helpers it calls;
# no other change to the kernel's statements (retyped, comments ours).
"""syr2k: rank-2k update of the lower triangle by row-prefix slices (polybench)."""
import numpy as np

import asc


@asc.kernel(fastmath=True)
def kernel(alpha, beta, C, A, B):
    for i in range(A.shape[0]):
        C[i, :i + 1] *= beta
        for k in range(A.shape[1]):
            C[i, :i + 1] += (A[:i + 1, k] * alpha * B[i, k] +
                             B[:i + 1, k] * alpha * A[i, k])


def args():
    rng = np.random.default_rng(17)
    return 1.5, 1.2, rng.random((6, 6)), rng.random((6, 4)), rng.random((6, 4))


KERNEL = kernel
