# Ported from numba/numba-examples (https://github.com/numba/numba-examples),
# file legacy/laplace2d/laplace2d-numba.py.
# Licence of the source: BSD-2-Clause, Copyright (c) 2017, Numba.
# Port: `@jit` -> `@asc.kernel`;
# no other change to the kernel's statements (retyped, comments ours).
"""Jacobi relaxation step of the Laplace equation: explicit loops, max/abs, returns the error (numba-examples, legacy)."""
import numpy as np

import asc


@asc.kernel
def jacobi_relax_core(A, Anew):
    error = 0.0
    n = A.shape[0]
    m = A.shape[1]

    for j in range(1, n - 1):
        for i in range(1, m - 1):
            Anew[j, i] = 0.25 * (A[j, i + 1] + A[j, i - 1] +
                                 A[j - 1, i] + A[j + 1, i])
            error = max(error, abs(Anew[j, i] - A[j, i]))
    return error


def args():
    A = np.zeros((8, 9))
    A[:, 0] = 1.0
    return A, A.copy()


KERNEL = jacobi_relax_core
