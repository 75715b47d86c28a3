# The asc kernels of the benchmark suite (bench/suite.py).  Kernel text:
# compiled with asc.compile("bench/kernels/suite_kernels.py"), never
# imported.  The same loops are written in C in bench/ref/loops.c and for
# numba/CPython in bench/py_loops.py.  conv2d is the seed's, compiled from
# examples/python/seed_kernels.asc as written there.
import math

import asc


@asc.kernel
def vadd(a, b, c):
    for i in asc.prange(a.shape[0]):
        c[i] = a[i] + b[i]


@asc.kernel
def saxpy(alpha, x, y, out):
    for i in asc.prange(x.shape[0]):
        out[i] = alpha * x[i] + y[i]


@asc.kernel
def matmul(a, b, c):
    n, k = a.shape
    m = b.shape[1]
    for i in asc.prange(n):
        for j in range(m):
            s = 0.0
            for p in range(k):
                s += a[i, p] * b[p, j]
            c[i, j] = s


# The naive text of the loop-nest optimiser's goal (docs/optimizer.md):
# plain range loops, so parallelize and interchange decide everything.
@asc.kernel
def matmul_naive(a, b, c):
    n, m = c.shape
    K = a.shape[1]
    for i in range(n):
        for j in range(m):
            s = 0.0
            for p in range(K):
                s += a[i, p] * b[p, j]
            c[i, j] = s


# `@` in a kernel: asc_krt.gemm on the runtime's BLAS (docs/arrays.md),
# the loops when none is loaded or ASC_BLAS=0.
@asc.kernel
def matmul_op(a, b, c):
    c[:, :] = a @ b


@asc.kernel(fastmath=True)
def matmul_naive_fast(a, b, c):
    n, m = c.shape
    K = a.shape[1]
    for i in range(n):
        for j in range(m):
            s = 0.0
            for p in range(K):
                s += a[i, p] * b[p, j]
            c[i, j] = s


@asc.kernel
def softmax(x, out):
    rows, cols = x.shape
    for r in asc.prange(rows):
        m = x[r, 0]
        for j in range(1, cols):
            m = max(m, x[r, j])
        s = 0.0
        for j in range(cols):
            e = math.exp(x[r, j] - m)
            out[r, j] = e
            s += e
        for j in range(cols):
            out[r, j] = out[r, j] / s


@asc.kernel
def histogram(x, hist):
    for i in asc.prange(x.shape[0]):
        b = min(int(x[i] * 256.0), 255)
        asc.atomic_add(hist, b, 1)


@asc.kernel
def dot(a, b, out):
    s = 0.0
    for i in asc.prange(a.shape[0]):
        s += a[i] * b[i]
    out[0] = s


# A float sum in a plain range: the default mode keeps Python's order (one
# dependent chain of additions); fastmath=True lets the compiler reorder it
# (a reduction pfor over the team, vector lanes in each part).
@asc.kernel
def fsum(x, out):
    s = asc.float32(0.0)
    for i in range(x.shape[0]):
        s += x[i]
    out[0] = s


@asc.kernel(fastmath=True)
def fsum_fast(x, out):
    s = asc.float32(0.0)
    for i in range(x.shape[0]):
        s += x[i]
    out[0] = s


# The naive transpose (docs/optimizer.md, the tile pass): plain range
# loops; parallelize makes the row loop a pfor, tile runs it in tiles.
@asc.kernel
def transpose(a, b):
    n, m = a.shape
    for i in range(n):
        for j in range(m):
            b[j, i] = a[i, j]
