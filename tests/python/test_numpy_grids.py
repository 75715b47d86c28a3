"""numpy's grids in kernels (types/infer_grid.c, lower_grid.c;
docs/arrays.md, "Grids"): np.mgrid[...] and np.ogrid[...] (integer,
float and complex steps, numpy's dtypes), np.meshgrid ('xy' and 'ij',
sparse), np.indices(..., sparse=True), the tuples of arrays unpacked,
indexed and returned, arrays unpacked into their rows, and numpy's
errors."""
import numpy as np
import pytest

import asc
from test_np_ufuncs import same  # dtype, shape and every element (NaN equal)
from badargs import assert_compile_error_at_line_6

TEXT = """
import numpy as np
import asc

@asc.kernel
def mgrid2(r: int, c: int):
    return np.mgrid[0:r, 0:c]

@asc.kernel
def mgrid_steps(a: int, b: int, s: int):
    return np.mgrid[a:b:s, b:a:-1], np.mgrid[a:b:s], np.mgrid[:b]

@asc.kernel
def mgrid_float(lo: float, hi: float, n: int):
    return np.mgrid[lo:hi:0.25, 0:n], np.mgrid[lo:hi:0.3]

@asc.kernel
def mgrid_points(lo: float, hi: float):
    return np.mgrid[lo:hi:5j, 0:1:3j], np.mgrid[lo:hi:7j], np.mgrid[0:2:1j, 0:3]

@asc.kernel
def mgrid_unpack(r: int, c: int):
    i, j = np.mgrid[0:r, 0:c]
    return i * 10 + j, i[:, :2], j.sum()

@asc.kernel
def mgrid_3d(n: int):
    return np.mgrid[0:n, 1:3, -2:0]

@asc.kernel
def ogrid2(r: int, c: int):
    x, y = np.ogrid[0:r, 0:c]
    return x, y, x + y, np.ogrid[0:r], np.ogrid[0:1:4j, 0:r][1]

@asc.kernel
def ogrid_ret(r: int):
    return np.ogrid[0:r, 1:4]

@asc.kernel
def mesh(x, y):
    a, b = np.meshgrid(x, y)
    c, d = np.meshgrid(x, y, indexing='ij')
    e, f = np.meshgrid(x, y, sparse=True)
    return a, b, c, d, e, f

@asc.kernel
def mesh3(x, y, z):
    return np.meshgrid(x, y, z)

@asc.kernel
def mesh3_ij(x, y, z):
    return np.meshgrid(x, y, z, indexing='ij', sparse=True)

@asc.kernel
def mesh1(x):
    return np.meshgrid(x)[0], np.meshgrid(x[::2], x)[1]

@asc.kernel
def sparse_indices(r: int, c: int):
    i, j = np.indices((r, c), sparse=True)
    return i, j, i * j, np.indices((r, c, 2), sparse=True)[2]

@asc.kernel
def twiddle(r: int, k: int, x):
    # an FFT's stride permutation: a reshape of a transposed view
    ii, jj = np.mgrid[0:r, 0:r**k]
    v = np.reshape(x, (r, r, r**(k - 2)))
    t = np.transpose(v, axes=(1, 0, 2))
    w = np.exp(-2.0j * np.pi * ii[:, :r] * jj[:, :r] / r**2)
    return np.reshape(t, (r**k,)), np.reshape(x.reshape(r, r**(k - 1)).T, (r**k,)), w

@asc.func
def two_arrays(x):
    return x + 1, x[::-1] * 2

@asc.func
def mesh_of(x, y):
    return np.meshgrid(x, y, indexing='ij')

@asc.func
def rows_cols(r, c):
    xi, yi = np.mgrid[0:r, 0:c]
    return xi, yi

@asc.kernel
def helpers(x, y):
    a, b = two_arrays(x)
    c, d = mesh_of(x, y)
    i, j = rows_cols(x.shape[0], 2)
    return a, b, c, d, mesh_of(y, x)[1], i * 10 + j

@asc.kernel
def rows(a: asc.Tensor[asc.float64, 2]):
    p, q = a
    return p + q

@asc.kernel
def elems(v: asc.Tensor[asc.int64, 1]):
    s, t, u = v
    return s * 100 + t * 10 + u
"""


@pytest.fixture(scope="module")
def m():
    return asc.compile(TEXT)


