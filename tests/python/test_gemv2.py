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


@asc.kernel
def mvt(x1, x2, y_1, y_2, A):
    x1 += A @ y_1
    x2 += y_2 @ A


@asc.kernel
def tvm(x1, x2, y_1, y_2, A):
    x2 += y_2 @ A
    x1 += A @ y_1


@asc.kernel
def minus(x1, x2, y_1, y_2, A):
    x1 -= A @ y_1
    x2 += y_2 @ A


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


def mvt_ref(x1, x2, y1, y2, A, order=0):
    x1, x2 = x1.copy(), x2.copy()
    if order == 0:
        x1 += A @ y1
        x2 += y2 @ A
    else:
        x2 += y2 @ A
        x1 += A @ y1
    return x1, x2


@pytest.mark.parametrize("shape", [(0, 3), (3, 0), (1, 1), (5, 7), (333, 517), (1500, 1300)])
@pytest.mark.parametrize("dt", [np.float32, np.float64])
def test_two_statements_one_pass(mod, shape, dt):
    r = np.random.default_rng(sum(shape) + 7)
    m, n = shape
    A = r.standard_normal(shape).astype(dt)
    x1, y1 = r.standard_normal(m).astype(dt), r.standard_normal(n).astype(dt)
    x2, y2 = r.standard_normal(n).astype(dt), r.standard_normal(m).astype(dt)
    for f, order in ((mod.mvt, 0), (mod.tvm, 1)):
        w1, w2 = mvt_ref(x1, x2, y1, y2, A, order)
        g1, g2 = x1.copy(), x2.copy()
        f(g1, g2, y1, y2, A)
        check(g1, w1, dt)
        check(g2, w2, dt)


def test_two_statements_that_share_memory_keep_their_order(mod):
    r = np.random.default_rng(11)
    A = r.standard_normal((300, 300))
    # x1 is y_2: the second product reads the first statement's result
    x = r.standard_normal(300)
    y1, x2 = r.standard_normal(300), r.standard_normal(300)
    w = x.copy()
    w += A @ y1
    w2 = x2 + w @ A
    mod.mvt(x, x2, y1, x, A)
    check(x, w, np.float64)
    check(x2, w2, np.float64)
    # x1 is a row of A
    B = A.copy()
    wB = B.copy()
    wB[0] += wB @ y1
    wx2 = x2 + r.standard_normal(300) * 0
    y2 = r.standard_normal(300)
    wx2 = x2 + y2 @ wB
    mod.mvt(B[0], x2, y1, y2, B)
    check(B, wB, np.float64)
    check(x2, wx2, np.float64)
    # x1 is x2
    z = r.standard_normal(300)
    wz = z.copy()
    wz += A @ y1
    wz += y2 @ A
    mod.mvt(z, z, y1, y2, A)
    check(z, wz, np.float64)


def test_two_statements_errors_and_other_forms(mod, tmp_path):
    r = np.random.default_rng(12)
    A = r.standard_normal((40, 30))
    with pytest.raises(ValueError):
        mod.mvt(np.zeros(1), np.zeros(30), np.ones(30), np.ones(40), A)
    with pytest.raises(ValueError, match="mismatch"):
        mod.mvt(np.zeros(40), np.zeros(30), np.ones(31), np.ones(40), A)
    x1, x2 = np.zeros(40), np.zeros(30)
    y1, y2 = r.standard_normal(30), r.standard_normal(40)
    mod.minus(x1, x2, y1, y2, A)
    check(x1, -(A @ y1), np.float64)
    check(x2, y2 @ A, np.float64)
    f = tmp_path / "k.py"
    f.write_text(SRC)
    sig = "(f64[1], f64[1], f64[1], f64[1], f64[2])"
    ir = ascc_ir(f, "mvt" + sig)
    assert "(x += a @ p, y += r @ a of one matrix) are one pass" in ir, ir
    assert "linalg 11," in ir
    assert "one pass" not in ascc_ir(f, "minus" + sig)
