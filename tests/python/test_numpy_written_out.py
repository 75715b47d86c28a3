"""numpy functions kernels write with others while resolving
(front/rewrite.c, asc__rewrite_numpy_more; docs/arrays.md):
np.count_nonzero, np.isclose, np.allclose, np.ptp, np.nansum,
np.nanprod, np.cross, np.expand_dims, np.flatnonzero, the dtype= of sum,
prod and mean,
and a.sort().  Each against numpy on the same inputs (values and
dtypes), infinities, nans and integer arrays included; and the errors of
the forms kernels do not take."""
import numpy as np
import pytest

import asc


@asc.kernel
def count(a):
    return (np.count_nonzero(a), np.count_nonzero(a, axis=1),
            np.count_nonzero(a > 0.5, axis=0, keepdims=True))


@asc.kernel
def closeness(a, b):
    return (np.isclose(a, b), np.allclose(a, b),
            np.isclose(a, b, rtol=0.1, atol=0.0),
            np.allclose(a, b, equal_nan=True),
            np.isclose(a, b, 1e-3, 1e-6, True))


@asc.kernel
def close_scalars(x, y):
    return np.isclose(x, y)


@asc.kernel
def sort_in_place(a):
    a.sort()


@asc.kernel
def sorted_columns(a):
    b = a.copy()
    b.sort(axis=0)
    return b


def test_count_nonzero():
    a = np.random.default_rng(0).random((4, 5))
    a[a < 0.3] = 0
    total, rows, cols = count(a)
    assert total == np.count_nonzero(a)
    np.testing.assert_array_equal(rows, np.count_nonzero(a, axis=1))
    np.testing.assert_array_equal(
        cols, np.count_nonzero(a > 0.5, axis=0, keepdims=True))
    assert count(np.zeros((2, 3)))[0] == 0


EDGES_A = [1.0, np.inf, -np.inf, np.nan, 1.0, 1e10, 0.0, np.inf, 1.0, np.nan]
EDGES_B = [1.0 + 1e-9, np.inf, np.inf, np.nan, 1.1, 1.00001e10, 1e-9, 1.0,
           np.inf, 0.0]


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_isclose_and_allclose_are_numpys(dtype):
    a = np.array(EDGES_A, dtype)
    b = np.array(EDGES_B, dtype)
    want = (np.isclose(a, b), np.allclose(a, b),
            np.isclose(a, b, rtol=0.1, atol=0.0),
            np.allclose(a, b, equal_nan=True),
            np.isclose(a, b, 1e-3, 1e-6, True))
    for got, w in zip(closeness(a, b), want):
        np.testing.assert_array_equal(got, w)
    # a close pair, and the same with nans in the same places
    c = np.array([1.0, 2.0, np.nan], dtype)
    assert not closeness(c, c + 1e-9)[1]
    assert closeness(c, c + 1e-9)[3]


def test_isclose_of_integers_and_scalars():
    ia, ib = np.array([1, 2, 3]), np.array([1, 2, 4])
    for got, w in zip(closeness(ia, ib)[:3],
                      (np.isclose(ia, ib), np.allclose(ia, ib),
                       np.isclose(ia, ib, rtol=0.1, atol=0.0))):
        np.testing.assert_array_equal(got, w)
    assert close_scalars(1.0, 1.0 + 1e-9)
    assert not close_scalars(1.0, 1.1)
    assert not close_scalars(1.0, np.inf)


def test_sort_method_sorts_in_place():
    x = np.random.default_rng(1).random(9)
    y = x.copy()
    sort_in_place(y)
    np.testing.assert_array_equal(y, np.sort(x))
    m = np.random.default_rng(2).random((3, 4))
    np.testing.assert_array_equal(sorted_columns(m), np.sort(m, axis=0))


@asc.kernel
def spreads(a):
    return (np.ptp(a), np.ptp(a, axis=0), np.ptp(a, axis=1, keepdims=True),
            np.nansum(a), np.nansum(a, axis=0),
            np.nanprod(a, axis=1, keepdims=True),
            np.nansum(a, dtype=np.float32))


@asc.kernel
def crossed(a, b):
    return np.cross(a, b)


@asc.kernel
def expanded(a):
    return (np.expand_dims(a, 0), np.expand_dims(a, 1),
            np.expand_dims(a, -1), np.expand_dims(a, axis=-2))


@asc.kernel
def sums_in(a):
    return (a.sum(dtype=np.float64), np.sum(a, axis=0, dtype=np.float64),
            a.mean(dtype=np.float64), np.prod(a, dtype=np.int64),
            np.count_nonzero(a, axis=(0, 1)))


def same(got, want):
    for g, w in zip(got, want):
        g, w = np.asarray(g), np.asarray(w)
        assert g.dtype == w.dtype and g.shape == w.shape, (g, w)
        np.testing.assert_array_equal(g, w)


@asc.kernel
def spreads_3d(a):
    return (np.ptp(a, axis=(0, 1)), np.ptp(a, axis=(0, 2), keepdims=True),
            np.nansum(a, axis=(1, 2)))


