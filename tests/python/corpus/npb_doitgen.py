# Ported from spcl/npbench (https://github.com/spcl/npbench),
# file npbench/benchmarks/polybench/doitgen/doitgen_numba_n.py at commit f2d7f27d87ba4881991e62c18a607aa6ba52b260.
# Licence of the source: BSD-3-Clause, Copyright (c) 2021, SPCL.
# Port: `@nb.jit(nopython=True, parallel=False, fastmath=True)` -> `@asc.kernel(fastmath=True)` on the entry point, `@asc.func(fastmath=True)` on the helpers it calls;
# no other change to the kernel's statements (retyped, comments ours).
"""doitgen: a row of a 3-d array times a matrix, stored back into the row (polybench)."""
import numpy as np

import asc


@asc.kernel(fastmath=True)
def kernel(NR, NQ, NP, A, C4):
    for r in range(NR):
        for q in range(NQ):
            tmp = A[r, q, :] @ C4
            A[r, q, :] = tmp


def args():
    rng = np.random.default_rng(6)
    return 3, 4, 5, rng.random((3, 4, 5)), rng.random((5, 5))


KERNEL = kernel
