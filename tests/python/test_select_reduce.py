"""A boolean selection reduced whole (docs/arrays.md, "Reductions of a
selection"): np.sum(x[m]), x[m].mean(), x[m].max(), and s = x[m] then
s.sum() are one predicated loop over the mask that folds the selected
elements in C order (a float sum: keeps their terms and adds them in
numpy's pairwise order), never making the selection.  Results against numpy,
bit for bit against the selection made first (ASC_FUSE=0), numpy's
results and errors for empty selections, NaN, every dtype family, and
the IR notes."""
import warnings

import numpy as np
import pytest

from envvars import ascc_ir, env

asc = pytest.importorskip("asc")


@pytest.fixture(autouse=True)
def select_fusion_on(monkeypatch):
    """The loop over a 1-D mask is the default; over a mask of more axes
    it is opt-in (ASC_FUSE_SELECT=1: measured slower than making the
    selection, docs/optimizer.md)."""
    monkeypatch.setenv("ASC_FUSE_SELECT", "1")


def same_bits(a, b):
    a = np.asarray(a)
    b = np.asarray(b)
    assert a.shape == b.shape and a.dtype == b.dtype, (a, b, a.dtype, b.dtype)
    assert a.tobytes() == b.tobytes(), (a, b)


SRC = '''
import numpy as np
import asc

@asc.kernel
def azimint(data, radius, npt):
    rmax = radius.max()
    res = np.zeros(npt, dtype=np.float64)
    for i in range(npt):
        r1 = rmax * i / npt
        r2 = rmax * (i + 1) / npt
        mask_r12 = np.logical_and((r1 <= radius), (radius < r2))
        values_r12 = data[mask_r12]
        res[i] = values_r12.mean()
    return res

@asc.kernel
def mean_of(x, lo):
    return np.mean(x[x > lo])

@asc.kernel
def sum_of(x, lo):
    return np.sum(x[x > lo])

@asc.kernel
def max_of(x, lo):
    return x[x > lo].max()

@asc.kernel
def min_of(x, lo):
    return np.min(x[x > lo])

@asc.kernel
def local_then_sum(x, lo, hi):
    m = (x > lo) & (x < hi)
    s = x[m]
    t = s.sum()
    return t

@asc.kernel
def prod_of(x, lo):
    return np.prod(x[x > lo])

@asc.kernel
def var_std(x, lo):
    return np.var(x[x > lo]) + x[x > lo].std(ddof=1)

@asc.kernel
def argmax_of(x, lo):
    return np.argmax(x[x > lo])

@asc.kernel
def any_all(x, lo):
    return np.any(x[x > lo]), np.all(x[x > lo])

@asc.kernel
def two_arrays(x, y, lo):
    return np.sum(x[y > lo] * y[y > lo] + 1.0)

@asc.kernel
def by_mask(x, m: asc.Tensor[asc.bool_, 1]):
    return np.sum(x[m])

@asc.kernel
def by_mask2(x, m: asc.Tensor[asc.bool_, 2]):
    return np.sum(x[m])

@asc.kernel
def by_mask_mean(x, m: asc.Tensor[asc.bool_, 2]):
    s = x[m]
    return s.mean()
'''


@pytest.fixture(scope="module")
def mods():
    with env(ASC_FUSE=None):
        on = asc.compile(SRC)
    with env(ASC_FUSE="0"):
        off = asc.compile(SRC)
    return on, off


def call(mod, fuse, name, *args):
    # kernels compile at their first launch: the switch is read then
    with env(ASC_FUSE=fuse):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            return getattr(mod, name)(*args)


def both(mods, name, *args):
    on, off = mods
    return call(on, None, name, *args), call(off, "0", name, *args)


NUMPY = {}
exec(SRC.replace("@asc.kernel", ""), NUMPY)   # the same functions on numpy


def numpy_of(mods, name, *args):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return NUMPY[name](*args)


def test_azimint_matches_numpy_and_selection_made_first(mods):
    rng = np.random.default_rng(3)
    data = rng.random(20000)
    radius = rng.random(20000)
    a, b = both(mods, "azimint", data, radius, 50)
    same_bits(a, b)
    np.testing.assert_allclose(a, numpy_of(mods, "azimint", data, radius, 50),
                               rtol=1e-12)
    # more bins than points: empty bins are nan, as numpy's mean of []
    a, b = both(mods, "azimint", data[:20], radius[:20], 40)
    same_bits(a, b)
    want = numpy_of(mods, "azimint", data[:20], radius[:20], 40)
    assert np.isnan(want).any()
    np.testing.assert_array_equal(np.isnan(a), np.isnan(want))
    np.testing.assert_allclose(a, want, rtol=1e-12)


