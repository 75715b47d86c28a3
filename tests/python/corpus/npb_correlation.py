# Ported from spcl/npbench (https://github.com/spcl/npbench),
# file npbench/benchmarks/polybench/correlation/correlation_numba_n.py at commit f2d7f27d87ba4881991e62c18a607aa6ba52b260.
# Licence of the source: BSD-3-Clause, Copyright (c) 2021, SPCL.
# Port: `@nb.jit(nopython=True, parallel=False, fastmath=True)` -> `@asc.kernel(fastmath=True)` on the entry point, `@asc.func(fastmath=True)` on the helpers it calls;
# no other change to the kernel's statements (retyped, comments ours).
"""Correlation matrix: reductions with axis=0, a masked update, in-place array operators, np.eye (polybench)."""
import numpy as np

import asc


@asc.kernel(fastmath=True)
def kernel(M, float_n, data):
    # the source keeps np.mean / np.std as comments; it divides the sums
    mean = np.sum(data, axis=0) / float_n
    stddev = np.sqrt(np.sum((data - mean)**2, axis=0) / float_n)
    stddev[stddev <= 0.1] = 1.0
    data -= mean
    data /= np.sqrt(float_n) * stddev
    corr = np.eye(M, dtype=data.dtype)
    for i in range(M - 1):
        corr[i + 1:M, i] = corr[i, i + 1:M] = data[:, i] @ data[:, i + 1:M]
    return corr


def args():
    rng = np.random.default_rng(3)
    data = rng.random((8, 5))
    data[:, 2] = 0.5          # a constant column: its stddev is masked to 1
    return 5, 8.0, data


KERNEL = kernel
