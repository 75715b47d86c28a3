"""np.histogram, np.histogram_bin_edges and np.unique in kernels (types/infer_stats.c,
lower_stats.c; docs/arrays.md, "Histograms"), against numpy on several
dtypes and shapes (empty, one element, views that are not contiguous),
with bins a count or an array of edges, range, weights and density, the
tuple unpacked, indexed ([0]) and returned, and numpy's errors."""
import numpy as np
import pytest

import asc
from test_np_ufuncs import same  # dtype, shape and every element (NaN equal)
from badargs import assert_compile_error_at_line_6

TEXT = """
import numpy as np
import asc

@asc.kernel
def hist(a, n: int):
    return np.histogram(a, n)

@asc.kernel
def hist_default(a):
    h, e = np.histogram(a)
    return h, e

@asc.kernel
def hist_views(a, n: int):
    return np.histogram(a[::2], n)[0], np.histogram(a.T, bins=n)[1], np.histogram(a * 2, n)[-2]

@asc.kernel
def hist_range(a, n: int, lo: float, hi: float):
    return np.histogram(a, n, range=(lo, hi))

@asc.kernel
def hist_weights(a, n: int, w):
    h, e = np.histogram(a, n, weights=w)
    return h, e

@asc.kernel
def hist_density(a, n: int, w):
    return np.histogram(a, n, density=True)[0], np.histogram(a, n, weights=w, density=True)[0]

@asc.kernel
def hist_edges(a, b):
    return np.histogram(a, b)

@asc.kernel
def hist_edges_weights(a, b, w):
    return np.histogram(a, bins=b, weights=w)[0]

@asc.kernel
def bin_edges(a, n: int):
    return np.histogram_bin_edges(a, n), np.histogram_bin_edges(a, n, range=(0, 1))

@asc.kernel
def uniques(a):
    v, c = np.unique(a, return_counts=True)
    return np.unique(a), v, c, np.unique(a[::-1], equal_nan=False), np.unique(a * 2)[0:2]

@asc.kernel
def ratio(data, radius, npt: int):
    histu = np.histogram(radius, npt)[0]
    histw = np.histogram(radius, npt, weights=data)[0]
    return histw / histu
"""


@pytest.fixture(scope="module")
def m():
    return asc.compile(TEXT)


def arr(shape, dt, seed=0):
    v = np.random.default_rng(seed).standard_normal(shape) * 10
    return v.astype(dt)


SHAPES = [(0,), (1,), (2,), (37,), (4, 5)]
DTYPES = [np.float64, np.float32, np.int16, np.uint8]


def check(got, want):
    assert len(got) == len(want)
    for g, w in zip(got, want):
        same(g, w)


@pytest.mark.parametrize("dt", DTYPES)
def test_equal_bins(m, dt):
    for shape in SHAPES:
        a = arr(shape, dt, 1)
        for n in (1, 3, 10):
            check(m.hist(a, n), np.histogram(a, n))
        check(m.hist_default(a), np.histogram(a))
    # every element equal: the range is widened by a half on each side
    a = np.full(5, 3, dt)
    check(m.hist(a, 4), np.histogram(a, 4))


def test_values_on_the_edges(m):
    """Elements exactly on bin edges (and on the last edge, which the last
    bin holds) fall where numpy puts them."""
    for a in (np.arange(11.0), np.linspace(0, 1, 101), np.arange(-5, 6).astype(np.float32),
              np.array([0.0, 0.1, 0.2, 0.30000000000000004, 0.7, 1.0])):
        for n in (1, 2, 3, 7, 10, 100):
            check(m.hist(a, n), np.histogram(a, n))


def test_views_and_expressions(m):
    for shape in ((9, 4), (1, 1), (0, 3)):
        a = arr(shape, np.float64, 2)
        want = (np.histogram(a[::2], 5)[0], np.histogram(a.T, bins=5)[1],
                np.histogram(a * 2, 5)[-2])
        check(m.hist_views(a, 5), want)


