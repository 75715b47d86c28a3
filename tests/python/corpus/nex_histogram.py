# Ported from numba/numba-examples (https://github.com/numba/numba-examples),
# file examples/density_estimation/histogram/impl.py.
# Licence of the source: BSD-2-Clause, Copyright (c) 2017, Numba.
# Port: `@numba.jit(nopython=True)` -> `@asc.kernel` on the entry point, `@asc.func` on the helpers it calls;
# no other change to the kernel's statements (retyped, comments ours).
"""Histogram with uniform bins: helpers that return an array or None, a.flat, int(bin) (numba-examples, the numba block)."""
import numpy as np

import asc


@asc.func
def get_bin_edges(a, bins):
    bin_edges = np.zeros((bins + 1, ), dtype=np.float64)
    a_min = a.min()
    a_max = a.max()
    delta = (a_max - a_min) / bins
    for i in range(bin_edges.shape[0]):
        bin_edges[i] = a_min + i * delta

    bin_edges[-1] = a_max  # exactly, as numpy has it
    return bin_edges


@asc.func
def compute_bin(x, bin_edges):
    # uniform bins
    n = bin_edges.shape[0] - 1
    a_min = bin_edges[0]
    a_max = bin_edges[-1]

    # numpy counts a_max in the last bin
    if x == a_max:
        return n - 1

    bin = int(n * (x - a_min) / (a_max - a_min))

    if bin < 0 or bin >= n:
        return None
    else:
        return bin


@asc.kernel
def numba_histogram(a, bins):
    hist = np.zeros((bins, ), dtype=np.intp)
    bin_edges = get_bin_edges(a, bins)

    for x in a.flat:
        bin = compute_bin(x, bin_edges)
        if bin is not None:
            hist[int(bin)] += 1

    return hist, bin_edges


def args():
    rng = np.random.default_rng(36)
    return rng.normal(0.0, 5.0, 300), 10


KERNEL = numba_histogram
