"""Kernels of the framework plugin tests (test_plugin_torch.py,
test_plugin_jax.py), and of nothing else: line numbers below are part of
what the tests check (the kernel that raises)."""
import numpy as np

import asc


@asc.kernel
def softmax_rows(x, out):
    n, m = x.shape
    for i in asc.prange(n):
        mx = x[i, 0]
        for j in range(m):
            mx = max(mx, x[i, j])
        s = 0.0
        for j in range(m):
            e = np.exp(x[i, j] - mx)
            out[i, j] = e
            s += e
        for j in range(m):
            out[i, j] = out[i, j] / s


@asc.kernel
def softmax_rows_bwd(y, gy, gx):
    n, m = y.shape
    for i in asc.prange(n):
        d = 0.0
        for j in range(m):
            d += y[i, j] * gy[i, j]
        for j in range(m):
            gx[i, j] = y[i, j] * (gy[i, j] - d)


@asc.kernel
def scale(x, alpha: asc.float32, out):
    for i in asc.prange(x.shape[0]):
        out[i] = alpha * x[i]


@asc.kernel
def add_inplace(x, y):
    for i in range(x.shape[0]):
        x[i] += y[i]


@asc.kernel
def check_positive(x, out):
    for i in range(x.shape[0]):
        if x[i] < 0:
            raise ValueError("negative input")   # CHECK_POSITIVE_RAISE
        out[i] = x[i]


@asc.kernel
def writes_input(x, y):
    x[0] = y[0]


def raise_line():
    """The line of check_positive's raise, as the error names it."""
    import inspect
    lines, first = inspect.getsourcelines(check_positive.py_func)
    for k, text in enumerate(lines):
        if "CHECK_POSITIVE_RAISE" in text:
            return first + k
    raise AssertionError("no raise line")
