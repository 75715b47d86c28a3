"""The benchmark loops as plain Python functions over numpy arrays: run
as they are for the CPython reference, and compiled by numba's @njit and
@njit(parallel=True) when numba is installed.  They follow the asc kernels
of bench/kernels/suite_kernels.py line for line; the differences are
numba's, and each says why:

* accumulators start as np.float32(0.0): asc types `s = 0.0` from its
  later float32 uses, numba would make it float64;
* numba has no atomics inside prange, so its parallel histogram is
  histogram_private (per-chunk histograms, then a sum) and the plain
  histogram runs only serially.
"""
import math

import numpy as np

try:
    from numba import prange
except ImportError:  # CPython only: prange is range
    prange = range


def vadd(a, b, c):
    for i in prange(a.shape[0]):
        c[i] = a[i] + b[i]


def saxpy(alpha, x, y, out):
    for i in prange(x.shape[0]):
        out[i] = alpha * x[i] + y[i]


def matmul(a, b, c):
    n, k = a.shape
    m = b.shape[1]
    for i in prange(n):
        for j in range(m):
            s = np.float32(0.0)
            for p in range(k):
                s += a[i, p] * b[p, j]
            c[i, j] = s


def conv2d(input, weight, output):
    batch, in_channels, in_height, in_width = input.shape
    out_channels, in_channels, kernel_height, kernel_width = weight.shape
    out_height = in_height - kernel_height + 1
    out_width = in_width - kernel_width + 1
    for b in range(batch):
        for oc in prange(out_channels):
            for oh in range(out_height):
                for ow in range(out_width):
                    sum = np.float32(0.0)
                    for ic in range(in_channels):
                        for kh in range(kernel_height):
                            for kw in range(kernel_width):
                                sum += input[b, ic, oh + kh, ow + kw] * weight[oc, ic, kh, kw]
                    output[b, oc, oh, ow] = sum


def softmax(x, out):
    rows, cols = x.shape
    for r in prange(rows):
        m = x[r, 0]
        for j in range(1, cols):
            m = max(m, x[r, j])
        s = np.float32(0.0)
        for j in range(cols):
            e = math.exp(x[r, j] - m)
            out[r, j] = e
            s += e
        for j in range(cols):
            out[r, j] = out[r, j] / s


def histogram(x, hist):
    for i in range(x.shape[0]):
        b = min(int(x[i] * 256.0), 255)
        hist[b] += 1


def histogram_private(x, hist):
    chunks = 64
    n = x.shape[0]
    part = np.zeros((chunks, 256), np.int64)
    for c in prange(chunks):
        for i in range(c * n // chunks, (c + 1) * n // chunks):
            b = min(int(x[i] * 256.0), 255)
            part[c, b] += 1
    for c in range(chunks):
        for b in range(256):
            hist[b] += part[c, b]


def fsum(x, out):
    s = np.float32(0.0)
    for i in range(x.shape[0]):
        s += x[i]
    out[0] = s


def dot(a, b, out):
    s = np.float32(0.0)
    for i in prange(a.shape[0]):
        s += a[i] * b[i]
    out[0] = s


def transpose(a, b):
    n, m = a.shape
    for i in prange(n):
        for j in range(m):
            b[j, i] = a[i, j]
