"""`a @ p` and `r @ a` of one float matrix in one statement (BiCG's
`return r @ A, A @ p`): one pass over the matrix, not two
(asc_krt.linalg's ASC_KLINALG_GEMV2; docs/arrays.md, "A matrix and two
vectors: one pass").  Checked against numpy for shapes with no rows or
columns, one row, row counts that are not a multiple of four, float32, a
matrix whose rows are not contiguous and a Fortran-order one (each
product's own path), and the statements that must not be batched."""
import numpy as np
import pytest

from envvars import ascc_ir

asc = pytest.importorskip("asc")

SRC = '''
import numpy as np
import asc


@asc.kernel
def bicg(A, p, r):
    return r @ A, A @ p


@asc.kernel
def both(A, p, r):
    return np.sum(A @ p) + np.sum(r @ A)


@asc.kernel
def one(A, p):
    return A @ p


@asc.func
def touch(p):
    p[0] = 5.0
    return 1.0


@asc.kernel
def helper(A, p, r):
    return touch(p) * (A @ p), r @ A
'''


@pytest.fixture(scope="module")
def mod():
    return asc.compile(SRC)


def check(got, want, dt):
    tol = 1e-4 if dt == np.float32 else 1e-12
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol * (1 + np.abs(want).max(initial=0)))


@pytest.mark.parametrize("shape", [(0, 4), (4, 0), (1, 1), (1, 9), (7, 5),
                                   (13, 1030), (333, 517), (2001, 3000)])
@pytest.mark.parametrize("dt", [np.float32, np.float64])
def test_bicg_against_numpy(mod, shape, dt):
    r = np.random.default_rng(sum(shape))
    A = r.standard_normal(shape).astype(dt)
    p = r.standard_normal(shape[1]).astype(dt)
    v = r.standard_normal(shape[0]).astype(dt)
    s, q = mod.bicg(A, p, v)
    check(s, v @ A, dt)
    check(q, A @ p, dt)


def test_views_take_each_products_path(mod):
    r = np.random.default_rng(4)
    big = r.standard_normal((400, 600))
    for A in (big[:, ::2], np.asfortranarray(big), big[::3]):
        p = r.standard_normal(A.shape[1])
        v = r.standard_normal(A.shape[0])
        s, q = mod.bicg(A, p, v)
        check(s, v @ A, np.float64)
        check(q, A @ p, np.float64)


def test_sums_and_shape_errors(mod):
    r = np.random.default_rng(5)
    A = r.standard_normal((300, 200))
    p, v = r.standard_normal(200), r.standard_normal(300)
    assert mod.both(A, p, v) == pytest.approx(np.sum(A @ p) + np.sum(v @ A), rel=1e-10)
    with pytest.raises(ValueError, match="mismatch"):
        mod.bicg(A, np.ones(201), v)
    with pytest.raises(ValueError, match="mismatch"):
        mod.bicg(A, p, np.ones(301))
    check(mod.one(A, p), A @ p, np.float64)


def test_not_batched_around_a_helper(mod):
    r = np.random.default_rng(6)
    A = r.standard_normal((50, 40))
    p, v = r.standard_normal(40), r.standard_normal(50)
    q, s = mod.helper(A, p.copy(), v)
    p2 = p.copy()
    p2[0] = 5.0
    check(q, A @ p2, np.float64)
    check(s, v @ A, np.float64)


def test_the_ir(tmp_path):
    f = tmp_path / "k.py"
    f.write_text(SRC)
    ir = ascc_ir(f, "bicg(f64[2], f64[1], f64[1])")
    assert "are one pass over the matrix (asc_krt.linalg gemv2)" in ir, ir
    assert "linalg 11," in ir
    for sig in ("one(f64[2], f64[1])", "helper(f64[2], f64[1], f64[1])"):
        assert "gemv2" not in ascc_ir(f, sig)
