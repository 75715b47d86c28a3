# Ported from spcl/npbench (https://github.com/spcl/npbench),
# file npbench/benchmarks/polybench/covariance/covariance_numba_n.py at commit f2d7f27d87ba4881991e62c18a607aa6ba52b260.
# Licence of the source: BSD-3-Clause, Copyright (c) 2021, SPCL.
# Port: `@nb.jit(nopython=True, parallel=False, fastmath=True)` -> `@asc.kernel(fastmath=True)` on the entry point, `@asc.func(fastmath=True)` on the helpers it calls;
# no other change to the kernel's statements (retyped, comments ours).
"""Covariance matrix: np.sum with axis=0, chained slice assignment of a vector-matrix product (polybench)."""
import numpy as np

import asc


@asc.kernel(fastmath=True)
def kernel(M, float_n, data):
    mean = np.sum(data, axis=0) / float_n
    data -= mean
    cov = np.zeros((M, M), dtype=data.dtype)
    for i in range(M):
        cov[i:M, i] = cov[i, i:M] = data[:, i] @ data[:, i:M] / (float_n - 1.0)
    return cov


def args():
    rng = np.random.default_rng(4)
    return 5, 8.0, rng.random((8, 5))


KERNEL = kernel
