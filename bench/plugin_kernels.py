"""Kernels of bench/plugins.py: the framework plugins' rows."""
import math

import asc


@asc.kernel
def add1(x, y, out):
    out[0] = x[0] + y[0]


@asc.kernel(fastmath=True)
def softmax_rows(x, out):
    # exp in a loop of its own: vectorised (docs/vecmath.md)
    rows, cols = x.shape
    for r in asc.prange(rows):
        m = x[r, 0]
        for j in range(1, cols):
            m = max(m, x[r, j])
        for j in range(cols):
            out[r, j] = asc.exp(x[r, j] - m)
        s = asc.float32(0.0)
        for j in range(cols):
            s += out[r, j]
        inv = 1.0 / s
        for j in range(cols):
            out[r, j] = out[r, j] * inv


@asc.kernel(fastmath=True)
def layer_norm(x, w, b, out, eps: asc.float32):
    rows, cols = x.shape
    for r in asc.prange(rows):
        s = 0.0
        for j in range(cols):
            s += x[r, j]
        mean = s / cols
        v = 0.0
        for j in range(cols):
            d = x[r, j] - mean
            v += d * d
        rstd = 1.0 / math.sqrt(v / cols + eps)
        for j in range(cols):
            out[r, j] = (x[r, j] - mean) * rstd * w[j] + b[j]
