"""Statements that are one BLAS call (docs/arrays.md, "Products stored
into an array"): `C[:] = alpha * A @ B + beta * C`, `y += alpha * A @ x`,
`y -= A.T @ x`, and a scaled left operand of any product, which becomes
the call's alpha instead of a pass over the operand.  Each form is
compared with numpy, on the BLAS and with ASC_BLAS=0 (the general code
behind the call), for alpha and beta 0 and 1 (numpy's 0 * nan is nan),
a target that is also an operand (numpy's result is as if computed into
a temporary), transposed and strided operands and targets, empty shapes,
and integer and complex dtypes, which never reach the BLAS.  The IR
shows the form chosen: one gemm call into the target, no new array."""
import numpy as np
import pytest

import asc
from envvars import ascc_ir
from test_matmul_blas import mode  # noqa: F401 (the fixture: on the BLAS, ASC_BLAS=0)

TEXT = """
import numpy as np
import asc

@asc.kernel
def gemm(alpha, beta, C, A, B):
    C[:] = alpha * A @ B + beta * C

@asc.kernel
def gemm_right(alpha, beta, C, A, B):
    C[:, :] = beta * C + A @ B * alpha

@asc.kernel
def store(C, A, B):
    C[...] = A.T @ B.T

@asc.kernel
def k2mm(alpha, beta, A, B, C, D):
    D[:] = alpha * A @ B @ C + beta * D

@asc.kernel
def gemv_acc(alpha, y, A, x):
    y += alpha * A @ x

@asc.kernel
def gemv_sub(y, A, x):
    y -= A.T @ x

@asc.kernel
def row_acc(x2, y, A):
    x2 += y @ A

@asc.kernel
def scaled(alpha, A, x):
    return alpha * A @ x

@asc.kernel
def strided(C, A, B):
    C[::2, :] = A @ B
    C[1::2, ::2] = A[:, ::2] @ B[::2, ::2]
"""

DTYPES = [np.float32, np.float64]


def tol(dt, k):
    return dict(rtol=5e-5 if dt == np.float32 else 1e-12,
                atol=(1e-5 if dt == np.float32 else 1e-12) * (k + 1))


@pytest.fixture(scope="module")
def mod():
    return asc.compile(TEXT)


def rnd(rng, shape, dt):
    x = rng.random(shape) * 2 - 1
    if np.issubdtype(dt, np.complexfloating):
        x = x + 1j * (rng.random(shape) * 2 - 1)
    if np.issubdtype(dt, np.integer):
        x = rng.integers(-9, 9, shape)
    return x.astype(dt)


@pytest.mark.parametrize("dt", DTYPES)
@pytest.mark.parametrize("alpha,beta", [(1.5, 1.2), (1.0, 1.0), (0.0, 1.0),
                                        (1.0, 0.0), (0.0, 0.0), (-2.0, 0.5)])
def test_gemm_alpha_beta(mod, mode, dt, alpha, beta):
    rng = np.random.default_rng(1)
    for m, k, n in [(7, 5, 6), (40, 33, 50), (0, 4, 3), (4, 0, 3), (1, 9, 1)]:
        A, B, C = rnd(rng, (m, k), dt), rnd(rng, (k, n), dt), \
            rnd(rng, (m, n), dt)
        for kern in (mod.gemm, mod.gemm_right):
            want = C.copy()
            want[:] = alpha * A @ B + beta * want
            got = C.copy()
            kern(alpha, beta, got, A, B)
            np.testing.assert_allclose(got, want, **tol(dt, k))


@pytest.mark.parametrize("dt", DTYPES)
def test_zero_factors_keep_nan(mod, mode, dt):
    """numpy's 0 * nan is nan: BLAS, which reads neither operand when
    alpha is 0 nor C when beta is 0, is not used for them."""
    rng = np.random.default_rng(2)
    A, B, C = rnd(rng, (6, 5), dt), rnd(rng, (5, 4), dt), rnd(rng, (6, 4), dt)
    C[2, 3] = np.nan
    got = C.copy()
    mod.gemm(1.0, 0.0, got, A, B)
    with np.errstate(invalid="ignore"):
        want = 1.0 * A @ B + 0.0 * C
    assert np.isnan(got[2, 3]) and np.isnan(want[2, 3])
    np.testing.assert_allclose(got, want, **tol(dt, 5))
    A[1, 1] = np.inf
    got = C.copy()
    got[2, 3] = 1.0
    mod.gemm(0.0, 1.0, got, A, B)
    with np.errstate(invalid="ignore"):
        want = 0.0 * A @ B + 1.0 * got
    assert np.isnan(got[1]).all() and np.isnan(want[1]).all()
    np.testing.assert_allclose(got, want, **tol(dt, 5))