DTYPES = [np.float64, np.float32, np.int64, np.int32, np.uint8, np.bool_]


@pytest.mark.parametrize("dt", DTYPES)
@pytest.mark.parametrize("name", ["mean_of", "sum_of", "prod_of", "var_std",
                                  "any_all"])
def test_reductions_by_dtype(mods, name, dt):
    rng = np.random.default_rng(5)
    x = (rng.random(3001) * 4).astype(dt)
    if name == "prod_of":
        x = x[:40]
    lo = 0 if dt == np.bool_ else 2 if np.issubdtype(dt, np.integer) else 1.5
    a, b = both(mods, name, x, lo)
    same_bits(np.asarray(a), np.asarray(b))
    want = numpy_of(mods, name, x, lo)
    assert np.asarray(a).dtype == np.asarray(want).dtype, (a, want)
    np.testing.assert_allclose(a, want,
                               rtol=1e-6 if dt == np.float32 else 1e-12)


@pytest.mark.parametrize("dt", [np.float64, np.float32, np.int64, np.int16,
                                np.complex128])
def test_by_a_bool_array(mods, dt):
    rng = np.random.default_rng(7)
    x = (rng.random((30, 41)) * 100).astype(dt)
    if dt == np.complex128:
        x = x + 1j * rng.random((30, 41))
    m = rng.random((30, 41)) > 0.7
    for name in ("by_mask2", "by_mask_mean"):
        a, b = both(mods, name, x, m)
        same_bits(a, b)
        want = numpy_of(mods, name, x, m)
        assert np.asarray(a).dtype == np.asarray(want).dtype, (a, want)
        np.testing.assert_allclose(a, want, rtol=1e-5 if dt == np.float32
                                   else 1e-12)


def test_min_max_argmax_and_empty(mods):
    rng = np.random.default_rng(9)
    for dt in (np.float64, np.float32, np.int32, np.int64):
        x = (rng.random(999) * 50).astype(dt)
        for name in ("max_of", "min_of", "argmax_of"):
            a, b = both(mods, name, x, 20)
            same_bits(a, b)
            assert a == numpy_of(mods, name, x, 20), (name, dt)
    x = rng.random(100)
    for name, what in (("max_of", "maximum"), ("min_of", "minimum")):
        for fuse in (None, "0"):
            mod = mods[0] if fuse is None else mods[1]
            with pytest.raises(ValueError, match="zero-size array to "
                               "reduction operation %s which has no "
                               "identity" % what):
                call(mod, fuse, name, x, 2.0)
        with pytest.raises(ValueError, match="zero-size array"):
            numpy_of(mods, name, x, 2.0)
    for fuse in (None, "0"):
        mod = mods[0] if fuse is None else mods[1]
        with pytest.raises(ValueError, match="argmax of an empty sequence"):
            call(mod, fuse, "argmax_of", x, 2.0)


def test_empty_selection_keeps_numpys_results(mods):
    x = np.arange(10.0)
    a, b = both(mods, "mean_of", x, 100.0)
    assert np.isnan(a) and np.isnan(b)
    assert np.isnan(numpy_of(mods, "mean_of", x, 100.0))
    a, b = both(mods, "sum_of", x, 100.0)
    assert a == 0.0 and b == 0.0
    a, b = both(mods, "prod_of", x, 100.0)
    assert a == 1.0 and b == 1.0
    a, b = both(mods, "var_std", x, 100.0)
    assert np.isnan(a) and np.isnan(b)
    assert both(mods, "any_all", x, 100.0)[0] == (False, True)
    # integers: the sum of none is an int64 0, the mean a float nan
    xi = np.arange(10, dtype=np.int32)
    a, b = both(mods, "sum_of", xi, 100)
    assert a == 0 and np.asarray(a).dtype == np.int64
    assert np.isnan(both(mods, "mean_of", xi, 100)[0])


