"""`(A @ x) @ A` and `A.T @ (A @ x)` (polybench's atax) as one pass over
the matrix: asc_krt.linalg's gemv2 chained (ASC_KGEMV2_CHAIN; docs/
arrays.md, "A product of a product: one pass").  Each row's dot product
with x is made, then the row is added with that weight while it is still
in cache.  Checked against numpy for empty, one-row, short-group and
float32 shapes, inside larger expressions, for views that take the two
products' own paths, and for the shape error of the inner product."""
import numpy as np
import pytest

from envvars import ascc_ir

asc = pytest.importorskip("asc")

SRC = '''
import numpy as np
import asc


@asc.kernel
def atax(A, x):
    return (A @ x) @ A


@asc.kernel
def atax_t(A, x):
    return A.T @ (A @ x)


@asc.kernel
def scaled(A, x, y):
    y[:] = 2.0 * ((A @ x) @ A) - np.sum(A.T @ (A @ x))


@asc.kernel
def other(A, B, x):
    return (A @ x) @ B


@asc.kernel
def twice(A, x):
    y = A @ x
    return y @ A
'''


@pytest.fixture(scope="module")
def mod():
    return asc.compile(SRC)


def check(got, want, dt):
    tol = 1e-4 if dt == np.float32 else 1e-11
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=tol,
                               atol=tol * (1 + np.abs(want).max(initial=0)))


@pytest.mark.parametrize("shape", [(0, 4), (4, 0), (1, 1), (1, 9), (3, 5), (5, 3),
                                   (13, 1030), (333, 517), (1201, 2003)])
@pytest.mark.parametrize("dt", [np.float32, np.float64])
def test_against_numpy(mod, shape, dt):
    r = np.random.default_rng(sum(shape))
    A = r.standard_normal(shape).astype(dt)
    x = r.standard_normal(shape[1]).astype(dt)
    want = (A @ x) @ A
    check(mod.atax(A, x), want, dt)
    check(mod.atax_t(A, x), want, dt)


def test_inside_an_expression(mod):
    r = np.random.default_rng(3)
    A = r.standard_normal((70, 90))
    x = r.standard_normal(90)
    y = np.empty(90)
    mod.scaled(A, x, y)
    w = (A @ x) @ A
    check(y, 2.0 * w - np.sum(w), np.float64)


def test_views_and_other_matrices(mod):
    r = np.random.default_rng(4)
    big = r.standard_normal((300, 400))
    for A in (big[:, ::2], np.asfortranarray(big), big[::3], big[10:200, 5:]):
        x = r.standard_normal(A.shape[1])
        check(mod.atax(A, x), (A @ x) @ A, np.float64)
        check(mod.atax_t(A, x), (A @ x) @ A, np.float64)
    B = r.standard_normal((300, 50))
    x = r.standard_normal(400)
    check(mod.other(big, B, x), (big @ x) @ B, np.float64)
    check(mod.twice(big, x), (big @ x) @ big, np.float64)


def test_shape_error(mod):
    A = np.ones((6, 4))
    with pytest.raises(ValueError, match="mismatch"):
        mod.atax(A, np.ones(5))
    with pytest.raises(ValueError, match="mismatch"):
        mod.atax_t(A, np.ones(6))


def test_the_ir(tmp_path):
    f = tmp_path / "k.py"
    f.write_text(SRC)
    for sig in ("atax(f64[2], f64[1])", "atax_t(f32[2], f32[1])"):
        ir = ascc_ir(f, sig)
        assert "(asc_krt.linalg gemv2, chained)" in ir, ir
        assert "linalg 11," in ir
    # another matrix, or the product through a name: two products
    for sig in ("other(f64[2], f64[2], f64[1])", "twice(f64[2], f64[1])"):
        assert "chained" not in ascc_ir(f, sig)
