"""More numpy functions of ASC_NUMPY_FUNCS (types/infer_numpy2.c,
lower_numpy2.c): np.trace and np.diag, and np.flipud and np.fliplr (views,
as np.flip; lower_view.c), each compared with numpy on several
dtypes and shapes (empty, one element, offsets past either side, views that
are not contiguous), and their errors (docs/arrays.md, "Diagonals and flips")."""
import numpy as np
import pytest

import asc
from test_np_ufuncs import same  # dtype, shape and every element (NaN equal)
from badargs import assert_compile_error_at_line_6

DIAG = """
import numpy as np
import asc

@asc.kernel
def traces(a, k):
    return np.trace(a), np.trace(a, k), np.trace(a, offset=-k), np.trace(a.T, 1), np.trace(a[::2, ::-1])

@asc.kernel
def diag_2d(a, k):
    return np.diag(a), np.diag(a, k), np.diag(a, k=-k), np.diag(a.T, 1), np.diag(a[::2, ::-1] + a[:1, :1])

@asc.kernel
def diag_1d(v, k):
    return np.diag(v), np.diag(v, k), np.diag(v, k=-k), np.diag(v[::-2])

@asc.kernel
def flips_2d(a):
    return np.flipud(a), np.fliplr(a), np.flipud(a.T) * 2, np.fliplr(a[::2, 1:]), np.flipud(np.fliplr(a))

@asc.kernel
def flipud_1d(v):
    return np.flipud(v), np.flipud(v[::-2]) + 1

@asc.kernel
def flip_write(a):
    b = np.flipud(a)
    b[0, 0] = 7
    np.fliplr(a)[0, 0] = 9
"""

DTYPES = [np.float64, np.float32, np.int32, np.int64, np.uint8, np.bool_,
          np.complex128]


def arr(shape, dt, seed):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=shape) * 10
    if np.dtype(dt).kind == "c":
        return (x + 1j * rng.normal(size=shape)).astype(dt)
    if dt == np.bool_:
        return x > 0
    if np.dtype(dt).kind == "u":
        return np.abs(x).astype(dt)
    return x.astype(dt)


@pytest.fixture(scope="module")
def mod():
    return asc.compile(DIAG)


@pytest.mark.parametrize("dt", DTYPES)
def test_trace(mod, dt):
    for shape in ((1, 1), (3, 3), (4, 6), (6, 4), (0, 3), (2, 0)):
        a = arr(shape, dt, 1)
        for k in (0, 1, 2, -1, 5, -7):
            got = mod.traces(a, k)
            want = (np.trace(a), np.trace(a, k), np.trace(a, offset=-k),
                    np.trace(a.T, 1), np.trace(a[::2, ::-1]))
            for g, w in zip(got, want):
                assert np.asarray(g).dtype == np.asarray(w).dtype, (g, w)
                if np.dtype(dt).kind == "c":  # numpy: pairwise from 4 on
                    np.testing.assert_allclose(g, w, rtol=1e-13)
                else:  # fewer than 8 addends: numpy adds them in order too
                    np.testing.assert_array_equal(g, w)


def test_trace_of_a_long_diagonal(mod):
    a = arr((40, 40), np.float64, 2)
    got = mod.traces(a, 3)
    np.testing.assert_allclose(got[0], np.trace(a), rtol=1e-13)
    ai = arr((40, 40), np.int64, 3)
    assert mod.traces(ai, 3)[1] == np.trace(ai, 3)


@pytest.mark.parametrize("dt", DTYPES)
def test_diag(mod, dt):
    for shape in ((1, 1), (3, 3), (4, 6), (6, 4), (0, 3), (2, 0)):
        a = arr(shape, dt, 4)
        for k in (0, 1, -2, 5):
            got = mod.diag_2d(a, k)
            want = (np.diag(a), np.diag(a, k), np.diag(a, k=-k),
                    np.diag(a.T, 1), np.diag(a[::2, ::-1] + a[:1, :1]))
            kept = a.copy()
            for g, w in zip(got, want):
                same(g, w)
                # a copy, not a view of a (numpy's diag of a 2-D array is a
                # read-only view; a kernel's result is a new array)
                g[...] = 0
            same(a, kept)
    for n in (0, 1, 4, 7):
        v = arr((n,), dt, 5)
        for k in (0, 2, -3):
            got = mod.diag_1d(v, k)
            want = (np.diag(v), np.diag(v, k), np.diag(v, k=-k), np.diag(v[::-2]))
            for g, w in zip(got, want):
                same(g, w)


@pytest.mark.parametrize("dt", [np.float64, np.int32, np.bool_, np.complex128])
def test_flipud_fliplr(mod, dt):
    for shape in ((1, 1), (3, 4), (5, 2), (0, 3), (2, 3, 4)):
        a = arr(shape, dt, 6)
        got = mod.flips_2d(a)
        want = (np.flipud(a), np.fliplr(a), np.flipud(a.T) * 2,
                np.fliplr(a[::2, 1:]), np.flipud(np.fliplr(a)))
        for g, w in zip(got, want):
            same(g, w)
    for n in (0, 1, 6):
        v = arr((n,), dt, 7)
        for g, w in zip(mod.flipud_1d(v), (np.flipud(v), np.flipud(v[::-2]) + 1)):
            same(g, w)


def test_flipud_fliplr_are_views(mod):
    """numpy's flipud and fliplr are views: a store through them is a store
    into the array."""
    a, b = np.zeros((3, 4)), np.zeros((3, 4))
    mod.flip_write(a)
    np.flipud(b)[0, 0] = 7
    np.fliplr(b)[0, 0] = 9
    same(a, b)


SIG = ("a: asc.Tensor[asc.float64, 2], v: asc.Tensor[asc.float64, 1], "
       "c: asc.Tensor[asc.float64, 3], n: int, x: float")


@pytest.mark.parametrize("body,message", [
    ("np.trace(v)", "diag requires an array of at least two dimensions"),
    ("np.trace(c)", "np.trace of an array of 3 dimensions is not supported in kernels yet"),
    ("np.trace(a, x)", "np.trace's offset must be an integer, not float"),
    ("np.trace(n)", "np.trace() in kernels takes an array here, not int"),
    ("np.trace(a, 0, 0)", "np.trace() takes at most 2 arguments (3 given)"),
    ("np.diag(c)", "Input must be 1- or 2-d."),
    ("np.diag(a, k=x)", "np.diag's k must be an integer, not float"),
    ("np.diag(x)", "np.diag() in kernels takes an array here, not float"),
    ("np.fliplr(v)", "Input must be >= 2-d."),
    ("np.flipud(n)", "flipud() takes an array, not a Python int"),
    ("np.flipud(a, 0)", "np.flipud() takes 1 argument (2 given)"),
])
def test_bad_arguments_are_compile_errors_at_the_line(body, message):
    assert_compile_error_at_line_6(SIG, body, message)


def test_numpy_gives_the_same_errors():
    """The messages above are numpy's where numpy has the check."""
    with pytest.raises(ValueError, match="at least two dimensions"):
        np.trace(np.ones(3))
    with pytest.raises(ValueError, match="Input must be 1- or 2-d."):
        np.diag(np.ones((2, 2, 2)))
    with pytest.raises(TypeError):
        np.trace(np.ones((2, 2)), 1.5)
    with pytest.raises(ValueError, match="Input must be >= 2-d."):
        np.fliplr(np.ones(3))
