"""Masked stores and gathers without their arrays (docs/arrays.md, "Masks
and gathers in place"): x[m] = f(a[m], ...) is one predicated loop, and a
gather x[i] read by an elementwise expression or a reduction loads x at
i's values where it is read.  Each kernel is compared with numpy on copies
of the same arguments, bit for bit (same elements, same operations in the
same order), and the IR notes say which statements took the path."""
import copy

import numpy as np
import pytest

import asc
from envvars import ascc_ir

TEXT = """
import numpy as np
import asc

@asc.kernel
def mandel(z, c, count, n):
    for k in range(n):
        m = np.abs(z) < 2.0
        count[m] += 1
        z[m] = z[m] ** 2 + c[m]

@asc.kernel
def masked_ops(x, a, b):
    m = a > 0.3
    x[m] = a[m] * 2.0 - np.sqrt(b[m]) + 1.5

@asc.kernel
def masked_aug(x, a):
    m = a < 0.5
    x[m] += a[m] ** 3

@asc.kernel
def masked_rev(x, m: asc.Tensor[asc.bool_, 1]):
    x[m] = x[::-1][m] + 1.0

@asc.kernel
def masked_self(x):
    x[x > 0.5] = x[x > 0.5] * 10.0

@asc.kernel
def masked_cube(z, m: asc.Tensor[asc.bool_, 1]):
    z[m] = z[m] ** 3 - z[m] * 1j

@asc.kernel
def masked_int_into_float(x, a, m: asc.Tensor[asc.bool_, 1]):
    x[m] = a[m] * 3

@asc.kernel
def gather_mul(x, idx: asc.Tensor[asc.int64, 1], w):
    return x[idx] * w

@asc.kernel
def gather_store(out, x, idx: asc.Tensor[asc.int64, 1]):
    out[:] = x[idx] + 1.0

@asc.kernel
def gather_self(x, idx: asc.Tensor[asc.int64, 1]):
    x[:] = x[idx] * 2.0

@asc.kernel
def gather_index_self(idx, x):
    idx[:] = x[idx]

@asc.kernel
def gather_rows(x, idx: asc.Tensor[asc.int64, 2]):
    return x[idx] * 2.0

@asc.kernel
def gather_sum(x, idx: asc.Tensor[asc.int64, 1]):
    return np.sum(x[idx] * x[idx])

@asc.kernel
def cmul(a, b, out):
    out[:] = a * b

@asc.kernel
def cabs(a, out):
    out[:] = np.abs(a)

@asc.kernel
def spmv(indptr, cols, vals, x):
    n = indptr.shape[0] - 1
    y = np.empty(n)
    for i in range(n):
        lo = indptr[i]
        hi = indptr[i + 1]
        y[i] = vals[lo:hi] @ x[cols[lo:hi]]
    return y
"""


class _Plain:
    """asc as CPython sees the kernels: plain functions."""
    @staticmethod
    def kernel(f=None, **kw):
        return f if f is not None else (lambda g: g)

    def __getattr__(self, name):  # asc.Tensor, asc.int64 in annotations
        return getattr(asc, name)


@pytest.fixture(scope="module")
def m():
    return asc.compile(TEXT)


@pytest.fixture(scope="module")
def py():
    ns = {}
    exec(TEXT.replace("import asc\n", ""), {"asc": _Plain(), "np": np}, ns)
    return ns


def rnd(*shape, seed=0):
    return np.random.default_rng(seed).random(shape)


def same(a, b):
    """Equal bit for bit, dtype included (nan equal to nan)."""
    a, b = np.asarray(a), np.asarray(b)
    assert a.dtype == b.dtype and a.shape == b.shape
    if a.tobytes() != b.tobytes():
        np.testing.assert_array_equal(a, b)
        raise AssertionError(f"equal but not bit for bit: {a!r} {b!r}")


def check(m, py, name, *args):
    mine, want = copy.deepcopy(args), copy.deepcopy(args)
    r = getattr(m, name)(*mine)
    w = py[name](*want)
    if w is not None:
        same(r, w)
    for x, y in zip(mine, want):
        if isinstance(x, np.ndarray):
            same(x, y)
    return r