@pytest.mark.parametrize("dt", [np.float64, np.float32, np.int32])
def test_range(m, dt):
    a = arr((50,), dt, 3)
    for lo, hi in ((-5.0, 5.0), (0.0, 0.0), (-100.0, 100.0), (2.5, 2.5)):
        check(m.hist_range(a, 7, lo, hi), np.histogram(a, 7, range=(lo, hi)))
    a[3] = np.nan if dt != np.int32 else a[3]
    check(m.hist_range(a, 4, -1.0, 1.0), np.histogram(a, 4, range=(-1.0, 1.0)))


@pytest.mark.parametrize("dw", [np.float64, np.float32, np.int64, np.complex128])
def test_weights(m, dw):
    for shape in ((0,), (1,), (40,), (3, 6)):
        a = arr(shape, np.float64, 4)
        w = arr(shape, np.float64, 5).astype(dw)
        check(m.hist_weights(a, 6, w), np.histogram(a, 6, weights=w))
    a = arr((6, 5), np.float64, 6)
    w = arr((5, 6), np.float64, 7).T  # weights a view that is not contiguous
    check(m.hist_weights(a, 6, w), np.histogram(a, 6, weights=w))


def test_density(m):
    for dw in (np.float64, np.float32):
        a = arr((30,), np.float64, 8)
        w = np.abs(arr((30,), np.float64, 9)).astype(dw)
        got = m.hist_density(a, 5, w)
        want = (np.histogram(a, 5, density=True)[0],
                np.histogram(a, 5, weights=w, density=True)[0])
        for g, x in zip(got, want):
            assert g.dtype == x.dtype
            np.testing.assert_allclose(g, x, rtol=1e-12 if dw == np.float64 else 1e-6)


@pytest.mark.parametrize("db", [np.float64, np.int64, np.float32])
def test_edges_array(m, db):
    bins_list = ([0, 1, 2, 3], [-10, -1, 0, 0, 1, 10], [5], [], [-3, 7])
    for shape in ((0,), (1,), (45,), (3, 7)):
        a = arr(shape, np.float64, 10)
        for b in bins_list:
            b = np.array(b, db)
            check(m.hist_edges(a, b), np.histogram(a, b))
            w = arr(shape, np.float64, 11)
            np.testing.assert_allclose(m.hist_edges_weights(a, b, w),
                                       np.histogram(a, bins=b, weights=w)[0],
                                       rtol=1e-12, atol=1e-12)
    # elements on the last edge are in the last bin; integer data
    a = np.array([0, 1, 2, 3, 3, 3, -1, 4], np.int16)
    check(m.hist_edges(a, np.array([0.0, 1.5, 3.0])), np.histogram(a, np.array([0.0, 1.5, 3.0])))


def test_bin_edges(m):
    for dt in (np.float64, np.float32, np.int8):
        a = arr((12,), dt, 12)
        check(m.bin_edges(a, 4), (np.histogram_bin_edges(a, 4),
                                   np.histogram_bin_edges(a, 4, range=(0, 1))))


@pytest.mark.parametrize("dt", [np.float64, np.float32, np.int16, np.uint8, np.bool_])
def test_unique(m, dt):
    rng = np.random.default_rng(14)
    for shape in ((0,), (1,), (2,), (50,), (4, 6)):
        a = rng.integers(0, 6, shape).astype(dt)
        if dt in (np.float64, np.float32) and a.size > 3:
            a.flat[[0, 3]] = np.nan  # NaNs are one value, last (equal_nan)
        want = (np.unique(a), *np.unique(a, return_counts=True),
                np.unique(a[::-1], equal_nan=False), np.unique(a * 2)[0:2])
        check(m.uniques(a), want)


def test_ratio_of_histograms(m):
    """Two histograms of one array, indexed with [0], in an expression
    (NPBench azimint_hist's pattern)."""
    rng = np.random.default_rng(13)
    radius = rng.random(1000)
    data = rng.random(1000)
    got = m.ratio(data, radius, 50)
    want = np.histogram(radius, 50, weights=data)[0] / np.histogram(radius, 50)[0]
    same(got, want)


