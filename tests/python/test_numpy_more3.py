"""More numpy functions in kernels (docs/arrays.md, "Rounding, signs,
differences and quantiles"): np.round / np.around / a.round(decimals),
numpy 2's np.sign of complex numbers, np.angle(z, deg=True), the methods
a.argsort() and a.repeat(k), np.diff, np.maximum/minimum.accumulate,
np.percentile and np.quantile, each compared with numpy (dtype, shape and
every element) on several dtypes, and their errors.  Few kernels, many
results each: every kernel is a compile."""
import numpy as np
import pytest

import asc
from test_np_ufuncs import same  # dtype, shape and every element (NaN equal)
from badargs import assert_compile_error_at_line_6

TEXT = """
import numpy as np
import asc

@asc.kernel
def rounds(a, z, i):
    return (np.round(a), np.round(a, 2), np.around(a, -1), a.round(3),
            np.round(z, 1), np.round(i, -1), i.round(1),
            np.round(a[::2] * 2, decimals=1), np.round(a, 10), np.round(a, -2))

@asc.kernel
def signs(z, a):
    return (np.sign(z), np.angle(z, deg=True), np.angle(a, True),
            np.angle(z, deg=False), a.argsort(), a.repeat(2),
            np.sign(z[::-1]) * 2)

@asc.kernel
def round_number(x):
    return np.round(x, 1), np.round(2.5), np.around(-3.5)
"""

FLOATS = [0.5, 1.5, 2.5, -0.5, -2.5, 0.125, 0.375, 2.675, 1234.5678,
          -0.0, np.nan, np.inf, -np.inf, 1e300, 5e-324, 0.15, 0.25, 25.0,
          -35.0, 4.4e-9]
# numpy 2's sign of complex numbers at zeros, infinities and NaNs
SPECIAL = [0j, 3 + 4j, complex(np.inf, 0), complex(np.inf, np.inf),
           complex(np.nan, 1), complex(1, np.nan), complex(-2, 0),
           complex(0, -0.0), complex(np.nan, np.inf), complex(-np.inf, 1),
           complex(2, -np.inf), complex(1e308, 1e308), complex(5e-324, 0),
           complex(-0.0, -0.0), complex(-1e-310, 1e-310)]


@pytest.fixture(scope="module")
def mod():
    return asc.compile(TEXT)


@pytest.mark.parametrize("fdt,cdt", [(np.float64, np.complex128),
                                     (np.float32, np.complex64)])
def test_round(mod, fdt, cdt):
    """Half to even after scaling by numpy's power of ten (in the float's
    own dtype), negative decimals, complex parts, integers kept (decimals
    < 0: rounded in float64 and cast back), views and expressions."""
    rng = np.random.default_rng(0)
    with np.errstate(all="ignore"):
        a = np.concatenate([rng.normal(size=12) * 100, FLOATS]).astype(fdt)
        z = (a + 1j * a[::-1]).astype(cdt)
    for i in (np.array([15, 25, 35, -15, -25, 4, 121, -124], np.int8),
              np.array([150, 250, 349, 351, -12345678901], np.int64)):
        got = mod.rounds(a, z, i)
        with np.errstate(all="ignore"):
            want = (np.round(a), np.round(a, 2), np.around(a, -1),
                    a.round(3), np.round(z, 1), np.round(i, -1), i.round(1),
                    np.round(a[::2] * 2, decimals=1), np.round(a, 10),
                    np.round(a, -2))
        for g, w in zip(got, want):
            same(g, w)


def test_round_of_numbers(mod):
    for x in (2.45, -0.05, 7, 1e17):
        got = mod.round_number(x)
        same(got[0], np.round(x, 1))
        assert got[1] == np.round(2.5) == 2.0 and got[2] == -4.0


@pytest.mark.parametrize("fdt,cdt", [(np.float64, np.complex128),
                                     (np.float32, np.complex64)])