def py_complex(f):
    """f of each element through Python's complex numbers: the products
    kernels compute (numpy's own loops may fuse a multiply and an add on
    machines with FMA, which changes the last bit of a real part)."""
    g = np.frompyfunc(f, 1, 1)
    return lambda a: g(a).astype(a.dtype) if a.size else a.copy()


def test_mandelbrot_update(m):
    x = np.linspace(-2.0, 0.5, 61)
    y = np.linspace(-1.2, 1.2, 47)
    c = x + y[:, None] * 1j
    z, count = np.zeros_like(c), np.zeros(c.shape, np.int64)
    m.mandel(z, c, count, 30)
    sq = py_complex(lambda a: a ** 2)
    wz, wcount = np.zeros_like(c), np.zeros(c.shape, np.int64)
    for _ in range(30):
        k = np.abs(wz) < 2.0
        wcount[k] += 1
        wz[k] = sq(wz[k]) + c[k]
    same(z, wz)
    same(count, wcount)
    assert 0 < count.min() < count.max() == 30


def test_complex_powers_and_products(m):
    z = rnd(6) - 0.5 + 1j * (rnd(6, seed=1) - 0.5)
    k = np.array([True, False, True, True, False, True])
    mine = z.copy()
    m.masked_cube(mine, k)
    want = z.copy()
    want[k] = py_complex(lambda a: a ** 3 - a * 1j)(z[k])
    same(mine, want)
    z64 = z.astype(np.complex64)
    m.masked_cube(z64, k)
    np.testing.assert_allclose(z64, want.astype(np.complex64), rtol=1e-6)


def test_complex_product_is_pythons_with_infinities(m):
    # C's `*` turns (inf+nanj) * (1+0j) into an infinity (C99 Annex G);
    # Python and numpy's loops give nan+nanj
    inf, nan = float("inf"), float("nan")
    a = np.array([complex(inf, nan), complex(inf, inf), 1 + 2j, complex(0, inf)])
    b = np.array([1 + 0j, 0j, complex(nan, 0), complex(0, nan)])
    out = np.zeros(4, complex)
    m.cmul(a, b, out)
    same(out, np.array([complex(x) * complex(y) for x, y in zip(a, b)]))


def test_complex_abs_accuracy_and_special_values(m):
    import math
    from fractions import Fraction
    rng = np.random.default_rng(3)
    n = 4000
    z = (rng.standard_normal(n) * 10.0 ** rng.integers(-300, 300, n)
         + 1j * rng.standard_normal(n) * 10.0 ** rng.integers(-300, 300, n))
    z[:100] *= 1e8  # near the overflow threshold of the squares
    out = np.zeros(n)
    m.cabs(z, out)
    worst = 0.0
    for w, h in zip(z, out):
        exact = Fraction(w.real) ** 2 + Fraction(w.imag) ** 2
        # |h - sqrt(exact)| in ulps of h, through h**2 - exact
        err = abs(Fraction(h) ** 2 - exact) / (2 * Fraction(h)) / \
            Fraction(math.ulp(h))
        worst = max(worst, float(err))
    assert worst <= 1.2, worst  # docs/arrays.md
    inf, nan = float("inf"), float("nan")
    for dt, rdt, big, tiny in ((complex, float, 1.7e308, 5e-324),
                               (np.complex64, np.float32, 3.4e38, 1e-45)):
        sp = [0.0, -0.0, inf, -inf, nan, big, tiny, 3.0, -4.0]
        z = np.array([complex(x, y) for x in sp for y in sp], dt)
        with np.errstate(over="ignore"):  # |big + big j| overflows float32
            want = np.array([math.hypot(w.real, w.imag) for w in z]).astype(rdt)
        out = np.zeros(z.size, rdt)
        m.cabs(z, out)
        np.testing.assert_array_equal(out, want)


@pytest.mark.parametrize("name,nargs", [("masked_ops", 3), ("masked_aug", 2)])
def test_masked_expressions(m, py, name, nargs):
    args = [rnd(5, 7, seed=k) for k in range(nargs)]
    check(m, py, name, *args)
    check(m, py, name, *[a.astype(np.float32) for a in args])
    # all false, all true, and no elements at all
    check(m, py, name, *[np.full((3, 4), 0.4) for _ in range(nargs)])
    check(m, py, name, *[np.full((3, 4), 0.1) for _ in range(nargs)])
    check(m, py, name, *[np.zeros((0, 4)) for _ in range(nargs)])


