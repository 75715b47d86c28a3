# Ported from spcl/npbench (https://github.com/spcl/npbench),
# file npbench/benchmarks/polybench/covariance2/covariance2_numba_n.py at commit f2d7f27d87ba4881991e62c18a607aa6ba52b260.
# Licence of the source: BSD-3-Clause, Copyright (c) 2021, SPCL.
# Port: `@nb.jit(nopython=True, parallel=False, fastmath=True)` -> `@asc.kernel(fastmath=True)` on the entry point, `@asc.func(fastmath=True)` on the helpers it calls;
# no other change to the kernel's statements (retyped, comments ours).
"""Covariance through np.cov(np.transpose(data)) (polybench)."""
import numpy as np

import asc


@asc.kernel(fastmath=True)
def kernel(M, float_n, data):
    return np.cov(np.transpose(data))


def args():
    rng = np.random.default_rng(5)
    return 5, 8.0, rng.random((8, 5))


KERNEL = kernel
