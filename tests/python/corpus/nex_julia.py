# Ported from numba/numba-examples (https://github.com/numba/numba-examples),
# file legacy/juliaset/juliaset_numba.py.
# Licence of the source: BSD-2-Clause, Copyright (c) 2017, Numba.
# Port: `@numba.njit()` -> `@asc.kernel`;
# no other change to the kernel's statements (retyped, comments ours).
"""Julia set iteration on a complex128 grid: whole-array complex arithmetic, np.exp(-np.abs(Z)) returned (numba-examples, legacy)."""
import numpy as np

import asc


@asc.kernel
def iterate(col, Z, c):
    for k in range(col):
        Z = Z * Z + c
    return np.exp(-np.abs(Z))


def args():
    x = np.linspace(-1.5, 1.5, 9)
    X, Y = np.meshgrid(x, x)
    return 6, X + Y * 1j, -.745429 + .11308j


KERNEL = iterate