def test_run_time_errors_are_numpys(m):
    a = np.arange(5.0)
    for call, args in ((lambda: np.histogram(a, 0), lambda: m.hist(a, 0)),
                       (lambda: np.histogram(a, -2), lambda: m.hist(a, -2)),
                       (lambda: np.histogram(a, 3, range=(2.0, 1.0)),
                        lambda: m.hist_range(a, 3, 2.0, 1.0)),
                       (lambda: np.histogram(a, np.array([2.0, 1.0])),
                        lambda: m.hist_edges(a, np.array([2.0, 1.0]))),
                       (lambda: np.histogram(a, 3, weights=np.ones(4)),
                        lambda: m.hist_weights(a, 3, np.ones(4)))):
        with pytest.raises(ValueError) as want:
            call()
        with pytest.raises(ValueError) as got:
            args()
        assert str(want.value) == str(got.value).split(": ", 2)[-1].split("\n")[0] or \
            str(want.value) in str(got.value)
    with pytest.raises(ValueError, match=r"autodetected range of \[nan, nan\] is not finite"):
        np.histogram(np.array([1.0, np.nan]))
    with pytest.raises(ValueError, match=r"autodetected range of \[nan, nan\] is not finite"):
        m.hist(np.array([1.0, np.nan]), 3)
    with pytest.raises(ValueError, match="supplied range of"):
        np.histogram(a, 3, range=(0, np.inf))
    with pytest.raises(ValueError, match="supplied range"):
        m.hist_range(a, 3, 0.0, np.inf)
    with pytest.raises(ValueError, match="autodetected range"):
        m.hist(np.array([1.0, np.inf]), 3)
    # numpy 2: edges that a float32 range cannot separate
    b = np.array([1.0, 1.0 + 1e-7], np.float32)
    with pytest.raises(ValueError) as want:
        np.histogram(b, 10)
    with pytest.raises(ValueError) as got:
        m.hist(b, 10)
    assert str(want.value) in str(got.value)


SIG = ("a: asc.Tensor[asc.float64, 2], v: asc.Tensor[asc.float64, 1], "
       "b: asc.Tensor[asc.bool_, 1], n: int, x: float")


@pytest.mark.parametrize("body,message", [
    ("np.histogram(x)", "np.histogram() in kernels takes an array here, not float"),
    ("np.histogram(v, 'auto')", "np.histogram's bins as a string (an estimator) is not "
                                "supported in kernels yet"),
    ("np.histogram(v, a)", "`bins` must be 1d, when an array"),
    ("np.histogram(v, x)", "`bins` must be an integer, a string, or an array"),
    ("np.histogram(v, 3, range=n)", "np.histogram's range is a pair (lo, hi) written in place"),
    ("np.histogram(v, 3, weights=a)", "weights should have the same shape as a."),
    ("np.histogram(v, 3, density=n)", "np.histogram's density is True or False"),
    ("np.histogram(b)", "np.histogram of bool arrays is not supported in kernels"),
    ("np.histogram(v)[n]", "a tuple[Tensor[int64, 1], Tensor[float64, 1]] can only be "
                           "indexed with a constant"),
    ("np.histogram(v)[2]", "tuple index out of range"),
    ("np.histogram_bin_edges(x, 3)", "np.histogram_bin_edges() in kernels takes an array"),
    ("np.unique(x)", "np.unique() in kernels takes an array here, not float"),
    ("np.unique(v, return_inverse=True)", "np.unique's return_inverse is not supported"),
    ("np.unique(a, axis=0)", "np.unique's axis is not supported in kernels yet"),
    ("np.unique(v, return_counts=n)", "np.unique's return_counts is True or False"),
    ("np.unique(v.astype(np.complex128))", "np.unique of complex arrays is not supported"),
])
def test_bad_arguments_are_compile_errors_at_the_line(body, message):
    assert_compile_error_at_line_6(SIG, body, message)
