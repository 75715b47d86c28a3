# Ported from spcl/npbench (https://github.com/spcl/npbench),
# file npbench/benchmarks/azimint_hist/azimint_hist_numba_n.py at commit f2d7f27d87ba4881991e62c18a607aa6ba52b260.
# Licence of the source: BSD-3-Clause, Copyright (c) 2021, SPCL.
# Port: `@nb.jit(nopython=True, parallel=False, fastmath=True)` -> `@asc.kernel(fastmath=True)` on the entry point, `@asc.func(fastmath=True)` on the helpers it calls;
# no other change to the kernel's statements (retyped, comments ours).
"""Azimuthal integration by histograms: helpers that create and return arrays, .min()/.max(), np.histogram (npbench)."""
import numpy as np

import asc


@asc.func(fastmath=True)
def get_bin_edges(a, bins):
    bin_edges = np.zeros((bins + 1, ), dtype=np.float64)
    a_min = a.min()
    a_max = a.max()
    delta = (a_max - a_min) / bins
    for i in range(bin_edges.shape[0]):
        bin_edges[i] = a_min + i * delta

    bin_edges[-1] = a_max  # the last edge exactly, as numpy has it
    return bin_edges


@asc.func(fastmath=True)
def compute_bin(x, bin_edges):
    # uniform bins
    n = bin_edges.shape[0] - 1
    a_min = bin_edges[0]
    a_max = bin_edges[-1]

    # numpy puts a_max into the last bin
    if x == a_max:
        return n - 1

    return int(n * (x - a_min) / (a_max - a_min))


@asc.func(fastmath=True)
def histogram(a, bins, weights):
    hist = np.zeros((bins, ), dtype=a.dtype)
    bin_edges = get_bin_edges(a, bins)

    for i in range(a.shape[0]):
        bin = compute_bin(a[i], bin_edges)
        hist[bin] += weights[i]

    return hist, bin_edges


@asc.kernel(fastmath=True)
def azimint_hist(data, radius, npt):
    histu = np.histogram(radius, npt)[0]
    histw = histogram(radius, npt, weights=data)[0]
    return histw / histu


def args():
    rng = np.random.default_rng(22)
    return rng.random(200), rng.random(200), 10


KERNEL = azimint_hist
