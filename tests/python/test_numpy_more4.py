"""More numpy in kernels (docs/arrays.md, "var and std over a tuple of
axes; clip with one bound"): np.var / np.std / a.var() / a.std() with
axis= a tuple of axes (ddof, keepdims, negative and mixed-sign axes, views,
inside larger expressions), and np.clip / a.clip with a bound of None or
left out (min= and max= too), each compared with numpy (dtype, shape and
values) on several dtypes, and their errors.  Two kernels, many results
each: every kernel is a compile."""
import warnings

import numpy as np
import pytest

import asc
from badargs import assert_compile_error_at_line_6

TEXT = """
import numpy as np
import asc

@asc.kernel
def spreads(x):
    return (np.var(x, axis=(1, 2)), np.std(x, axis=(0, 2), ddof=1),
            x.var(axis=(-1, 0), keepdims=True), x.std(axis=(2, -2)),
            np.var(x, axis=(0, 1, 2)),
            np.std(x, axis=(0, 1, 2), keepdims=True),
            x[::2, :, ::-1].var(axis=(0, 2), ddof=2),
            np.std(x * 2 + 1, axis=(1, 0)),
            x - x.mean(axis=2, keepdims=True)
            / (np.std(x, axis=(1, 2), keepdims=True) + 1),
            np.var(x, axis=(0, 1), ddof=30),
            np.var(x, axis=(1, 2)) - np.var(x.reshape(x.shape[0], -1), axis=1))

@asc.kernel
def clips(a, lo, hi):
    return (np.clip(a, None, hi), np.clip(a, lo, None), a.clip(max=hi),
            a.clip(min=lo), a.clip(lo), a[::-2].clip(None, 3),
            np.clip(a * 2, a_min=None, a_max=1.5), np.clip(a, min=lo),
            np.clip(a, None, None), a.clip(), np.clip(a, max=hi, min=lo),
            np.clip(a, None, 1000), a.clip(-1000))
"""


@pytest.fixture(scope="module")
def mod():
    return asc.compile(TEXT)


# the kernels' text run by numpy itself: the reference
NUMPY = {}
exec(TEXT.replace("@asc.kernel\n", ""), NUMPY)


def spreads_numpy(x):
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # ddof=30
        return NUMPY["spreads"](x)[:10]


@pytest.mark.parametrize("dt", [np.float64, np.float32, np.int64, np.int32,
                                np.uint8])
def test_var_std_over_tuple_of_axes(mod, dt):
    """Each result's dtype and shape are numpy's (a number when every axis
    is reduced without keepdims); the values agree to the rounding of the
    sums (float32 is summed in float64 here, as along one axis); ddof past
    the count gives inf, as numpy's division by max(n - ddof, 0)."""
    rng = np.random.default_rng(4)
    x = (rng.normal(size=(4, 5, 6)) * 10 + 50).astype(dt)
    got = mod.spreads(x)
    want = spreads_numpy(x)
    rtol = 1e-5 if dt == np.float32 else 1e-12
    for i, (g, w) in enumerate(zip(got, want)):
        g, w = np.asarray(g), np.asarray(w)
        assert (g.dtype, g.shape) == (w.dtype, w.shape), i
        np.testing.assert_allclose(g, w, rtol=rtol, err_msg=str(i))
    assert np.isscalar(got[4]) and np.isinf(got[9]).all()
    # one loop over the tuple's axes in C order: the same bits as the
    # reduction along one axis of the array with those axes merged
    assert not np.asarray(got[10]).any()


def test_var_std_over_tuple_of_axes_nan(mod):
    x = np.ones((4, 5, 6))
    x[1, 2, 3] = np.nan
    got = mod.spreads(x)
    want = spreads_numpy(x)
    for g, w in zip(got[:10], want):
        np.testing.assert_array_equal(np.isnan(g), np.isnan(w))


@pytest.mark.parametrize("dt", [np.float64, np.float32, np.int64, np.int32,
                                np.int8])
def test_clip_with_one_bound(mod, dt):
    """None (or a bound left out) is no bound on that side; neither gives a
    copy; a Python int past the dtype's range is no bound, as in numpy 2."""
    a = (np.arange(-9, 12) * 0.7).astype(dt)
    if dt in (np.float64, np.float32):
        a[3] = np.nan
    lo, hi = dt(-2), dt(3)
    got = mod.clips(a, lo, hi)
    want = NUMPY["clips"](a, lo, hi)
    for i, (g, w) in enumerate(zip(got, want)):
        assert (g.dtype, g.shape) == (w.dtype, w.shape), i
        np.testing.assert_array_equal(g, w, err_msg=str(i))
    assert not np.shares_memory(got[9], a)


SIG = "x: asc.Tensor[asc.float64, 3], n: int"


@pytest.mark.parametrize("body,message", [
    ("np.var(x, axis=(0, -3))", "duplicate value in 'axis'"),
    ("x.std(axis=(1, 1))", "duplicate value in 'axis'"),
    ("np.std(x, axis=(0, 3))",
     "axis 3 is out of bounds for an array of dimension 3"),
    ("np.var(x, axis=(0, n))", "axis must be an integer constant"),
    ("np.var(x, axis=())", "names 1 to 3 axes"),
    ("np.clip(x, 1)", "clip() missing 1 required positional argument: "
     "'a_max'"),
    ("np.clip(x, a_max=None)", "clip() missing 1 required positional "
     "argument: 'a_min'"),
    ("x.clip(1, min=2)", "got multiple values for argument 'min'"),
])
def test_bad_arguments(body, message):
    assert_compile_error_at_line_6(SIG, body, message)