def test_complex_sign_angle_methods(mod, fdt, cdt):
    rng = np.random.default_rng(1)
    with np.errstate(all="ignore"):
        z = np.concatenate([rng.normal(size=6) + 1j * rng.normal(size=6),
                            SPECIAL]).astype(cdt)
    a = np.concatenate([rng.normal(size=8), [0.0, -0.0, -1.0, 2.0, 2.0]]
                       ).astype(fdt)
    got = mod.signs(z, a)
    with np.errstate(all="ignore"):
        want = (np.sign(z), np.angle(z, deg=True), np.angle(a, True),
                np.angle(z, deg=False), a.argsort(), a.repeat(2),
                np.sign(z[::-1]) * 2)
    for k, (g, w) in enumerate(zip(got, want)):
        if k in (1, 3) and fdt == np.float32:
            # numpy's float32 arctan2 (its own loops) and C's cargf differ
            # in the last bit of some angles, deg or not
            assert g.dtype == w.dtype
            np.testing.assert_allclose(g, w, rtol=2e-7, atol=1e-30)
        else:
            same(g, w)


SIG = "a: asc.Tensor[asc.float64, 1], b: asc.Tensor[asc.bool_, 1], n: int"


@pytest.mark.parametrize("body,message", [
    ("np.round(a, n)", "np.round's decimals is an integer written in place"),
    ("np.round(b)", "np.round of bool is not supported in kernels"),
    ("np.angle(a, n)", "np.angle's deg is True or False written in place"),
    ("np.reciprocal(a + 1j)", "np.reciprocal of complex128 is not supported"),
])
def test_bad_arguments(body, message):
    assert_compile_error_at_line_6(SIG, body, message)


DIFF = """
import numpy as np
import asc

@asc.kernel
def diffs(a, m):
    return (np.diff(a), np.diff(a, 2), np.diff(a, n=0), np.diff(m),
            np.diff(m, axis=0), np.diff(m, n=3, axis=-2), np.diff(m.T, 1, 1),
            np.diff(a[::-2]) * 1)

@asc.kernel
def accumulates(a, m):
    return (np.maximum.accumulate(a), np.minimum.accumulate(a),
            np.maximum.accumulate(m), np.minimum.accumulate(m, axis=1),
            np.maximum.accumulate(m, 1), np.maximum.accumulate(a[::-1]))
"""


def sample(shape, dt, rng):
    x = rng.normal(size=shape) * 50
    return x > 0 if dt == np.bool_ else x.astype(dt)


@pytest.fixture(scope="module")
def dmod():
    return asc.compile(DIFF)


@pytest.mark.parametrize("dt", [np.float64, np.float32, np.uint8, np.bool_,
                                np.complex128])
def test_diff_and_running_extremes(dmod, dt):
    """np.diff: n differences one after the other in a's dtype (unsigned
    and small integers wrap, bools are !=), along any axis, none of too
    few elements, n = 0 a copy; np.maximum/minimum.accumulate: a's dtype
    (no widening, unlike cumsum), axis 0 by default, NaN carried on."""
    rng = np.random.default_rng(2)
    for n in (0, 1, 2, 7):
        a, m = sample(n, dt, rng), sample((n, 5), dt, rng)
        if dt == np.float64 and n == 7:
            a[3] = np.nan
            m[2, 1] = np.nan
        got = dmod.diffs(a, m)
        want = (np.diff(a), np.diff(a, 2), np.diff(a, n=0), np.diff(m),
                np.diff(m, axis=0), np.diff(m, n=3, axis=-2),
                np.diff(m.T, 1, 1), np.diff(a[::-2]) * 1)
        for g, w in zip(got, want):
            same(g, w)
        if dt == np.complex128:
            continue
        got = dmod.accumulates(a, m)
        want = (np.maximum.accumulate(a), np.minimum.accumulate(a),
                np.maximum.accumulate(m), np.minimum.accumulate(m, axis=1),
                np.maximum.accumulate(m, 1), np.maximum.accumulate(a[::-1]))
        for g, w in zip(got, want):
            same(g, w)


SIG2 = ("a: asc.Tensor[asc.float64, 1], z: asc.Tensor[asc.complex128, 1], "
        "x: float, n: int")


