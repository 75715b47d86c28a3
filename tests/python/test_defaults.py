"""Parameter defaults and keyword arguments (issue 16): kernels called from
Python fill left-out parameters with their defaults, which specialise like
passed scalars; @asc.func helpers take defaults and keywords in kernels."""
import numpy as np
import pytest

import asc

SRC = """
import asc

@asc.func
def axpy(x, y, i, alpha=2.0, beta=0.0):
    return alpha * x[i] + y[i] + beta

@asc.kernel
def k(a, b, out, alpha=1.0, shift: int = 3, neg=-1.5):
    for i in range(a.shape[0]):
        out[i] = alpha * a[i] + b[i] + shift + neg

@asc.kernel
def h(a, b, out):
    for i in range(a.shape[0]):
        out[i] = axpy(a, b, i) + axpy(a, b, i, beta=1.0) + axpy(a, b, i, 0.5)
"""

a = np.arange(6.0)
b = np.ones(6)


def test_text_kernel_defaults_and_keywords():
    m = asc.compile(SRC)
    out = np.zeros(6)
    m.k(a, b, out)
    np.testing.assert_array_equal(out, a + b + 3 - 1.5)
    m.k(a, b, out, alpha=2.0)
    np.testing.assert_array_equal(out, 2 * a + b + 3 - 1.5)
    m.k(a, b, out, 3.0, neg=0.0)
    np.testing.assert_array_equal(out, 3 * a + b + 3)
    m.k(a, b, out=out, shift=10)
    np.testing.assert_array_equal(out, a + b + 10 - 1.5)
    with pytest.raises(TypeError, match="missing argument for parameter 'out'"):
        m.k(a, b)


def test_text_defaults_are_read_when_a_call_leaves_one_out():
    """Reading a text kernel's defaults parses its text (a quarter of a
    millisecond of a cached first call, docs/latency.md): a call that
    passes every argument never reads them."""
    m = asc.compile(SRC)
    out = np.zeros(6)
    m.k(a, b, out, 1.0, 3, -1.5)
    assert callable(m.k._defaults)
    m.k(a, b, out)
    assert m.k._defaults == {"alpha": 1.0, "shift": 3, "neg": -1.5}
    np.testing.assert_array_equal(out, a + b + 3 - 1.5)


def test_helper_defaults_and_keywords():
    m = asc.compile(SRC)
    out = np.zeros(6)
    m.h(a, b, out)
    np.testing.assert_array_equal(out, (2 * a + b) + (2 * a + b + 1) + (0.5 * a + b))


@asc.kernel
def deco(a, out, scale=2.0, offset: int = 1):
    for i in range(a.shape[0]):
        out[i] = a[i] * scale + offset


def test_decorated_kernel_defaults():
    out = np.zeros(6)
    deco(a, out)
    np.testing.assert_array_equal(out, a * 2 + 1)
    deco(a, out, offset=5)
    np.testing.assert_array_equal(out, a * 2 + 5)
    deco(a, out, 0.5)
    np.testing.assert_array_equal(out, a * 0.5 + 1)
