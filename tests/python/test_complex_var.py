"""np.var / np.std of complex arrays (docs/arrays.md, "Complex numbers"):
real results, the mean of |x - mean|**2, as numpy computes them."""
import numpy as np
import pytest

import asc

K = asc.compile("""
import asc
import numpy as np

@asc.kernel
def whole(z, out):
    out[0] = np.var(z)
    out[1] = np.std(z)
    out[2] = z.var()
    out[3] = z.std(ddof=1)
    out[4] = np.var(z, ddof=2)

@asc.kernel
def axes(z, v0, s1):
    v0[:] = np.var(z, axis=0)
    s1[:] = z.std(axis=1)

@asc.kernel
def returned(z):
    return np.var(z), z.std()

@asc.kernel
def scalar(out):
    out[0] = np.var(3 + 4j)
""")


def _data(dt, shape, seed):
    rng = np.random.default_rng(seed)
    return (rng.standard_normal(shape) * 3 + 1
            + 1j * (rng.standard_normal(shape) - 2)).astype(dt)


@pytest.mark.parametrize("dt,rtol", [(np.complex128, 1e-13),
                                     (np.complex64, 1e-5)])
def test_var_std_whole_array(dt, rtol):
    z = _data(dt, 37, 1)
    rdt = np.float32 if dt == np.complex64 else np.float64
    out = np.zeros(5, rdt)
    K.whole(z, out)
    want = [np.var(z), np.std(z), z.var(), z.std(ddof=1), np.var(z, ddof=2)]
    assert all(w.dtype == rdt for w in map(np.asarray, want))
    np.testing.assert_allclose(out, want, rtol=rtol)
    # a real result: the imaginary parts count (var(z) = var(re) + var(im))
    assert out[0] > np.var(z.real) * 1.01


@pytest.mark.parametrize("dt,rtol", [(np.complex128, 1e-13),
                                     (np.complex64, 1e-5)])
def test_var_std_axis(dt, rtol):
    z = _data(dt, (6, 5), 2)
    rdt = np.float32 if dt == np.complex64 else np.float64
    v0 = np.zeros(5, rdt)
    s1 = np.zeros(6, rdt)
    K.axes(z, v0, s1)
    np.testing.assert_allclose(v0, np.var(z, axis=0), rtol=rtol)
    np.testing.assert_allclose(s1, z.std(axis=1), rtol=rtol)


def test_returned_values_are_real():
    z = _data(np.complex128, 50, 3)
    v, s = K.returned(z)
    assert isinstance(v, float) and isinstance(s, float)
    assert v == pytest.approx(np.var(z), rel=1e-13)
    assert s == pytest.approx(np.std(z), rel=1e-13)


def test_scalar_and_nan():
    out = np.zeros(1)
    K.scalar(out)
    assert out[0] == np.var(3 + 4j) == 0.0
    z = np.array([1 + 1j, complex(np.nan, 0), 2j])
    out = np.zeros(5)
    K.whole(z, out)
    assert np.isnan(out).all() and np.isnan(np.var(z))