def check(got, want):
    assert len(got) == len(want)
    for g, w in zip(got, want):
        same(g, w)


def test_mgrid_of_integers(m):
    for r, c in ((3, 4), (0, 2), (1, 1), (2, 0)):
        same(m.mgrid2(r, c), np.mgrid[0:r, 0:c])
    for a, b, s in ((0, 7, 2), (2, 9, 3), (5, 5, 1), (-3, 4, 5)):
        check(m.mgrid_steps(a, b, s), (np.mgrid[a:b:s, b:a:-1], np.mgrid[a:b:s], np.mgrid[:b]))
    for n in (0, 1, 3):
        same(m.mgrid_3d(n), np.mgrid[0:n, 1:3, -2:0])


def test_mgrid_of_floats_and_points(m):
    for lo, hi, n in ((0.0, 1.0, 2), (-1.5, 0.7, 3), (0.1, 2.05, 1)):
        check(m.mgrid_float(lo, hi, n), (np.mgrid[lo:hi:0.25, 0:n], np.mgrid[lo:hi:0.3]))
    for lo, hi in ((0.0, 1.0), (-2.0, 3.5), (1.0, 1.0)):
        check(m.mgrid_points(lo, hi),
              (np.mgrid[lo:hi:5j, 0:1:3j], np.mgrid[lo:hi:7j], np.mgrid[0:2:1j, 0:3]))


def test_mgrid_unpacked_into_rows(m):
    for r, c in ((3, 4), (2, 2), (2, 5)):
        i, j = np.mgrid[0:r, 0:c]
        check(m.mgrid_unpack(r, c), (i * 10 + j, i[:, :2], j.sum()))


def test_ogrid(m):
    for r, c in ((3, 4), (0, 2), (1, 1)):
        x, y = np.ogrid[0:r, 0:c]
        check(m.ogrid2(r, c), (x, y, x + y, np.ogrid[0:r], np.ogrid[0:1:4j, 0:r][1]))
        check(m.ogrid_ret(r), np.ogrid[0:r, 1:4])


@pytest.mark.parametrize("dx,dy", [(np.float64, np.int32), (np.float32, np.complex128),
                                   (np.bool_, np.uint8)])
def test_meshgrid(m, dx, dy):
    rng = np.random.default_rng(3)
    for nx, ny in ((3, 4), (0, 2), (1, 1), (5, 0)):
        x = (rng.standard_normal(nx) * 5).astype(dx)
        y = (rng.standard_normal(ny) * 5).astype(dy)
        want = (*np.meshgrid(x, y), *np.meshgrid(x, y, indexing='ij'),
                *np.meshgrid(x, y, sparse=True))
        check(m.mesh(x, y), want)


def test_meshgrid_of_three_and_views(m):
    x, y, z = np.arange(2.0), np.arange(3), np.arange(4.0)[::-1]
    check(m.mesh3(x, y, z), np.meshgrid(x, y, z))
    check(m.mesh3_ij(x, y, z), np.meshgrid(x, y, z, indexing='ij', sparse=True))
    # 2-D arrays are flattened, as numpy's; views read where they are
    a = np.arange(12.0).reshape(3, 4)
    check(m.mesh3(a.T, y, z), np.meshgrid(a.T, y, z))
    v = np.arange(7.0)
    check(m.mesh1(v), (np.meshgrid(v)[0], np.meshgrid(v[::2], v)[1]))


def test_sparse_indices(m):
    for r, c in ((3, 4), (0, 2), (1, 1)):
        i, j = np.indices((r, c), sparse=True)
        check(m.sparse_indices(r, c), (i, j, i * j, np.indices((r, c, 2), sparse=True)[2]))
    with pytest.raises(ValueError, match="negative dimensions are not allowed"):
        m.sparse_indices(-1, 2)


def test_reshape_of_a_transpose_copies(m):
    """A reshape of a transposed view is numpy's copy in C order (it was
    the run-time ValueError of the contiguous-only rule)."""
    for r, k in ((2, 3), (3, 2), (2, 4)):
        x = np.arange(r**k) + 1j * np.arange(r**k)[::-1]
        ii, jj = np.mgrid[0:r, 0:r**k]
        want = (np.reshape(np.transpose(np.reshape(x, (r, r, r**(k - 2))), axes=(1, 0, 2)),
                           (r**k,)),
                np.reshape(x.reshape(r, r**(k - 1)).T, (r**k,)),
                np.exp(-2.0j * np.pi * ii[:, :r] * jj[:, :r] / r**2))
        got = m.twiddle(r, k, x)
        same(got[0], want[0])
        same(got[1], want[1])
        np.testing.assert_allclose(got[2], want[2], rtol=1e-14, atol=1e-15)