def test_ptp_nansum_nanprod():
    a = np.random.default_rng(3).random((3, 4))
    same(spreads(a)[:3], (np.ptp(a), np.ptp(a, axis=0),
                          np.ptp(a, axis=1, keepdims=True)))
    b = np.random.default_rng(8).random((2, 3, 4))
    b[1, 1, 1] = np.nan
    same(spreads_3d(b)[2:], (np.nansum(b, axis=(1, 2)),))
    b[1, 1, 1] = 0.5
    same(spreads_3d(b), (np.ptp(b, axis=(0, 1)),
                         np.ptp(b, axis=(0, 2), keepdims=True),
                         np.nansum(b, axis=(1, 2))))
    a[1, 2] = np.nan
    a[0, :] = np.nan
    same(spreads(a)[3:], (np.nansum(a), np.nansum(a, axis=0),
                          np.nanprod(a, axis=1, keepdims=True),
                          np.nansum(a, dtype=np.float32)))


def test_cross_of_3_vectors():
    a = np.random.default_rng(4).random((5, 3))
    b = np.random.default_rng(5).random((5, 3))
    same([crossed(a[0], b[0])], [np.cross(a[0], b[0])])
    same([crossed(a, b)], [np.cross(a, b)])
    same([crossed(a, b[1])], [np.cross(a, b[1])])      # broadcast


@asc.kernel
def nonzero_at(a):
    return np.flatnonzero(a), np.flatnonzero(a > 0.5)


def test_flatnonzero():
    a = np.random.default_rng(7).random((3, 4))
    a[a < 0.3] = 0
    same(nonzero_at(a), (np.flatnonzero(a), np.flatnonzero(a > 0.5)))
    same(nonzero_at(np.zeros(5)), (np.flatnonzero(np.zeros(5)),) * 2)
    same(nonzero_at(a.T), (np.flatnonzero(a.T), np.flatnonzero(a.T > 0.5)))


def test_expand_dims():
    a = np.arange(12.0).reshape(3, 4)
    same(expanded(a), (np.expand_dims(a, 0), np.expand_dims(a, 1),
                       np.expand_dims(a, -1), np.expand_dims(a, -2)))


def test_reductions_with_a_dtype():
    a = np.random.default_rng(6).random((2, 3, 4)).astype(np.float32) * 3
    same(sums_in(a), (a.sum(dtype=np.float64),
                      np.sum(a, axis=0, dtype=np.float64),
                      a.mean(dtype=np.float64), np.prod(a, dtype=np.int64),
                      np.count_nonzero(a, axis=(0, 1))))


@pytest.mark.parametrize("body, message", [
    ("    b = a.sort()\n    return b\n", "sorts a in place and gives None"),
    ("    return np.isclose(twice(a), a)\n",
     "reads each operand several times"),
    ("    return np.isclose(a, a, equal_nan=a[0] > 0)\n",
     "equal_nan must be True or False"),
    ("    return np.ptp(twice(a))\n", "reads each operand several times"),
    ("    return np.expand_dims(a, a.ndim)\n", "an integer written in the"),
    ("    return np.nansum(a, out=a)\n",
     r"nansum\(\.\.\., out=\) is not supported"),
])
def test_forms_kernels_do_not_take(body, message):
    src = ("import asc\nimport numpy as np\n\n@asc.func\ndef twice(x):\n"
           "    return x * 2.0\n\n@asc.kernel\ndef k(a):\n" + body)
    with pytest.raises(asc.CompileError, match=message) as e:
        asc.compile(src).k(np.ones(3))
    assert ":10:" in str(e.value)     # the body's line, in the text


# ------------------------------------------- math names kernels now take

MATH_ONE = ["asinh", "acosh", "atanh", "degrees", "radians", "cbrt"]


@pytest.mark.parametrize("name", MATH_ONE)
def test_math_functions_of_a_real(name):
    """math.asinh, acosh, atanh (np.arcsinh's), math.degrees and radians
    (CPython's products) and math.cbrt were 'module math has no kernel
    builtin'; each gives CPython's value on a float64."""
    import math
    src = (f"import asc\nimport math\n\n@asc.kernel\ndef k(x):\n"
           f"    return math.{name}(x)\n")
    k = asc.compile(src).k
    for x in (0.25, 0.7, 1.0, 1.5, 3.0, -0.5):
        try:
            want = getattr(math, name)(x)
        except ValueError:
            # acosh(0.25), atanh(1), atanh(1.5): CPython's error, as the
            # kernel's other math functions give it (docs/types.md)
            with pytest.raises(ValueError, match="math domain error"):
                k(x)
            continue
        got = k(x)
        assert got == pytest.approx(want, rel=4e-16, abs=0), (name, x)


GAMMA = asc.compile("import asc\nimport math\n\n@asc.kernel\ndef g(x):\n"
                    "    return math.gamma(x)\n\n@asc.kernel\ndef lg(x):\n"
                    "    return math.lgamma(x)\n")


@pytest.mark.parametrize("x", [0.5, 1.0, 2.5, 10.0, -0.5, -2.5, 170.5,
                               171.7, 1e300, np.inf, -np.inf, np.nan, 0.0,
                               -0.0, -1.0, -3.0])
def test_math_gamma_and_lgamma_are_cpythons(x):
    """math.gamma and math.lgamma (libm's tgamma and lgamma_r, a few ulps
    from CPython's own): CPython's values, and its errors, a pole
    (0, the negative integers, and gamma's -inf) a ValueError and an
    overflow an OverflowError."""
    import math
    for kernel, ref in ((GAMMA.g, math.gamma), (GAMMA.lg, math.lgamma)):
        try:
            want = ref(x)
        except (ValueError, OverflowError) as e:
            with pytest.raises(type(e), match="math (domain|range) error"):
                kernel(x)
            continue
        got = kernel(x)
        if math.isnan(want):
            assert math.isnan(got)
        else:
            assert got == pytest.approx(want, rel=1e-13, abs=1e-15), (ref, x)
