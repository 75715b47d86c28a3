# Ported from spcl/npbench (https://github.com/spcl/npbench),
# file npbench/benchmarks/polybench/mvt/mvt_numba_n.py at commit f2d7f27d87ba4881991e62c18a607aa6ba52b260.
# Licence of the source: BSD-3-Clause, Copyright (c) 2021, SPCL.
# Port: `@nb.jit(nopython=True, parallel=False, fastmath=True)` -> `@asc.kernel(fastmath=True)` on the entry point, `@asc.func(fastmath=True)` on the helpers it calls;
# no other change to the kernel's statements (retyped, comments ours).
"""mvt: x1 += A @ y_1; x2 += y_2 @ A (polybench)."""
import numpy as np

import asc


@asc.kernel(fastmath=True)
def kernel(x1, x2, y_1, y_2, A):
    x1 += A @ y_1
    x2 += y_2 @ A


def args():
    rng = np.random.default_rng(15)
    return tuple(rng.random(6) for _ in range(4)) + (rng.random((6, 6)),)


KERNEL = kernel