def test_masked_read_of_other_elements_is_copied_first(m, py):
    # numpy makes x[::-1][m] before it stores: copy on overlap
    check(m, py, "masked_rev", np.arange(8.0), np.arange(8) % 3 == 0)
    check(m, py, "masked_self", rnd(9))


def test_masked_dtypes(m, py):
    a = np.arange(-4, 8, dtype=np.int32)
    check(m, py, "masked_int_into_float", np.zeros(12), a, a % 2 == 0)
    check(m, py, "masked_int_into_float", np.zeros(12, np.float32),
          a.astype(np.int64), a > 2)
    check(m, py, "masked_int_into_float", np.zeros(12, np.int64), a, a > 2)


def test_masked_shape_mismatch_raises_before_storing(m):
    x = np.zeros(4)
    with pytest.raises(IndexError, match="boolean index did not match "
                       "indexed array along axis 0; size of axis is 5 but "
                       "size of corresponding boolean axis is 4"):
        m.masked_ops(x, rnd(4) + 1.0, rnd(5))
    same(x, np.zeros(4))


def test_gathers_read_in_place(m, py):
    x = rnd(10)
    idx = np.array([3, -1, 0, 9, -10, 3, 5], np.int64)
    r = check(m, py, "gather_mul", x, idx, rnd(7, seed=3))
    assert r.dtype == np.float64
    check(m, py, "gather_mul", x.astype(np.float32), idx, np.float32(2.5))
    check(m, py, "gather_mul", x, np.zeros(0, np.int64), np.zeros(0))
    check(m, py, "gather_store", np.zeros(7), x, idx)
    check(m, py, "gather_rows", rnd(5, 3), np.array([[4, 0], [-1, 2]]))
    check(m, py, "gather_sum", x, idx)


def test_gather_of_the_written_array_is_copied_first(m, py):
    check(m, py, "gather_self", rnd(8), np.array([7, 6, 5, 4, 3, 2, 1, 0]))
    check(m, py, "gather_index_self", np.array([2, 0, 1, 3]),
          np.array([3, 2, 1, 0]))


def test_out_of_range_gather_raises_and_stores_nothing(m):
    out = np.full(3, 7.0)
    with pytest.raises(IndexError, match="index 10 is out of bounds for "
                       "axis 0 with size 10"):
        m.gather_store(out, rnd(10), np.array([1, 10, 11]))
    same(out, np.full(3, 7.0))
    with pytest.raises(IndexError, match="index -12 is out of bounds"):
        m.gather_mul(rnd(10), np.array([0, -12]), 1.0)


def csr(n, seed):
    rng = np.random.default_rng(seed)
    nnz = rng.integers(0, 6, n)
    nnz[::7] = 0  # empty rows
    indptr = np.concatenate([[0], np.cumsum(nnz)]).astype(np.int64)
    cols = rng.integers(0, n, indptr[-1])
    return indptr, cols, rng.random(indptr[-1]), rng.random(n)


def test_spmv_rows(m, py):
    # numpy's dot of a row sums in its own order (BLAS): not bit for bit
    for n, seed in ((50, 1), (20, 2)):
        args = csr(n, seed)
        if seed == 2:
            args[1][3] = -1  # numpy wraps it
        np.testing.assert_allclose(m.spmv(*args), py["spmv"](*args),
                                   rtol=1e-14, atol=1e-15)
    indptr, cols, vals, x = csr(20, 2)
    cols[3] = 20
    with pytest.raises(IndexError, match="index 20 is out of bounds"):
        m.spmv(indptr, cols, vals, x)


def test_ir_notes(tmp_path):
    src = tmp_path / "k.py"
    src.write_text(TEXT)
    ir = ascc_ir(src, "masked_ops(f64[:,:], f64[:,:], f64[:,:])")
    assert "masked store: one predicated loop" in ir
    assert ir.count("new_array") == 1  # the mask's, and no gathered array
    ir = ascc_ir(src, "masked_rev(f64[:], bool[:])")
    assert "masked store" not in ir and "new_array" in ir
    ir = ascc_ir(src, "spmv(i64[:], i64[:], f64[:], f64[:])")
    assert "gather read in place" in ir