def test_nan(mods):
    x = np.array([0.5, 3.0, np.nan, 4.0, 1.0, 7.0])
    m = np.array([True, True, False, True, False, True])
    a, b = both(mods, "by_mask", x, m)
    same_bits(a, b)
    assert a == 14.5
    m[2] = True
    a, b = both(mods, "by_mask", x, m)
    assert np.isnan(a) and np.isnan(b)
    a, b = both(mods, "by_mask_mean", x.reshape(2, 3), m.reshape(2, 3))
    assert np.isnan(a) and np.isnan(b)
    # a nan in the selection wins max, first nan for argmax (numpy's)
    y = np.array([5.0, np.nan, 9.0, np.nan])
    for name in ("max_of", "argmax_of", "min_of"):
        a, b = both(mods, name, y, 1.0)
        same_bits(a, b)
        want = numpy_of(mods, name, y, 1.0)
        assert (np.isnan(a) and np.isnan(want)) or a == want, (name, a, want)
    # a nan in the mask's operand is not selected (nan > lo is false)
    a, b = both(mods, "sum_of", y, 1.0)
    assert a == 14.0 and b == 14.0


def test_two_arrays_and_local(mods):
    rng = np.random.default_rng(11)
    x = rng.random(5000)
    y = rng.random(5000)
    a, b = both(mods, "two_arrays", x, y, 0.3)
    same_bits(a, b)
    np.testing.assert_allclose(a, numpy_of(mods, "two_arrays", x, y, 0.3),
                               rtol=1e-12)
    a, b = both(mods, "local_then_sum", x, 0.2, 0.6)
    same_bits(a, b)
    np.testing.assert_allclose(a, numpy_of(mods, "local_then_sum", x, 0.2,
                                           0.6), rtol=1e-12)


def test_mask_shape_error(mods):
    x = np.zeros(5)
    for fuse in (None, "0"):
        mod = mods[0] if fuse is None else mods[1]
        with pytest.raises(IndexError, match="boolean index did not match "
                           "indexed array along axis 0; size of axis is 5 "
                           "but size of corresponding boolean axis is 4"):
            call(mod, fuse, "by_mask", x, np.ones(4, bool))
    with pytest.raises(IndexError, match="boolean index did not match"):
        numpy_of(mods, "by_mask", x, np.ones(4, bool))


def ir_of(tmp_path, sig):
    f = tmp_path / "k.py"
    f.write_text(SRC)
    return ascc_ir(f, sig)


def test_ir_one_predicated_loop(tmp_path):
    ir = ir_of(tmp_path, "azimint(f64[:], f64[:], i64)")
    assert "fuse: 'mask_r12' is stored" not in ir, ir
    assert "fuse: 'values_r12' (line 13) is computed in this statement's " \
        "loops as one predicated loop over the mask, not stored" in ir, ir
    assert "select reduce: the mask in chunks of 512" in ir, ir
    # the mask is not made: besides res, one array keeps the selected
    # elements for their pairwise sum (numpy's order)
    assert ir.count("new_array") == 2, ir
    ir = ir_of(tmp_path, "mean_of(f64[:], f64)")
    assert "select reduce: the mask in chunks of 512" in ir
    assert ir.count("new_array") == 1, ir


def test_ir_refusals(tmp_path):
    src = '''
import numpy as np
import asc

@asc.kernel
def twice_read(x, lo):
    s = x[x > lo]
    return s.sum() + s[0]

@asc.kernel
def along_axis(x, lo, out):
    s = x[x > lo]
    out[0] = s.sum(axis=0, keepdims=True)[0]
'''
    f = tmp_path / "r.py"
    f.write_text(src)
    ir = ascc_ir(f, "twice_read(f64[:], f64)")
    assert "fuse: 's' is stored" in ir, ir
    with env(ASC_FUSE=None):
        mod = asc.compile(src)
        x = np.array([3.0, 1.0, 5.0])
        assert mod.twice_read(x, 2.0) == 11.0


# azimint and a sum and max of one selection, compiled with fastmath
FASTMATH = SRC[:SRC.index("@asc.kernel\ndef mean_of")].replace(
    "@asc.kernel\ndef azimint(", "@asc.kernel(fastmath=True)\ndef azimint_fm(") + \
    """
@asc.kernel(fastmath=True)
def count_sum_fm(x, lo):
    return np.sum(x[x > lo]) + x[x > lo].max()
"""


def test_fastmath_kernels():
    """Under fastmath the mask is still evaluated before the element it
    selects (the predicate is computed ahead of its branch)."""
    mod = asc.compile(FASTMATH)
    ns = {}
    exec(FASTMATH.replace("@asc.kernel(fastmath=True)", ""), ns)
    rng = np.random.default_rng(23)
    d, r = rng.random(200), rng.random(200)
    np.testing.assert_allclose(mod.azimint_fm(d, r, 10),
                               ns["azimint_fm"](d, r, 10), rtol=1e-12)
    x = rng.random(5000)
    np.testing.assert_allclose(mod.count_sum_fm(x, 0.3),
                               ns["count_sum_fm"](x, 0.3), rtol=1e-12)
