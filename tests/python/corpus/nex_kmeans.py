# Ported from numba/numba-examples (https://github.com/numba/numba-examples),
# file legacy/k-means/k-means_numba.py.
# Licence of the source: BSD-2-Clause, Copyright (c) 2017, Numba.
# Port: `@njit` -> `@asc.kernel`;
# no other change to the kernel's statements (retyped, comments ours).
"""k-means: list comprehensions in np.array, boolean-mask sums, .argmin(); `from math import sqrt` (numba-examples, legacy)."""
from math import sqrt

import numpy as np

import asc


@asc.kernel
def kmeans(A, numCenter, numIter, N, D, init_centroids):
    centroids = init_centroids

    for l in range(numIter):
        dist = np.array([[sqrt(np.sum((A[i, :] - centroids[j, :])**2))
                          for j in range(numCenter)] for i in range(N)])
        labels = np.array([dist[i, :].argmin() for i in range(N)])

        centroids = np.array([[np.sum(A[labels == i, j]) / np.sum(labels == i)
                               for j in range(D)] for i in range(numCenter)])

    return centroids


def args():
    rng = np.random.default_rng(0)
    init = rng.random((3, 4))
    return rng.random((30, 4)), 3, 2, 30, 4, init


KERNEL = kmeans
