"""An @asc.func whose asc.prange loop holds an inner loop, called from a
kernel (issue 16: it failed with 'IR verifier: break out of a parallel
loop'); a `return` inside such a loop is a compile error, not an ICE."""
import numpy as np
import pytest

import asc

CONV = """
import asc

@asc.func
def conv1d(x, w, y, n, m):
    for i in asc.prange(n):
        acc = 0.0
        for k in range(m):
            acc += x[i + k] * w[k]
        y[i] = acc

@asc.func
def conv2d(x, w, y):
    oh = y.shape[0]
    ow = y.shape[1]
    for i in asc.prange(oh):
        for j in range(ow):
            s = 0.0
            for p in range(w.shape[0]):
                for q in range(w.shape[1]):
                    s += x[i + p, j + q] * w[p, q]
            y[i, j] = s

@asc.kernel
def k1(x, w, y, n: int, m: int):
    conv1d(x, w, y, n, m)

@asc.kernel
def k2(x, w, y):
    conv2d(x, w, y)
"""


def test_helper_prange_with_inner_loop():
    mod = asc.compile(CONV)
    rng = np.random.default_rng(1)
    x = rng.standard_normal(100)
    w = rng.standard_normal(5)
    y = np.zeros(96)
    mod.k1(x, w, y, 96, 5)
    np.testing.assert_allclose(y, np.convolve(x, w[::-1], "valid"))


def test_helper_conv2d_prange():
    mod = asc.compile(CONV)
    rng = np.random.default_rng(2)
    x = rng.standard_normal((20, 30)).astype(np.float32)
    w = rng.standard_normal((3, 4)).astype(np.float32)
    y = np.zeros((18, 27), np.float32)
    mod.k2(x, w, y)
    want = np.zeros_like(y)
    for p in range(3):
        for q in range(4):
            want += x[p:p + 18, q:q + 27] * w[p, q]
    np.testing.assert_allclose(y, want, rtol=1e-5, atol=1e-5)


def test_return_in_helper_prange_is_an_error():
    src = """
import asc

@asc.func
def h(y):
    for i in asc.prange(y.shape[0]):
        for k in range(3):
            y[i] += k
        return

@asc.kernel
def k(y):
    h(y)
"""
    with pytest.raises(asc.CompileError, match="'return' inside a parallel loop"):
        asc.compile(src).k(np.zeros(4))