@pytest.mark.parametrize("body,message", [
    ("np.diff(x)", "np.diff() in kernels takes an array here, not float"),
    ("np.diff(a, -1)", "order must be non-negative but got -1"),
    ("np.diff(a, n)", "np.diff's n is an integer written in place"),
    ("np.diff(a, axis=1)", "axis 1 is out of bounds for array of dimension 1"),
    ("np.diff(a, prepend=0)", "np.diff's prepend is not supported in kernels yet"),
    ("np.maximum.accumulate(x)", "takes an array here, not float"),
    ("np.minimum.accumulate(z)", "np.minimum.accumulate of complex arrays"),
    ("np.maximum.accumulate(a, axis=-2)",
     "axis -2 is out of bounds for array of dimension 1"),
])
def test_bad_diff_and_accumulate(body, message):
    assert_compile_error_at_line_6(SIG2, body, message)


QUANT = """
import numpy as np
import asc

@asc.kernel
def quantiles(a, m, q):
    return (np.percentile(a, 50), np.quantile(a, 0.3),
            np.percentile(a, [10, 50, 99.5]), np.quantile(m, 0.25, axis=0),
            np.quantile(m, (0.0, 0.5, 1.0), axis=1),
            np.percentile(m, 75, axis=-1, keepdims=True),
            np.quantile(m, 0.5, keepdims=True), np.quantile(a, q),
            np.percentile(m.T, [25, 75], axis=0, keepdims=True),
            np.percentile(a[::-2], q * 100))
"""


@pytest.fixture(scope="module")
def qmod():
    return asc.compile(QUANT)


@pytest.mark.parametrize("dt", [np.float64, np.float32, np.int8])
def test_percentile_quantile(qmod, dt):
    """numpy's 'linear' method exactly: its virtual index, its two
    elements (the last twice from n - 1 on), its lerp from either end;
    NaN for a lane holding one; float32 kept for a Python number q,
    float64 for a list (and for a kernel's float64 q); integers'
    differences wrap in their dtype first, as numpy's."""
    rng = np.random.default_rng(3)
    for n in (1, 2, 7, 10):
        a = (rng.normal(size=n) * 50).astype(dt)
        m = (rng.normal(size=(n, 5)) * 50).astype(dt)
        if dt == np.float64 and n == 7:
            a[3] = np.nan
            m[2, 1] = np.nan
        q = 0.37
        got = qmod.quantiles(a, m, q)
        want = (np.percentile(a, 50), np.quantile(a, 0.3),
                np.percentile(a, [10, 50, 99.5]),
                np.quantile(m, 0.25, axis=0),
                np.quantile(m, (0.0, 0.5, 1.0), axis=1),
                np.percentile(m, 75, axis=-1, keepdims=True),
                np.quantile(m, 0.5, keepdims=True),
                np.quantile(a, np.float64(q)),
                np.percentile(m.T, [25, 75], axis=0, keepdims=True),
                np.percentile(a[::-2], np.float64(q) * 100))
        for g, w in zip(got, want):
            same(g, w)


def test_quantile_run_time_errors(qmod):
    a, m = np.arange(4.0), np.ones((4, 2))
    for q in (1.5, -0.1, float("nan")):
        with pytest.raises(ValueError, match=r"Quantiles must be in the "
                           r"range \[0, 1\]"):
            qmod.quantiles(a, m, q)
    with pytest.raises(IndexError, match="index -1 is out of bounds for "
                       "axis 0 with size 0"):
        qmod.quantiles(np.zeros(0), np.zeros((0, 2)), 0.5)


@pytest.mark.parametrize("body,message", [
    ("np.percentile(z, 50)", "a must be an array of real numbers"),
    ("np.quantile(a, 0.5, method='lower')", "np.quantile's method is 'linear'"),
    ("np.quantile(a, z)", "np.quantile's q is a number or a tuple or list"),
    ("np.percentile(a, 5, axis=1)",
     "axis 1 is out of bounds for array of dimension 1"),
    ("np.percentile(a, 5, out=a)", "np.percentile's out is not supported"),
])
def test_bad_quantile_arguments(body, message):
    assert_compile_error_at_line_6(SIG2, body, message)