@pytest.mark.parametrize("dt", DTYPES)
def test_target_that_is_an_operand(mod, mode, dt):
    """C passed as A, or as B, or A and B the same array: the result is
    numpy's, as if the product went into a temporary first."""
    rng = np.random.default_rng(3)
    for n in (6, 64):
        X, Y = rnd(rng, (n, n), dt), rnd(rng, (n, n), dt)
        got = X.copy()
        mod.gemm(1.5, 0.5, got, got, Y)
        np.testing.assert_allclose(got, 1.5 * X @ Y + 0.5 * X, **tol(dt, n))
        got = X.copy()
        mod.gemm(1.5, 0.5, got, Y, got)
        np.testing.assert_allclose(got, 1.5 * Y @ X + 0.5 * X, **tol(dt, n))
        got = X.copy()
        mod.gemm(2.0, 1.0, got, got, got)
        np.testing.assert_allclose(got, 2.0 * X @ X + X, **tol(dt, n))
        # a view of C's memory: C's rows shifted by one
        big = rnd(rng, (n + 1, n), dt)
        want = big.copy()
        want[1:] = 1.5 * want[:-1] @ Y + 0.5 * want[1:]
        got = big.copy()
        mod.gemm(1.5, 0.5, got[1:], got[:-1], Y)
        np.testing.assert_allclose(got, want, **tol(dt, n))
        y, x = rnd(rng, n, dt), rnd(rng, n, dt)
        got = y.copy()
        mod.gemv_acc(2.0, got, X, got)
        np.testing.assert_allclose(got, y + 2.0 * X @ y, **tol(dt, n))


@pytest.mark.parametrize("dt", DTYPES)
def test_transposed_and_strided(mod, mode, dt):
    rng = np.random.default_rng(4)
    A, B = rnd(rng, (9, 12), dt), rnd(rng, (7, 9), dt)
    C = np.full((12, 7), 99, dt)
    mod.store(C, A, B)
    np.testing.assert_allclose(C, A.T @ B.T, **tol(dt, 9))
    C = np.full((12, 7), 99, dt)
    mod.store(C, np.asfortranarray(A), B[:, :])
    np.testing.assert_allclose(C, A.T @ B.T, **tol(dt, 9))
    Ct = np.full((7, 12), 99, dt).T             # a transposed target
    mod.store(Ct, A, B)
    np.testing.assert_allclose(Ct, A.T @ B.T, **tol(dt, 9))
    A2, B2 = rnd(rng, (5, 8), dt), rnd(rng, (8, 6), dt)
    C2 = np.zeros((10, 6), dt)
    mod.strided(C2, A2, B2)
    want = np.zeros((10, 6), dt)
    want[::2, :] = A2 @ B2
    want[1::2, ::2] = A2[:, ::2] @ B2[::2, ::2]
    np.testing.assert_allclose(C2, want, **tol(dt, 8))


@pytest.mark.parametrize("dt", DTYPES)
def test_vector_forms(mod, mode, dt):
    rng = np.random.default_rng(5)
    for m, n in [(30, 20), (1, 7), (7, 1), (0, 5), (5, 0)]:
        A, x, y = rnd(rng, (m, n), dt), rnd(rng, n, dt), rnd(rng, m, dt)
        got = y.copy()
        mod.gemv_acc(0.75, got, A, x)
        np.testing.assert_allclose(got, y + 0.75 * A @ x, **tol(dt, n))
        got = x.copy()
        mod.gemv_sub(got, A, y)
        np.testing.assert_allclose(got, x - A.T @ y, **tol(dt, m))
        got = x.copy()
        mod.row_acc(got, y, A)
        np.testing.assert_allclose(got, x + y @ A, **tol(dt, m))
        np.testing.assert_allclose(mod.scaled(-3.0, A, x), -3.0 * A @ x,
                                   **tol(dt, n))
    # a strided vector target and operand
    A, x, y = rnd(rng, (6, 8), dt), rnd(rng, 16, dt), rnd(rng, 12, dt)
    got = y.copy()
    mod.gemv_acc(2.0, got[::2], A, x[::2])
    want = y.copy()
    want[::2] += 2.0 * A @ x[::2]
    np.testing.assert_allclose(got, want, **tol(dt, 8))