def test_helpers_returning_tuples_of_arrays(m):
    """An @asc.func helper returns a tuple of arrays (written out, a
    numpy call's, or names of its own), unpacked or indexed."""
    for nx, ny in ((3, 2), (1, 4), (0, 2)):
        x, y = np.arange(nx) * 1.5, np.arange(ny)
        i, j = np.mgrid[0:nx, 0:2]
        want = (x + 1, x[::-1] * 2, *np.meshgrid(x, y, indexing='ij'),
                np.meshgrid(y, x, indexing='ij')[1], i * 10 + j)
        check(m.helpers(x, y), want)


def test_unpacking_an_array(m):
    a = np.arange(6.0).reshape(2, 3)
    same(m.rows(a), a[0] + a[1])
    same(m.rows(a.T[:2]), a.T[0] + a.T[1])
    v = np.array([1, 2, 3])
    same(m.elems(v), np.int64(123))
    for bad in (np.arange(9.0).reshape(3, 3), np.arange(3.0).reshape(1, 3)):
        with pytest.raises(ValueError) as want:
            p, q = bad
        with pytest.raises(ValueError) as got:
            m.rows(bad)
        assert str(want.value) in str(got.value)


def test_run_time_errors_are_numpys(m):
    for call, mine in ((lambda: np.mgrid[0:5:0, 0:2], lambda: m.mgrid_steps(0, 5, 0)),
                       (lambda: np.mgrid[0:5, 0:-2], lambda: m.mgrid2(5, -2)),
                       (lambda: np.mgrid[1.0:0.0:0.25, 0:2], lambda: m.mgrid_float(1.0, 0.0, 2))):
        with pytest.raises(Exception) as want:
            call()
        with pytest.raises(Exception) as got:
            mine()
        assert type(got.value) is type(want.value)
        assert str(want.value) in str(got.value)


SIG = ("a: asc.Tensor[asc.float64, 2], v: asc.Tensor[asc.float64, 1], "
       "n: int, x: float")


@pytest.mark.parametrize("body,message", [
    ("np.mgrid", "np.mgrid is indexed with slices in kernels"),
    ("np.mgrid[3]", "np.mgrid is indexed with slices in kernels (start:stop:step)"),
    ("np.ogrid[0:]", "np.ogrid's slices need a stop in kernels"),
    ("np.mgrid[0:v]", "np.mgrid's slices take numbers"),
    ("np.mgrid[0:n:1j, 0:a]", "np.mgrid's slices take numbers"),
    ("np.meshgrid(v, x)", "np.meshgrid() in kernels takes arrays, not float"),
    ("np.meshgrid(v, v, indexing='yx')", "Valid values for `indexing` are 'xy' and 'ij'."),
    ("np.meshgrid(v, indexing=n)", "np.meshgrid's indexing is 'xy' or 'ij' written in place"),
    ("np.meshgrid(v, sparse=n)", "np.meshgrid's sparse is True or False"),
    ("np.meshgrid()", "np.meshgrid() in kernels takes 1 to 8 arrays"),
    ("np.indices((2, n), sparse=n)", "np.indices's sparse is True or False written in place"),
    ("np.ogrid[0:2, 0:3][n]", "can only be indexed with a constant"),
])
def test_bad_arguments_are_compile_errors_at_the_line(body, message):
    assert_compile_error_at_line_6(SIG, body, message)


def test_returning_a_numpy_tuple_gives_its_arrays():
    """`return np.histogram(a)` and `return np.meshgrid(x, y)` return as
    many values as the tuple holds (params.c counts them from the text)."""
    mod = asc.compile("import numpy as np\nimport asc\n\n@asc.kernel\n"
                      "def k(x, y):\n    return np.meshgrid(x, y)\n")
    x, y = np.arange(3.0), np.arange(2)
    got = mod.k(x, y)
    assert isinstance(got, tuple) and len(got) == 2
    check(got, np.meshgrid(x, y))
