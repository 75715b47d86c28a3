# Ported from spcl/npbench (https://github.com/spcl/npbench),
# file npbench/benchmarks/spmv/spmv_numba_n.py at commit f2d7f27d87ba4881991e62c18a607aa6ba52b260.
# Licence of the source: BSD-3-Clause, Copyright (c) 2021, SPCL.
# Port: `@nb.jit(nopython=True, parallel=False, fastmath=True)` -> `@asc.kernel(fastmath=True)` on the entry point, `@asc.func(fastmath=True)` on the helpers it calls;
# no other change to the kernel's statements (retyped, comments ours).
"""Sparse matrix-vector product (CSR): slices with run-time bounds, an integer-array gather, @ (npbench)."""
import numpy as np

import asc


@asc.kernel(fastmath=True)
def spmv(A_row, A_col, A_val, x):
    y = np.empty(A_row.size - 1, A_val.dtype)

    for i in range(A_row.size - 1):
        cols = A_col[A_row[i]:A_row[i + 1]]
        vals = A_val[A_row[i]:A_row[i + 1]]
        y[i] = vals @ x[cols]

    return y


def args():
    rng = np.random.default_rng(35)
    dense = rng.random((6, 7)) * (rng.random((6, 7)) < 0.4)
    rows, cols = np.nonzero(dense)
    A_row = np.zeros(7, dtype=np.int32)
    np.add.at(A_row, rows + 1, 1)
    A_row = np.cumsum(A_row).astype(np.int32)
    return A_row, cols.astype(np.int32), dense[rows, cols], rng.random(7)


KERNEL = spmv