@pytest.mark.parametrize("dt", DTYPES)
def test_chain(mod, mode, dt):
    rng = np.random.default_rng(6)
    A, B, C, D = (rnd(rng, s, dt) for s in [(8, 9), (9, 10), (10, 11),
                                             (8, 11)])
    for alpha, beta in [(1.5, 1.2), (0.0, 2.0), (1.0, 0.0)]:
        got = D.copy()
        mod.k2mm(alpha, beta, A, B, C, got)
        np.testing.assert_allclose(got, alpha * A @ B @ C + beta * D,
                                   **tol(dt, 90))


@pytest.mark.parametrize("dt", [np.int64, np.int32, np.complex128])
def test_other_dtypes(mod, mode, dt):
    """Integers and complex numbers are the general code's: exact for
    integers, numpy's values for complex."""
    rng = np.random.default_rng(7)
    A, B, C = rnd(rng, (5, 4), dt), rnd(rng, (4, 3), dt), rnd(rng, (5, 3), dt)
    alpha, beta = 3, 2
    got = C.copy()
    mod.gemm(alpha, beta, got, A, B)
    want = C.copy()
    want[:] = alpha * A @ B + beta * C
    if np.issubdtype(dt, np.integer):
        np.testing.assert_array_equal(got, want)
    else:
        np.testing.assert_allclose(got, want, rtol=1e-12)
    x, y = rnd(rng, 4, dt), rnd(rng, 5, dt)
    got = y.copy()
    mod.gemv_acc(alpha, got, A, x)
    want = y + alpha * A @ x
    np.testing.assert_allclose(got, want, rtol=1e-12)


def test_mismatched_shapes_raise(mod, mode):
    with pytest.raises(ValueError, match="mismatch in its core dimension"):
        mod.gemm(1.0, 1.0, np.zeros((3, 4)), np.zeros((3, 5)),
                 np.zeros((6, 4)))


IR_SRC = """
import numpy as np
import asc

@asc.kernel
def gemm(alpha, beta, C, A, B):
    C[:] = alpha * A @ B + beta * C

@asc.kernel
def mvt(x1, x2, y_1, y_2, A):
    x1 += A @ y_1
    x2 += y_2 @ A

@asc.kernel
def gesummv(alpha, A, x):
    return alpha * A.T @ x
"""


def test_ir_one_call_no_temporary(tmp_path):
    """The call into the target comes first, before any new array; the
    general code (its own product into a new array) only behind it."""
    f = tmp_path / "k.py"
    f.write_text(IR_SRC)
    ir = ascc_ir(f, "gemm(f64, f64, f64[:, :], f64[:, :], f64[:, :])")
    assert ir.count("= gemm %C, %A,") == 1, ir
    assert "new_array" not in ir.split("= gemm %C,")[0], ir
    assert "%alpha, %beta @7" in ir.split("= gemm %C,")[1], ir
    assert "blas: the statement at line 7 is one gemm call into its " \
        "target (alpha: the product's scale, beta: the target's scale)" in ir
    ir = ascc_ir(f, "mvt(f32[:], f32[:], f32[:], f32[:], f32[:, :])")
    assert ir.count("= gemm %x1, %A,") == 1, ir
    assert ir.count("= gemm %x2, %y_2,") == 1, ir
    assert ir.count("one gemv call into its target (alpha: 1, beta: 1)") \
        == 2, ir
    assert "new_array" not in ir.split("= gemm %x1,")[0], ir
    ir = ascc_ir(f, "gesummv(f64, f64[:, :], f64[:])")
    assert ir.count("= gemm ") == 1, ir
    assert "takes its left operand's scale as alpha" in ir, ir
    # A.T is a transpose flag and alpha the call's: the result is the only
    # array made
    assert ir.count("new_array") == 1, ir
    assert "%alpha, 0.0:f64" in ir, ir
