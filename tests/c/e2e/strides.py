# Kernels for tests/c/test_e2e_strides.c: the same kernels over contiguous,
# transposed, strided, reversed, empty and one-element tensors.
import asc


@asc.kernel
def add2(a, b, c):
    n, m = a.shape
    for i in range(n):
        for j in range(m):
            c[i, j] = a[i, j] * 3 + b[i, j]


@asc.kernel
def axpy(x, y, out, alpha):
    for i in range(x.shape[0]):
        out[i] = alpha * x[i] + y[i]


@asc.kernel
def prefix(x, out):
    s = 0.0
    for i in range(x.shape[0]):
        s += x[i]
        out[i] = s


@asc.kernel
def total(x, out):
    s = 0.0
    for i in range(x.shape[0]):
        s += x[i]
    out[0] = s
    out[1] = x.shape[0]


@asc.kernel
def shift(x, y):
    for i in range(x.shape[0]):
        y[i] = x[i] + 1
