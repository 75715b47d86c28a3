"""np.median along an axis in kernels (docs/arrays.md, "np.median along
an axis"): axis 0, 1, -1, -3 and None, keepdims, overwrite_input, views
(transposed, reversed, strided), odd and even lane lengths, NaN lanes,
empty lanes (numpy's nan), integer and float dtypes, each compared with
numpy (dtype, shape and every element), and the compile errors.  Two
kernels, many results each: every kernel is a compile."""
import warnings

import numpy as np
import pytest

import asc
from test_np_ufuncs import same  # dtype, shape and every element (NaN equal)
from badargs import assert_compile_error_at_line_6

TEXT = """
import numpy as np
import asc

@asc.kernel
def medians(m):
    return (np.median(m, axis=0), np.median(m, axis=1), np.median(m, axis=-1),
            np.median(m, axis=None), np.median(m, axis=0, keepdims=True),
            np.median(m, axis=-1, keepdims=True), np.median(m, keepdims=True),
            np.median(m.T, axis=0), np.median(m[::2, ::-1], axis=1),
            np.median(m[:, ::3], axis=-2), np.median(m, 1, None, True),
            np.median(m * 2, axis=0) - 1)

@asc.kernel
def medians3(c):
    return (np.median(c, axis=1), np.median(c, axis=-3, keepdims=True),
            np.median(c.T, axis=2), np.median(c[0], axis=0), np.median(c))
"""


def want2(m):
    return (np.median(m, axis=0), np.median(m, axis=1),
            np.median(m, axis=-1), np.median(m, axis=None),
            np.median(m, axis=0, keepdims=True),
            np.median(m, axis=-1, keepdims=True),
            np.median(m, keepdims=True), np.median(m.T, axis=0),
            np.median(m[::2, ::-1], axis=1), np.median(m[:, ::3], axis=-2),
            np.median(m.copy(), 1, None, True),  # numpy partitions its a
            np.median(m * 2, axis=0) - 1)


def want3(c):
    return (np.median(c, axis=1), np.median(c, axis=-3, keepdims=True),
            np.median(c.T, axis=2), np.median(c[0], axis=0), np.median(c))


@pytest.fixture(scope="module")
def mod():
    return asc.compile(TEXT)


def check(got, want):
    assert len(got) == len(want)
    for g, w in zip(got, want):
        same(g, w)


def sample(shape, dt, rng):
    x = rng.normal(size=shape) * 50
    if np.dtype(dt).kind == "f":
        return x.astype(dt)
    return np.round(x / 8).astype(dt)  # ties: equal middle elements too


@pytest.mark.parametrize("dt", [np.float64, np.float32, np.int64])
def test_median_along_axes(mod, dt):
    """Odd and even lengths along both axes (1 to 7), the mean of the two
    middle elements in the float dtype (float64 for integers), views
    sorted through a copy (m itself is left as it was)."""
    rng = np.random.default_rng(7)
    for shape in ((5, 4), (4, 7), (1, 6), (6, 1), (2, 2), (3, 3)):
        m = sample(shape, dt, rng)
        keep = m.copy()
        check(mod.medians(m), want2(m))
        assert np.array_equal(m, keep)
        check(mod.medians(np.asfortranarray(m)), want2(m))
    for shape in ((3, 4, 5), (2, 1, 6)):
        c = sample(shape, dt, rng)
        check(mod.medians3(c), want3(c))


def test_median_nan_lanes(mod):
    """A NaN anywhere in a lane makes that lane's median NaN (numpy's
    check of the sorted lane's last element); other lanes keep theirs."""
    for dt in (np.float64, np.float32):
        m = np.arange(24.0).reshape(4, 6).astype(dt)
        m[1, 2] = np.nan
        m[3, 0] = np.nan
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            want = want2(m)
        got = mod.medians(m)
        check(got, want)
        assert np.isnan(got[1][1]) and not np.isnan(got[1][0])
        assert np.isnan(got[0][2]) and not np.isnan(got[0][1])


def test_median_in_the_input_dtype():
    """float32: the two middle elements added in float32 (numpy's mean of
    them: two 3e38 give inf); int64: converted to float64 first (no
    wrap-around of 2**62 + 2**62)."""
    mod = asc.compile(TEXT)
    m = np.array([[3e38, 1.0], [3e38, 2.0]], np.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = want2(m)
        assert np.isinf(want[0][0])
    check(mod.medians(m), want)
    big = 2 ** 62
    i = np.array([[big, -big, 3], [big + 2, -big - 4, 4]], np.int64)
    got = mod.medians(i)
    check(got, want2(i))
    assert got[0][0] == float(big + 1)


def test_median_of_empty_lanes(mod):
    """numpy's mean of an empty slice: nan for each empty lane (numpy
    warns), an empty result where there are no lanes."""
    for shape in ((0, 3), (3, 0), (0, 0)):
        m = np.zeros(shape)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            want = want2(m)
        check(mod.medians(m), want)
    assert np.isnan(mod.medians(np.zeros((0, 3)))[0]).all()


SIG = ("a: asc.Tensor[asc.float64, 2], v: asc.Tensor[asc.float64, 1], "
       "n: int")


@pytest.mark.parametrize("body,message", [
    ("np.median(a, axis=2)", "axis 2 is out of bounds for array of dimension 2"),
    ("np.median(a, axis=-3)", "axis -3 is out of bounds for array of dimension 2"),
    ("np.median(v, axis=1)", "axis 1 is out of bounds for array of dimension 1"),
    ("np.median(a, axis=n)", "axis must be an integer constant"),
    ("np.median(a, keepdims=n)", "np.median's keepdims is True or False written in place"),
    ("np.median(a, 0, v)", "np.median's out is not supported in kernels"),
    ("np.median(v.astype(np.complex128), 0)", "np.median of complex arrays is not supported"),
])
def test_bad_median_arguments(body, message):
    """numpy raises AxisError for an axis out of range: a kernel's axis is
    a constant, so it is a compile error with numpy's message."""
    assert_compile_error_at_line_6(SIG, body, message)
