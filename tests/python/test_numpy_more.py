"""The numpy functions of ASC_NUMPY_FUNCS (types/infer_numpy.c,
lower_numpy.c), each compared with numpy on several shapes and dtypes
(empty, one element, negative shifts and axes, views that are not
contiguous), and their errors (docs/arrays.md, "More numpy functions")."""
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
def roll_flat(a, s):
    return np.roll(a, s), np.roll(a, (s, 1)), np.roll(a[::-1], s), np.roll(a + 1, s)

@asc.kernel
def roll_1d(a, s):
    return np.roll(a, s, axis=0), np.roll(a, s, axis=-1), np.roll(a, (s, -1), axis=(0, 0))

@asc.kernel
def roll_2d(a, s):
    return (np.roll(a, s, axis=0), np.roll(a, s, axis=-1), np.roll(a, (s, 1), axis=(0, 1)),
            np.roll(a, s, axis=(0, 1)), np.roll(a.T, s, axis=1))

@asc.kernel
def tile(a, r):
    return np.tile(a, r), np.tile(a, (2, r)), np.tile(a, (r, 1, 2)), np.tile(a[::2], 2)

@asc.kernel
def tile_2d(a, r):
    return np.tile(a, r), np.tile(a, (r, 2)), np.tile(a.T, (1, r))

@asc.kernel
def repeat_1d(a, r):
    return np.repeat(a, r), np.repeat(a, r, axis=0), np.repeat(a * 2, repeats=r, axis=-1)

@asc.kernel
def repeat_2d(a, r):
    return np.repeat(a, r), np.repeat(a, r, axis=0), np.repeat(a, r, axis=-1), np.repeat(a.T, r, 1)

@asc.kernel
def stacks_1d(a, b):
    return (np.hstack((a, b)), np.vstack((a, b)), np.column_stack((a, b)),
            np.concatenate((a, b)), np.concatenate((a, b), axis=None),
            np.stack((a, b)), np.stack((a, b), axis=-1), np.hstack((a, b, a[::-1])))

@asc.kernel
def stacks_2d(a, b):
    return (np.hstack((a, b)), np.vstack((a, b)), np.column_stack((a, b)),
            np.concatenate((a, b), axis=None), np.stack((a, b), axis=1),
            np.stack((a, b), axis=2))

@asc.kernel
def concat_rows(a, b):
    return np.concatenate((a, b), axis=0), np.vstack((a, b, a))

@asc.kernel
def concat_cols(a, b):
    return np.concatenate((a, b), axis=1), np.hstack((a, b)), np.column_stack((b, a))

@asc.kernel
def stack_mixed(v, m):
    return np.column_stack((v, m)), np.vstack((m, v[:m.shape[1]]))

@asc.kernel
def stack_only(a, b):
    return np.stack((a, b))

@asc.kernel
def tris(a, k):
    return np.triu(a), np.tril(a), np.triu(a, k), np.tril(a, k=k), np.triu(a.T, -k)

@asc.kernel
def outers(a, b):
    return np.add.outer(a, b), np.subtract.outer(a, b), np.multiply.outer(a, b)

@asc.kernel
def outers_bool(a, b):
    return np.add.outer(a, b), np.multiply.outer(a, b)

@asc.kernel
def averages(a, w):
    return np.average(a), np.average(a, weights=w), a - np.average(a)

@asc.kernel
def average_only(a):
    return np.average(a)

@asc.kernel
def averages_2d(a, w, v):
    return (np.average(a, axis=0), np.average(a, axis=-1, weights=w),
            np.average(a, 1, v), np.average(a.T, weights=w.T, axis=0))

@asc.kernel
def bincounts(x, w, n):
    return np.bincount(x), np.bincount(x, minlength=n), np.bincount(x, w), np.bincount(x[::-1], weights=w[::-1], minlength=n)

@asc.kernel
def bincount_only(x):
    return np.bincount(x)

@asc.kernel
def searches(a, v, s):
    return (np.searchsorted(a, v), np.searchsorted(a, v, side='right'), np.searchsorted(a, s),
            np.searchsorted(a, s, 'right'), np.searchsorted(a[::2], v.T))

@asc.kernel
def digitizes(x, bins, s):
    return (np.digitize(x, bins), np.digitize(x, bins, right=True), np.digitize(s, bins),
            np.digitize(x.T, bins[::-1], True))

@asc.kernel
def covs(m, y, d):
    return (np.cov(m), np.cov(m, y), np.cov(m, rowvar=False), np.cov(m.T, y.T, False),
            np.cov(m, bias=True), np.cov(m, ddof=d), np.corrcoef(m), np.corrcoef(m, y),
            np.corrcoef(m.T, rowvar=False))

