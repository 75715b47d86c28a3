"""Run-time negative indices count from the end, as in numpy (issue 16);
with boundscheck an index outside [-n, n) is still an IndexError."""
import numpy as np
import pytest

import asc

SRC = """
import asc

@asc.kernel
def shift(a, b):
    for i in range(a.shape[0]):
        b[i] = a[i - 1]

@asc.kernel
def gather(a, idx, out):
    for i in asc.prange(idx.shape[0]):
        out[i] = a[idx[i]]

@asc.kernel
def at2(a, i: int, j: int, out):
    out[0] = a[i, j]

@asc.kernel
def store_at(a, i: int, v: float):
    a[i] = v
"""


def test_shift_reads_last_element_at_zero():
    m = asc.compile(SRC)
    a = np.arange(10.0)
    b = np.zeros(10)
    m.shift(a, b)
    want = np.array([a[i - 1] for i in range(10)])
    np.testing.assert_array_equal(b, want)


@pytest.mark.parametrize("dtype", [np.int64, np.int32, np.int8])
def test_gather_negative_indices_like_numpy(dtype):
    m = asc.compile(SRC)
    rng = np.random.default_rng(0)
    a = rng.standard_normal(37)
    idx = rng.integers(-37, 37, size=500).astype(dtype)
    out = np.zeros(500)
    m.gather(a, idx, out)
    np.testing.assert_array_equal(out, a[idx])


def test_two_axes_and_store():
    m = asc.compile(SRC)
    a = np.arange(12.0).reshape(3, 4)
    out = np.zeros(1)
    for i in range(-3, 3):
        for j in range(-4, 4):
            m.at2(a, i, j, out)
            assert out[0] == a[i, j]
    x = np.zeros(5)
    m.store_at(x, -2, 7.0)
    assert x[3] == 7.0


def test_boundscheck_after_wrap():
    m = asc.compile(SRC, boundscheck=True)
    a = np.arange(4.0)
    out = np.zeros(1)
    x = np.zeros(4)
    m.store_at(x, -4, 1.0)
    assert x[0] == 1.0
    with pytest.raises(IndexError, match="index -5 is out of bounds for axis 0 with size 4"):
        m.store_at(x, -5, 1.0)
    with pytest.raises(IndexError, match="index 4 is out of bounds"):
        m.store_at(x, 4, 1.0)
    idx = np.array([0, -1, -4], np.int64)
    got = np.zeros(3)
    m.gather(a, idx, got)
    np.testing.assert_array_equal(got, a[idx])
