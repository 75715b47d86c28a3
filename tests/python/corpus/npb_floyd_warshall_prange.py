# Ported from spcl/npbench (https://github.com/spcl/npbench),
# file npbench/benchmarks/polybench/floyd_warshall/floyd_warshall_numba_npr.py at commit f2d7f27d87ba4881991e62c18a607aa6ba52b260.
# Licence of the source: BSD-3-Clause, Copyright (c) 2021, SPCL.
# Port: `@nb.jit(nopython=True, parallel=True, fastmath=True)` -> `@asc.kernel(fastmath=True)`, `nb.prange` -> `asc.prange`;
# no other change to the kernel's statements (retyped, comments ours).
"""Floyd-Warshall, the parallel variant: the row loop is a prange (polybench)."""
import numpy as np

import asc


@asc.kernel(fastmath=True)
def kernel(path):
    for k in range(path.shape[0]):
        for i in asc.prange(path.shape[0]):
            path[i, :] = np.minimum(path[i, :], path[i, k] + path[k, :])


def args():
    n = 7
    path = np.fromfunction(lambda i, j: i * j % 7 + 1, (n, n), dtype=np.int32)
    path[(np.arange(n) * 3) % n, np.arange(n)] = 999
    return (path,)


KERNEL = kernel