@asc.kernel
def covs_1d(x, y):
    return np.cov(x), np.cov(x, y), np.corrcoef(x), np.corrcoef(x, y), np.cov(x, bias=True) + 1

@asc.kernel
def indices(a, n):
    return np.indices((n, 3)), np.indices(a.shape), np.indices((n,)), np.indices(a[::2].shape) * 2

@asc.kernel
def sorts(a):
    return np.sort(a), np.sort(a, axis=None), np.sort(a[::-1], axis=0), np.sort(a * 2, kind='stable')

@asc.kernel
def in_expressions(a, s):
    c = np.roll(a, s) + np.tile(a, 1)
    return c * 2, np.repeat(a, 2)[::2] - a, np.sum(np.hstack((a, a)))
"""


@pytest.fixture(scope="module")
def m():
    return asc.compile(TEXT)


def arr(shape, dt, seed=0):
    v = np.random.default_rng(seed).standard_normal(shape) * 10
    return v.astype(dt) if dt != np.bool_ else v > 0


DTYPES = [np.float64, np.int16, np.bool_, np.complex64]
SHIFTS = [0, 1, 2, -1, -7, 13, 100]
# shapes of one number of axes share one compiled kernel
SHAPES_BY_NDIM = [[(0,), (1,), (5,)], [(3, 4), (0, 3), (1, 1)], [(2, 3, 4)]]


def dtypes_and_shapes(dtypes, groups):
    """Every group of shapes with the first dtype, the first group with
    the others (each pair is one compiled specialisation)."""
    return ([(dtypes[0], g) for g in groups] + [(dt, groups[0]) for dt in dtypes[1:]])


@pytest.mark.parametrize("dt,shapes", dtypes_and_shapes(DTYPES, SHAPES_BY_NDIM))
def test_roll_flattened(m, dt, shapes):
    for shape in shapes:
        a = arr(shape, dt)
        for s in SHIFTS:
            got = m.roll_flat(a, s)
            want = (np.roll(a, s), np.roll(a, (s, 1)), np.roll(a[::-1], s), np.roll(a + 1, s))
            for g, w in zip(got, want):
                same(g, w)


@pytest.mark.parametrize("dt", DTYPES)
def test_roll_1d_along_axes(m, dt):
    for n in (0, 1, 6):
        a = arr((n,), dt)
        for s in SHIFTS:
            for g, w in zip(m.roll_1d(a, s), (np.roll(a, s, axis=0), np.roll(a, s, axis=-1),
                                              np.roll(a, (s, -1), axis=(0, 0)))):
                same(g, w)


@pytest.mark.parametrize("dt", [np.float64, np.bool_])
@pytest.mark.parametrize("shapes", [[(3, 4), (1, 5), (0, 4), (4, 0)], [(2, 3, 2)]])
def test_roll_2d_along_axes(m, dt, shapes):
    for shape in shapes:
        a = arr(shape, dt, 1)
        for view in (a, a[::-1], a[..., ::2]):
            for s in SHIFTS:
                want = (np.roll(view, s, axis=0), np.roll(view, s, axis=-1),
                        np.roll(view, (s, 1), axis=(0, 1)), np.roll(view, s, axis=(0, 1)),
                        np.roll(view.T, s, axis=1))
                for g, w in zip(m.roll_2d(view, s), want):
                    same(g, w)


@pytest.mark.parametrize("dt", DTYPES)
def test_tile_1d(m, dt):
    for shape in ((0,), (1,), (4,)):
        a = arr(shape, dt, 2)
        for r in (0, 1, 3):
            want = (np.tile(a, r), np.tile(a, (2, r)), np.tile(a, (r, 1, 2)), np.tile(a[::2], 2))
            for g, w in zip(m.tile(a, r), want):
                same(g, w)


@pytest.mark.parametrize("dt,shapes", dtypes_and_shapes([np.float32, np.bool_],
                                                       [[(2, 3), (1, 1), (0, 2)], [(3, 1, 2)]]))
def test_tile_nd(m, dt, shapes):
    for shape in shapes:
        a = arr(shape, dt, 3)
        for view in (a, a[::-1]):
            for r in (0, 1, 2):
                for g, w in zip(m.tile_2d(view, r), (np.tile(view, r), np.tile(view, (r, 2)),
                                                     np.tile(view.T, (1, r)))):
                    same(g, w)


@pytest.mark.parametrize("dt", DTYPES)
def test_repeat_1d(m, dt):
    for n in (0, 1, 5):
        a = arr((n,), dt, 4)
        for r in (0, 1, 3):
            want = (np.repeat(a, r), np.repeat(a, r, axis=0), np.repeat(a * 2, r, axis=-1))
            for g, w in zip(m.repeat_1d(a, r), want):
                same(g, w)


@pytest.mark.parametrize("dt", [np.float64, np.uint16])
def test_repeat_2d(m, dt):
    for shape in ((2, 3), (1, 4), (0, 3), (3, 0)):
        a = arr(shape, dt, 5)
        for view in (a, a[:, ::-1]):
            for r in (0, 1, 2):
                want = (np.repeat(view, r), np.repeat(view, r, axis=0),
                        np.repeat(view, r, axis=-1), np.repeat(view.T, r, 1))
                for g, w in zip(m.repeat_2d(view, r), want):
                    same(g, w)


def test_negative_counts_raise_numpys_error(m):
    a = np.arange(3.0)
    for call in (lambda: m.repeat_1d(a, -1), lambda: m.tile(a, -1),
                 lambda: m.repeat_2d(np.zeros((2, 3)), -2)):
        with pytest.raises(ValueError, match="negative dimensions are not allowed"):
            call()
    # numpy repeats nothing of an empty array, and refuses nothing
    for g, w in zip(m.repeat_1d(np.zeros(0), -1), (np.repeat(np.zeros(0), -1),) * 3):
        same(g, w)


@pytest.mark.parametrize("da,db", [(np.float64, np.float64), (np.int8, np.uint8),
                                   (np.bool_, np.int32), (np.complex64, np.float64)])
def test_stacks_of_vectors(m, da, db):
    for n in (0, 1, 4):
        a, b = arr((n,), da, 6), arr((n,), db, 7)
        want = (np.hstack((a, b)), np.vstack((a, b)), np.column_stack((a, b)),
                np.concatenate((a, b)), np.concatenate((a, b), axis=None),
                np.stack((a, b)), np.stack((a, b), axis=-1), np.hstack((a, b, a[::-1])))
        for g, w in zip(m.stacks_1d(a, b), want):
            same(g, w)


@pytest.mark.parametrize("da,db", [(np.float64, np.float32), (np.int16, np.int64)])
def test_stacks_of_matrices(m, da, db):
    for shape in ((2, 3), (1, 1), (0, 2), (3, 0)):
        a, b = arr(shape, da, 8), arr(shape, db, 9)
        views = ((a, b), (a[::-1], np.asfortranarray(b))) if da == np.float64 else ((a, b),)
        for x, y in views:
            want = (np.hstack((x, y)), np.vstack((x, y)), np.column_stack((x, y)),
                    np.concatenate((x, y), axis=None), np.stack((x, y), axis=1),
                    np.stack((x, y), axis=2))
            for g, w in zip(m.stacks_2d(x, y), want):
                same(g, w)


def test_concatenate_arrays_of_other_lengths(m):
    a, b = np.arange(6.).reshape(2, 3), np.arange(12.).reshape(4, 3)
    for g, w in zip(m.concat_rows(a, b), (np.concatenate((a, b), axis=0), np.vstack((a, b, a)))):
        same(g, w)
    c = np.arange(8, dtype=np.int32).reshape(2, 4)
    for g, w in zip(m.concat_cols(a, c), (np.concatenate((a, c), axis=1), np.hstack((a, c)),
                                          np.column_stack((c, a)))):
        same(g, w)
    v, mm = np.arange(3.), np.arange(6.).reshape(3, 2)
    for g, w in zip(m.stack_mixed(v, mm), (np.column_stack((v, mm)),
                                           np.vstack((mm, v[:mm.shape[1]])))):
        same(g, w)


def test_stack_shape_errors_are_numpys(m):
    a, b = np.zeros((2, 3)), np.zeros((2, 4))
    msg = ("all the input array dimensions except for the concatenation axis must "
           "match exactly, but along dimension 1, the array at index 0 has size 3 "
           "and the array at index 1 has size 4")
    with pytest.raises(ValueError) as ei:
        m.concat_rows(a, b)
    assert msg in str(ei.value)
    with pytest.raises(ValueError) as ei:
        np.concatenate((a, b), axis=0)
    assert msg in str(ei.value)
    with pytest.raises(ValueError, match="all input arrays must have the same shape"):
        m.stack_only(np.zeros(3), np.zeros(4))
    same(m.stack_only(np.zeros(3), np.ones(3)), np.stack((np.zeros(3), np.ones(3))))
    with pytest.raises(ValueError, match="along dimension 0, the array at index 0 has size 3"):
        m.stack_mixed(np.zeros(3), np.zeros((4, 2)))


@pytest.mark.parametrize("dt,shapes", dtypes_and_shapes(
    DTYPES, [[(4, 4), (3, 5), (5, 2), (1, 1), (0, 3)], [(2, 3, 4)], [(4,), (0,)]]))
def test_triu_tril(m, dt, shapes):
    for shape in shapes:
        a = arr(shape, dt, 10)
        for k in (0, 1, -1, 2, -3, 9, -9):
            want = (np.triu(a), np.tril(a), np.triu(a, k), np.tril(a, k=k), np.triu(a.T, -k))
            for g, w in zip(m.tris(a, k), want):
                same(g, w)


@pytest.mark.parametrize("dts,shapes", dtypes_and_shapes(
    [(np.float64, np.float64), (np.int8, np.int8), (np.uint8, np.int16),
     (np.complex128, np.float32)],
    [[((3,), (4,)), ((0,), (2,)), ((1,), (1,))], [((2, 3), (4,))], [((2,), (3, 2))]]))
def test_ufunc_outer(m, dts, shapes):
    da, db = dts
    for sa, sb in shapes:
        a, b = arr(sa, da, 11), arr(sb, db, 12)
        for x in (a, a[::-1]):
            want = (np.add.outer(x, b), np.subtract.outer(x, b), np.multiply.outer(x, b))
            for g, w in zip(m.outers(x, b), want):
                same(g, w)


def test_ufunc_outer_of_bools(m):
    a, b = np.array([True, False, True]), np.array([False, True])
    for g, w in zip(m.outers_bool(a, b), (np.add.outer(a, b), np.multiply.outer(a, b))):
        same(g, w)


def test_results_inside_expressions(m):
    a = np.arange(7.)
    got = m.in_expressions(a, 3)
    same(got[0], (np.roll(a, 3) + np.tile(a, 1)) * 2)
    same(got[1], np.repeat(a, 2)[::2] - a)
    assert got[2] == np.sum(np.hstack((a, a)))


@pytest.mark.parametrize("da,dw", [(np.float64, np.float64), (np.float32, np.float32),
                                   (np.int64, np.float64), (np.int16, np.int32),
                                   (np.bool_, np.float64), (np.complex128, np.float64)])
def test_average(m, da, dw):
    # numpy sums float32 pairwise in float32, kernels in order in float64:
    # near a cancellation the two differ by numpy's rounding
    tol = dict(rtol=1e-5, atol=1e-4) if da == np.float32 else dict(rtol=1e-13)
    for n in (1, 2, 7):
        a, w = arr((n,), da, 13), np.abs(arr((n,), dw, 14)) + 1
        got = m.averages(a, w)
        want = (np.average(a), np.average(a, weights=w), a - np.average(a))
        for g, x in zip(got, want):
            assert np.asarray(g).dtype == np.asarray(x).dtype, (g, x)
            np.testing.assert_allclose(g, x, **tol)
    a = arr((3, 4), da, 15)
    w, v = np.abs(arr((3, 4), dw, 16)) + 1, np.abs(arr((4,), dw, 17)) + 1
    for x in (a, a[::-1, ::2]):
        ww = w[:, :x.shape[1]]
        vv = v[:x.shape[1]]
        want = (np.average(x, axis=0), np.average(x, axis=-1, weights=ww),
                np.average(x, 1, vv), np.average(x.T, weights=ww.T, axis=0))
        for g, y in zip(m.averages_2d(x, ww, vv), want):
            assert g.dtype == y.dtype and g.shape == y.shape, (g, y)
            np.testing.assert_allclose(g, y, **tol)


def test_average_errors_are_numpys(m):
    with pytest.raises(ZeroDivisionError, match="Weights sum to zero, can't be normalized"):
        m.averages(np.arange(3.), np.array([1., -1., 0.]))
    with pytest.raises(TypeError, match="Axis must be specified when shapes of a and weights differ."):
        m.averages(np.arange(3.), np.ones(4))
    with pytest.raises(ValueError, match="Length of weights not compatible with specified axis."):
        m.averages_2d(np.ones((2, 3)), np.ones((2, 3)), np.ones(4))
    with pytest.raises(TypeError, match="1D weights expected when shapes of a and weights differ."):
        m.averages_2d(np.ones((2, 3)), np.ones((2, 2)), np.ones(3))
    # numpy's mean of no element: nan (with numpy's warning)
    assert np.isnan(m.average_only(np.zeros(0)))


@pytest.mark.parametrize("dx,dw", [(np.int64, np.float64), (np.uint8, np.float32),
                                   (np.bool_, np.int16), (np.int32, np.bool_)])
def test_bincount(m, dx, dw):
    rng = np.random.default_rng(18)
    for n in (0, 1, 7, 300):
        x = rng.integers(0, 2 if dx == np.bool_ else 40, n).astype(dx)
        w = arr((n,), dw, 19)
        for ml in (0, 3, 60):
            want = (np.bincount(x), np.bincount(x, minlength=ml), np.bincount(x, w),
                    np.bincount(x[::-1], weights=w[::-1], minlength=ml))
            for g, y in zip(m.bincounts(x, w, ml), want):
                if n == 0 and y.dtype == np.int64 and g.dtype == np.float64:
                    y = y.astype(np.float64)  # numpy: int64 zeros of no element (arrays.md)
                np.testing.assert_allclose(g, y, rtol=1e-12)
                assert g.dtype == y.dtype and g.shape == y.shape, (g, y)


def test_bincount_errors_are_numpys(m):
    x = np.array([1, 2])
    cases = [(lambda f: f(np.array([1, -1]), np.ones(2), 0),
              "'list' argument must have no negative elements"),
             (lambda f: f(x, np.ones(2), -1), "'minlength' must not be negative"),
             (lambda f: f(x, np.ones(3), 0), "The weights and list don't have the same length.")]
    for call, msg in cases:
        with pytest.raises(ValueError) as want:
            call(lambda a, b, c: np.bincount(a, b, minlength=c))
        assert msg in str(want.value)
        with pytest.raises(ValueError, match=msg.replace(".", "[.]")):
            call(m.bincounts)
    same(m.bincount_only(np.zeros(0, np.int64)), np.bincount(np.zeros(0, np.int64)))


SORTED = [np.array([]), np.array([3.0]), np.array([-1.0, 0.0, 0.0, 2.5, 7.0, 7.0, 9.0]),
          np.array([0.0, 1.0, np.nan, np.nan])]


@pytest.mark.parametrize("a", SORTED)
@pytest.mark.parametrize("dv", [np.float64, np.int16, np.float32])
def test_searchsorted(m, a, dv):
    v = np.array([[-2, 0, 7, 2.5], [9, 10, np.nan, 1]], dtype=np.float64)
    if dv != np.float64:
        v = np.nan_to_num(v).astype(dv)
    for s in (0.0, 7.0, -5.0, np.nan, 2.5):
        got = m.searches(a, v, s)
        want = (np.searchsorted(a, v), np.searchsorted(a, v, side='right'),
                np.searchsorted(a, s), np.searchsorted(a, s, 'right'),
                np.searchsorted(a[::2], v.T))
        for g, w in zip(got, want):
            assert np.asarray(g).dtype == np.int64 and np.shape(g) == np.shape(w), (g, w)
            np.testing.assert_array_equal(g, w)


@pytest.mark.parametrize("bins", [np.array([]), np.array([1.0]), np.array([0.0, 1.0, 2.0, 2.0, 5.0]),
                                  np.array([5.0, 2.0, 2.0, 1.0, 0.0]), np.array([2.0, 2.0, 2.0])])
@pytest.mark.parametrize("dx", [np.float64, np.int64, np.float32])
def test_digitize(m, bins, dx):
    x = np.array([[-1, 0, 1, 2], [2.5, 5, 6, 1.5]]).astype(dx)
    for s in (-1, 2, 2.0, 7.5):
        got = m.digitizes(x, bins, s)
        want = (np.digitize(x, bins), np.digitize(x, bins, right=True), np.digitize(s, bins),
                np.digitize(x.T, bins[::-1], True))
        for g, w in zip(got, want):
            assert np.asarray(g).dtype == np.int64 and np.shape(g) == np.shape(w), (g, w)
            np.testing.assert_array_equal(g, w)


def test_digitize_of_unordered_bins_is_numpys_error(m):
    bins, x = np.array([1.0, 0.0, 2.0]), np.ones((2, 2))
    with pytest.raises(ValueError, match="bins must be monotonically increasing or decreasing"):
        np.digitize(x, bins)
    with pytest.raises(ValueError, match="bins must be monotonically increasing or decreasing"):
        m.digitizes(x, bins, 1.0)


@pytest.mark.parametrize("dt", [np.float64, np.float32, np.int32, np.complex128, np.bool_])
def test_cov_corrcoef(m, dt):
    for shape in ((3, 5), (2, 2), (4, 1), (3, 0)):
        a, b = arr(shape, dt, 20), arr((2, shape[1]), dt, 21)
        # reversed views (another specialisation, a long compile) in the
        # float64 and complex128 kernels only: CI time
        pairs = ((a, b), (a[::-1, ::-1], b[:, ::-1]))
        for x, y in pairs if dt in (np.float64, np.complex128) else pairs[:1]:
            for d in (0, 1, 2):
                with np.errstate(all="ignore"), warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    try:
                        want = (np.cov(x), np.cov(x, y), np.cov(x, rowvar=False),
                                np.cov(x.T, y.T, False), np.cov(x, bias=True),
                                np.cov(x, ddof=d), np.corrcoef(x), np.corrcoef(x, y),
                                np.corrcoef(x.T, rowvar=False))
                    except ValueError as ex:  # y.T of one row is not transposed back
                        with pytest.raises(ValueError, match="along dimension 1"):
                            m.covs(x, y, d)
                        assert "along dimension 1" in str(ex)
                        continue
                    got = m.covs(x, y, d)
                for g, w in zip(got, want):
                    w = np.asarray(w)
                    if w.ndim == 0:  # numpy squeezes a single variable (arrays.md)
                        w = w.reshape(1, 1)
                    if w.shape == (0, 0):  # numpy's float64 of no variable (arrays.md)
                        w = w.astype(g.dtype)
                    assert g.dtype == w.dtype and g.shape == w.shape, (g, w)
                    np.testing.assert_allclose(g, w, rtol=1e-9, atol=1e-12)
    for n in (1, 2, 6):
        x, y = arr((n,), dt, 22), arr((n,), dt, 23)
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            got = m.covs_1d(x, y)
            want = (np.cov(x), np.cov(x, y), np.corrcoef(x), np.corrcoef(x, y),
                    np.cov(x, bias=True) + 1)
        for g, w in zip(got, want):
            assert np.asarray(g).dtype == w.dtype and np.shape(g) == w.shape, (g, w)
            np.testing.assert_allclose(g, w, rtol=1e-9, atol=1e-12)


def test_cov_of_other_lengths_is_numpys_error(m):
    x, y = np.ones((2, 3)), np.ones((2, 4))
    with pytest.raises(ValueError) as want:
        np.cov(x, y)
    with pytest.raises(ValueError) as got:
        m.covs(x, y, 1)
    assert str(want.value) in str(got.value)


def test_indices(m):
    for shape in ((2, 3, 4), (0, 2, 1), (1, 1, 1)):
        a = np.zeros(shape)
        for n in (0, 1, 4):
            want = (np.indices((n, 3)), np.indices(a.shape), np.indices((n,)),
                    np.indices(a[::2].shape) * 2)
            for g, w in zip(m.indices(a, n), want):
                same(g, w)
    with pytest.raises(ValueError, match="negative dimensions are not allowed"):
        np.indices((-1, 3))
    with pytest.raises(ValueError, match="negative dimensions are not allowed"):
        m.indices(a, -1)


@pytest.mark.parametrize("dt", [np.float64, np.float32, np.int8, np.uint16, np.bool_])
def test_sort(m, dt):
    rng = np.random.default_rng(24)
    for shape in ((0,), (1,), (2,), (7,), (64,), (3, 5), (4, 0), (2, 3, 9)):
        a = arr(shape, dt, 25)
        if dt in (np.float64, np.float32) and a.size > 2:
            a.flat[rng.integers(0, a.size, 2)] = np.nan  # numpy sorts NaN last
            a.flat[0] = -np.inf
        for g, w in zip(m.sorts(a), (np.sort(a), np.sort(a, axis=None), np.sort(a[::-1], axis=0),
                                     np.sort(a * 2, kind='stable'))):
            same(g, w)
    # many equal keys and a long run: every heap path
    a = rng.integers(0, 3, 1000).astype(dt)
    for g, w in zip(m.sorts(a), (np.sort(a), np.sort(a, axis=None), np.sort(a[::-1]),
                                 np.sort(a * 2))):
        same(g, w)


ARGSORT = """
import numpy as np
import asc

