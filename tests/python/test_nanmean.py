"""np.nanmean (front/rewrite.c, nanmean; docs/arrays.md, "More numpy
functions"): the sum of the elements that are not NaN over their count,
against numpy on float64, float32 and integer arrays, along each axis,
with keepdims, a tuple of axes, slices of NaNs only, an empty array, a
view, and the compile errors of dtype= and out=."""
import warnings

import numpy as np
import pytest

asc = pytest.importorskip("asc")

SRC = '''
import numpy as np
import asc


@asc.kernel
def whole(a):
    return np.nanmean(a)


@asc.kernel
def rows(a):
    return np.nanmean(a, axis=1)


@asc.kernel
def cols_kept(a):
    return np.nanmean(a, axis=0, keepdims=True)


@asc.kernel
def planes(a):
    return np.nanmean(a, axis=(1, 2))


@asc.kernel
def centred(a):
    # in an expression, against each row's mean
    return a - np.nanmean(a, axis=1, keepdims=True)
'''


@pytest.fixture(scope="module")
def mod():
    return asc.compile(SRC)


def same(got, want):
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    assert got.shape == want.shape
    rtol = 1e-5 if want.dtype == np.float32 else 1e-12
    np.testing.assert_allclose(got, want, rtol=rtol, equal_nan=True)


def nan_np(f, *args, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return f(*args, **kw)


@pytest.mark.parametrize("dt", [np.float64, np.float32])
def test_floats_with_nans(mod, dt):
    r = np.random.default_rng(0)
    a = r.standard_normal((5, 7)).astype(dt)
    a[1, 2] = a[3, 0] = np.nan
    a[4, :] = np.nan         # a row of NaNs only
    same(mod.whole(a), np.nanmean(a))
    same(mod.rows(a), nan_np(np.nanmean, a, axis=1))
    same(mod.cols_kept(a), np.nanmean(a, axis=0, keepdims=True))
    same(mod.centred(a), a - nan_np(np.nanmean, a, axis=1, keepdims=True))
    same(mod.rows(a[::2, ::-1]), nan_np(np.nanmean, a[::2, ::-1], axis=1))


def test_integers_give_float64(mod):
    a = np.arange(12, dtype=np.int32).reshape(3, 4)
    same(mod.whole(a), np.nanmean(a))
    same(mod.rows(a), np.nanmean(a, axis=1))


def test_tuple_of_axes(mod):
    a = np.random.default_rng(1).standard_normal((3, 4, 5))
    a[0, 1, :] = np.nan
    a[2] = np.nan
    same(mod.planes(a), nan_np(np.nanmean, a, axis=(1, 2)))


def test_no_elements_and_only_nans(mod):
    assert np.isnan(mod.whole(np.full(4, np.nan)))
    assert np.isnan(mod.whole(np.zeros(0)))


@pytest.mark.parametrize("call", ["np.nanmean(a, dtype=np.float32)",
                                  "np.nanmean(a, out=a)"])
def test_unsupported_arguments(call):
    src = "import numpy as np\nimport asc\n\n@asc.kernel\ndef f(a):\n" \
          "    return %s\n" % call
    with pytest.raises(asc.CompileError, match="nanmean"):
        asc.compile(src).f(np.ones(3))
