# Ported from numba/numba-examples (https://github.com/numba/numba-examples),
# file legacy/bubblesort.py.
# Licence of the source: BSD-2-Clause, Copyright (c) 2017, Numba.
# Port: `jit(nopython=True)(bubblesort)` -> `asc.kernel(bubblesort)`;
# no other change to the kernel's statements (retyped, comments ours).
"""Bubble sort in place with a tuple swap; the source applies the decorator as a call, `jit(nopython=True)(bubblesort)` (numba-examples, legacy)."""
import numpy as np

import asc


def bubblesort(X):
    N = X.shape[0]
    for end in range(N, 1, -1):
        for i in range(end - 1):
            if X[i] > X[i + 1]:
                X[i], X[i + 1] = X[i + 1], X[i]


bubblesort_fast = asc.kernel(bubblesort)


def args():
    return (np.array([5, 3, 9, 1, 7, 7, -2, 0, 4], dtype=np.int64),)


KERNEL = bubblesort_fast