@asc.kernel
def argsorts(a):
    return (np.argsort(a), np.argsort(a, axis=None), np.argsort(a[::-1], axis=0),
            np.argsort(a * 2, kind='stable'))
"""


@pytest.mark.parametrize("dt", [np.float64, np.int8, np.bool_])
def test_argsort_is_numpys_stable_order(dt):
    mod = asc.compile(ARGSORT)
    rng = np.random.default_rng(28)
    for shape in ((0,), (1,), (7,), (300,), (3, 5), (4, 0), (2, 3, 9)):
        a = arr(shape, dt, 29)
        if dt == np.float64 and a.size > 2:
            a.flat[rng.integers(0, a.size, 2)] = np.nan
        for x in (a, np.round(a / 8).astype(dt)):  # with ties
            want = (np.argsort(x, kind="stable"), np.argsort(x, axis=None, kind="stable"),
                    np.argsort(x[::-1], axis=0, kind="stable"),
                    np.argsort(x * 2, kind="stable"))
            for g, w in zip(mod.argsorts(x), want):
                same(g, w.astype(np.int64))


MEDIAN = """
import numpy as np
import asc

@asc.kernel
def medians(a):
    return np.median(a), np.median(a[::-1] * 2), np.median(a) - np.median(a[1:])
"""


@pytest.mark.parametrize("dt", [np.float64, np.float32, np.int16, np.bool_])
def test_median(dt):
    mod = asc.compile(MEDIAN)
    rng = np.random.default_rng(26)
    for shape in ((1,), (2,), (7,), (10,), (3, 4), (2, 3, 5)):
        a = arr(shape, dt, 27)
        for x in (a, np.round(a / 4) if dt != np.bool_ else a):  # ties too
            x = x.astype(dt)
            got = mod.medians(x)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                want = (np.median(x), np.median(x[::-1] * 2), np.median(x) - np.median(x[1:]))
            for g, w in zip(got, want):
                assert np.asarray(g).dtype == np.asarray(w).dtype, (g, w)
                np.testing.assert_array_equal(g, w)
    a = np.array([1.0, np.nan, 3.0])
    assert all(np.isnan(g) for g in mod.medians(a)) and np.isnan(np.median(a))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert np.isnan(np.median(np.zeros(0)))  # numpy: nan with a warning
    assert np.isnan(mod.medians(np.zeros(1))[2])


SIG = ("a: asc.Tensor[asc.float64, 2], v: asc.Tensor[asc.float64, 1], "
       "b: asc.Tensor[asc.bool_, 1], n: int, x: float")


@pytest.mark.parametrize("body,message", [
    ("np.roll(a, x)", "np.roll's shift must be an integer, not float"),
    ("np.roll(a, 1, axis=2)", "axis 2 is out of bounds for array of dimension 2"),
    ("np.roll(a, 1, axis=n)", "np.roll's axis must be an integer constant"),
    ("np.roll(a, (1, 2, 3), axis=(0, 1))", "shape mismatch: objects cannot be broadcast"),
    ("np.roll(n, 1)", "np.roll() in kernels takes an array here, not int"),
    ("np.tile(a, x)", "np.tile's reps must be an integer, not float"),
    ("np.tile(a, v)", "np.tile's reps must be an integer, not Tensor"),
    ("np.repeat(a, v)", "np.repeat in kernels takes one number of repeats"),
    ("np.repeat(a, 2, axis=-3)", "axis -3 is out of bounds for array of dimension 2"),
    ("np.repeat(a, 1.5)", "np.repeat's repeats must be an integer, not float"),
    ("np.concatenate((a, v))", "all the input arrays must have same number of dimensions, "
                               "but the array at index 0 has 2 dimension(s) and the array "
                               "at index 1 has 1 dimension(s)"),
    ("np.concatenate(a)", "np.concatenate() in kernels takes a tuple of arrays written in place"),
    ("np.concatenate(())", "need at least one array to concatenate"),
    ("np.concatenate((a, a), axis=2)", "axis 2 is out of bounds for array of dimension 2"),
    ("np.concatenate((v, x))", "np.concatenate() in kernels takes arrays, not float"),
    ("np.stack((a, v))", "all input arrays must have the same shape"),
    ("np.stack((v, v), axis=2)", "axis 2 is out of bounds for array of dimension 2"),
    ("np.hstack((a, v))", "all the input arrays must have same number of dimensions"),
    ("np.vstack((a, a[0, 0]))", "np.vstack() in kernels takes arrays, not float64"),
    ("np.column_stack(v)", "np.column_stack() in kernels takes a tuple of arrays"),
    ("np.triu(a, x)", "np.triu's k must be an integer, not float"),
    ("np.tril(n)", "np.tril() in kernels takes an array here, not int"),
    ("np.subtract.outer(b, b)", "numpy boolean subtract, the `-` operator, is not supported"),
    ("np.multiply.outer(a, x)", "np.multiply.outer() in kernels takes an array here, not float"),
    ("np.subtract.reduce(v)", "np.subtract.reduce is not supported in kernels"),
    ("np.average(a, weights=v)", "Axis must be specified when shapes of a and weights differ."),
    ("np.average(a, 0, a[None])", "1D weights expected when shapes of a and weights differ."),
    ("np.average(a, axis=n)", "np.average's axis must be an integer constant"),
    ("np.average(a, returned=True)", "np.average(..., returned=True) is not supported"),
    ("np.average(x)", "np.average() in kernels takes an array here, not float"),
    ("np.bincount(v)", "Cannot cast array data from dtype('float64') to dtype('int64') "
                       "according to the rule 'safe'"),
    ("np.bincount(a)", "object too deep for desired array"),
    ("np.bincount(b, a)", "object too deep for desired array"),
    ("np.bincount(b, minlength=x)", "np.bincount's minlength must be an integer, not float"),
    ("np.bincount(b, v.astype(np.complex128))", "Cannot cast array data from "
                                                "dtype('complex128') to dtype('float64')"),
    ("np.searchsorted(a, v)", "object too deep for desired array"),
    ("np.searchsorted(v, x, side='middle')", "search side must be 'left' or 'right' (got 'middle')"),
    ("np.searchsorted(v, x, side=n)", "np.searchsorted's side is 'left' or 'right'"),
    ("np.searchsorted(v, x, sorter=v)", "sorter=...) is not supported in kernels yet"),
    ("np.digitize(v, a)", "object too deep for desired array"),
    ("np.digitize(v.astype(np.complex128), v)", "x may not be complex"),
    ("np.digitize(v, v, right=n)", "np.digitize's right is True or False"),
    ("np.cov(a[None])", "m has more than 2 dimensions"),
    ("np.corrcoef(v, a[None])", "y has more than 2 dimensions"),
    ("np.cov(a, rowvar=n)", "np.cov's rowvar is True or False in kernels"),
    ("np.cov(a, ddof=x)", "np.cov's ddof must be an integer, not float"),
    ("np.cov(a, aweights=v)", "np.cov's aweights is not supported in kernels yet"),
    ("np.corrcoef(n)", "np.corrcoef() in kernels takes an array here, not int"),
    ("np.indices(x)", "np.indices's dimensions is a tuple of integers in kernels, not float"),
    ("np.indices(v)", "np.indices's dimensions is a tuple of integers in kernels"),
    ("np.indices((2, 3), sparse=n)", "np.indices's sparse is True or False written in place"),
    ("np.sort(a, axis=2)", "axis 2 is out of bounds for array of dimension 2"),
    ("np.sort(v.astype(np.complex64))", "np.sort of complex arrays is not supported"),
    ("np.sort(v, kind=n)", "np.sort's kind is a string written in place"),
    ("np.argsort(v.astype(np.complex64))", "np.argsort of complex arrays is not supported"),
    ("np.median(a, axis=2)", "axis 2 is out of bounds for array of dimension 2"),
    ("np.median(v.astype(np.complex128))", "np.median of complex arrays is not supported"),
    ("np.roll(a)", "roll() missing required argument 'shift'"),
    ("np.tile(a, 2, 3)", "tile() takes 2 arguments (3 given)"),
])
def test_bad_arguments_are_compile_errors_at_the_line(body, message):
    assert_compile_error_at_line_6(SIG, body, message)


def test_array_parameters_are_known_from_these_calls():
    """A parameter passed only to these functions is an array parameter
    (params.c), so a kernel taking the numpy arrays as written compiles."""
    mod = asc.compile("import numpy as np\nimport asc\n\n@asc.kernel\n"
                      "def k(a, b, c):\n"
                      "    return np.hstack((a, b)), np.add.outer(b, c)\n")
    a, b, c = np.arange(2.), np.arange(3.), np.arange(4.)
    got = mod.k(a, b, c)
    same(got[0], np.hstack((a, b)))
    same(got[1], np.add.outer(b, c))


def listed_functions():
    """The names of docs/arrays.md's row of numpy's functions."""
    import pathlib
    import re
    doc = (pathlib.Path(__file__).parents[2] / "docs" / "arrays.md").read_text()
    row = re.search(r"^\| `(roll [^`]*)` \| numpy's functions", doc, re.M)
    assert row is not None
    return row.group(1).split()


@pytest.mark.parametrize("name", listed_functions())
def test_every_listed_function_is_known(name):
    """Each function the docs list is one the compiler binds: called with
    no argument it is an error about its arguments, not an unknown name."""
    text = ("import numpy as np\nimport asc\n\n@asc.kernel\n"
            f"def k(a: asc.Tensor[asc.float64, 1]):\n    y = np.{name}()\n")
    with pytest.raises(asc.CompileError) as ei:
        asc.compile(text)
    assert "not supported" not in str(ei.value) and name.split(".")[-1] in str(ei.value)


@pytest.mark.parametrize("name", ["interp", "nanpercentile"])
def test_functions_not_yet_are_named_errors(name):
    text = ("import numpy as np\nimport asc\n\n@asc.kernel\n"
            f"def k(a: asc.Tensor[asc.float64, 1]):\n    y = np.{name}(a)\n")
    with pytest.raises(asc.CompileError) as ei:
        asc.compile(text)
    assert f"np.{name} is not supported in kernels yet" in str(ei.value)
    assert ":6:" in str(ei.value)


def test_cov_product_is_one_gemm(tmp_path):
    """np.cov and np.corrcoef of float32/float64 rows multiply on the BLAS
    (one gemm, D @ D.T with the transpose a flag), as numpy's dot does;
    the loops stay behind the call's status for a machine without one.
    Complex and integer inputs keep the loops (values: test_cov_corrcoef)."""
    from envvars import ascc_ir
    f = tmp_path / "covk.py"
    f.write_text("import numpy as np\nimport asc\n\n@asc.kernel\n"
                 "def k(a):\n    return np.cov(a)\n\n@asc.kernel\n"
                 "def c(a):\n    return np.corrcoef(a, rowvar=False)\n")
    for sig in ("k(f64[:, :])", "k(f32[:, :])", "c(f64[:, :])"):
        ir = ascc_ir(f, sig)
        assert ir.count("= gemm ") == 1, (sig, ir)
    assert "= gemm " not in ascc_ir(f, "k(c128[:, :])")
    assert "= gemm " not in ascc_ir(f, "k(f64[:])")  # a 0-d result
