"""np.linalg in kernels (types/infer_linalg.c, lower_linalg.c, the
runtime's asc_krt.linalg on LAPACK): inv, solve, cholesky, det, slogdet,
eigh and eigvalsh against numpy on each dtype, sizes from empty and 1x1
up, views that are not contiguous, stacks of matrices, results used in
later expressions, and numpy's errors (docs/arrays.md, "np.linalg")."""
import os
import subprocess
import sys

import numpy as np
import pytest

import asc

TEXT = """
import numpy as np
import asc

@asc.kernel
def inv(a):
    return np.linalg.inv(a)

@asc.kernel
def solve(a, b):
    return np.linalg.solve(a, b)

@asc.kernel
def cholesky(a):
    return np.linalg.cholesky(a)

@asc.kernel
def det(a):
    return np.linalg.det(a)

@asc.kernel
def slogdet(a):
    s, l = np.linalg.slogdet(a)
    return s, l

@asc.kernel
def eigh(a):
    w, v = np.linalg.eigh(a)
    return w, v

@asc.kernel
def eigvalsh(a):
    return np.linalg.eigvalsh(a)

@asc.kernel
def svd(a):
    u, s, vh = np.linalg.svd(a)
    return u, s, vh

@asc.kernel
def svd_reduced(a):
    u, s, vh = np.linalg.svd(a, full_matrices=False)
    return u, s, vh

@asc.kernel
def svd_values(a):
    return np.linalg.svd(a, compute_uv=False)

@asc.kernel
def qr(a):
    q, r = np.linalg.qr(a)
    return q, r

@asc.kernel
def qr_used(a):
    q, r = np.linalg.qr(a.T, mode='reduced')
    return q @ r - a.T, np.linalg.svd(a.T, compute_uv=False).sum()

@asc.kernel
def lstsq(a, b):
    x, res, rank, s = np.linalg.lstsq(a, b, rcond=None)
    return x, res, rank, s

@asc.kernel
def views(a, b):
    return (np.linalg.inv(a.T), np.linalg.solve(a[::-1], b[::2]),
            np.linalg.det(a[:, ::-1]), np.linalg.inv(a + 1.0))

@asc.kernel
def used(a, b):
    x = np.linalg.solve(a, b)
    r = a @ x - b
    c = np.linalg.cholesky(a @ a.T + 4.0 * np.eye(a.shape[0]))
    c2 = c @ c.T
    w, v = np.linalg.eigh(c2)
    return r, c2, np.linalg.det(a) * 2.0 + 1.0, v * w, w.sum()

@asc.kernel
def in_loop(zs, a, y):
    acc = np.zeros_like(y)
    for z in zs:
        t = z * np.eye(a.shape[0]) - a
        acc += np.linalg.inv(t) @ y + np.linalg.solve(t, y)
    return acc

@asc.kernel
def chol_upper(a):
    a[:] = np.linalg.cholesky(a) + np.triu(a, k=1)

@asc.kernel
def caught(a):
    try:
        return np.linalg.inv(a)[0, 0]
    except ValueError:
        return -1.0
"""

DTYPES = [np.float32, np.float64, np.complex64, np.complex128]


@pytest.fixture(scope="module")
def mod():
    return asc.compile(TEXT)


def rtol(dt):
    return 2e-3 if np.dtype(dt) in (np.float32, np.complex64) else 1e-9


def rand(rng, shape, dt):
    x = rng.standard_normal(shape)
    if np.issubdtype(dt, np.complexfloating):
        x = x + 1j * rng.standard_normal(shape)
    return x.astype(dt)


def spd(rng, n, dt):
    a = rand(rng, (n, n), dt)
    return (a @ a.conj().T + n * np.eye(n)).astype(dt)


def close(got, want, dt):
    got = np.asarray(got)
    want = np.asarray(want)
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    assert got.shape == want.shape, (got.shape, want.shape)
    tol = rtol(dt)
    scale = max(1.0, float(np.max(np.abs(want)))) if want.size else 1.0
    assert np.allclose(got, want, rtol=tol, atol=tol * scale), (got, want)


@pytest.mark.parametrize("dt", DTYPES)
@pytest.mark.parametrize("n", [0, 1, 2, 7, 33])
def test_inv_solve_det(mod, dt, n):
    rng = np.random.default_rng(n)
    a = rand(rng, (n, n), dt) + n * np.eye(n, dtype=dt)
    b1 = rand(rng, (n,), dt)
    b2 = rand(rng, (n, 3), dt)
    close(mod.inv(a), np.linalg.inv(a), dt)
    close(mod.solve(a, b1), np.linalg.solve(a, b1), dt)
    close(mod.solve(a, b2), np.linalg.solve(a, b2), dt)
    ad = (a / max(n, 1)).astype(dt)   # a determinant float32 holds
    close(mod.det(ad), np.linalg.det(ad), dt)
    s, l = mod.slogdet(a)
    s0, l0 = np.linalg.slogdet(a)
    close(s, s0, dt)
    close(l, l0, dt)


@pytest.mark.parametrize("dt", DTYPES)
@pytest.mark.parametrize("n", [0, 1, 3, 20])
def test_cholesky_eigh(mod, dt, n):
    rng = np.random.default_rng(100 + n)
    a = spd(rng, n, dt)
    lo = mod.cholesky(a)
    close(lo, np.linalg.cholesky(a), dt)
    assert not np.triu(lo, 1).any()          # numpy's zeros above
    w, v = mod.eigh(a)
    w0, v0 = np.linalg.eigh(a)
    close(w, w0, dt)
    assert v.dtype == v0.dtype and v.shape == v0.shape
    # eigenvectors up to a unit factor each: check a v = v w instead
    close(a @ v, v * w, dt)
    close(mod.eigvalsh(a), np.linalg.eigvalsh(a), dt)


@pytest.mark.parametrize("dt", DTYPES)
@pytest.mark.parametrize("shape", [(0, 3), (3, 0), (1, 1), (4, 3), (3, 5),
                                   (9, 9)])
def test_svd_qr(mod, dt, shape):
    rng = np.random.default_rng(sum(shape))
    a = rand(rng, shape, dt)
    u, s, vh = mod.svd(a)
    u0, s0, vh0 = np.linalg.svd(a)
    close(s, s0, dt)
    assert u.shape == u0.shape and vh.shape == vh0.shape
    assert u.dtype == u0.dtype and vh.dtype == vh0.dtype
    k = len(s)
    close((u[:, :k] * s) @ vh[:k], a, dt)
    if a.size == 0:   # numpy's identities
        assert np.array_equal(u, u0) and np.array_equal(vh, vh0)
    else:             # unitary factors
        close(u.conj().T @ u, np.eye(u.shape[0], dtype=dt), dt)
        close(vh @ vh.conj().T, np.eye(vh.shape[0], dtype=dt), dt)
    u, s, vh = mod.svd_reduced(a)
    u0, s0, vh0 = np.linalg.svd(a, full_matrices=False)
    assert u.shape == u0.shape and vh.shape == vh0.shape
    close((u * s) @ vh, a, dt)
    close(mod.svd_values(a), np.linalg.svd(a, compute_uv=False), dt)
    q, r = mod.qr(a)
    q0, r0 = np.linalg.qr(a)
    close(q, q0, dt)    # LAPACK's signs, numpy's too
    close(r, r0, dt)


@pytest.mark.parametrize("dt", DTYPES)
@pytest.mark.parametrize("ash, bsh", [((6, 3), (6,)), ((6, 3), (6, 2)),
                                      ((3, 6), (3, 2)), ((4, 4), (4,)),
                                      ((3, 0), (3, 2)), ((0, 3), (0, 2)),
                                      ((5, 2), (5, 0)), ((1, 1), (1,))])
def test_lstsq(mod, dt, ash, bsh):
    rng = np.random.default_rng(sum(ash) + sum(bsh))
    a = rand(rng, ash, dt)
    b = rand(rng, bsh, dt)
    got = mod.lstsq(a, b)
    want = np.linalg.lstsq(a, b, rcond=None)
    for g, w in zip(got, want):
        close(g, w, dt)
    assert isinstance(got[2], np.int32)


def test_lstsq_rank_deficient_and_errors(mod):
    a = np.ones((4, 2))
    x, res, rank, s = mod.lstsq(a, np.arange(4.0))
    x0, res0, rank0, s0 = np.linalg.lstsq(a, np.arange(4.0), rcond=None)
    assert rank == rank0 == 1 and res.shape == res0.shape == (0,)
    assert np.allclose(x, x0) and np.allclose(s, s0)
    with pytest.raises(np.linalg.LinAlgError, match="Incompatible dimensions"):
        mod.lstsq(np.ones((4, 2)), np.ones(3))


def test_qr_svd_of_views_used_later(mod):
    rng = np.random.default_rng(2)
    a = rng.standard_normal((3, 6))
    d, total = mod.qr_used(a)
    assert np.allclose(d, 0, atol=1e-12)
    assert np.isclose(total, np.linalg.svd(a.T, compute_uv=False).sum())


def test_integer_input_is_float64(mod):
    a = np.array([[4, 1], [2, 3]], dtype=np.int32)
    b = np.array([1, 2], dtype=np.int64)
    close(mod.inv(a), np.linalg.inv(a), np.float64)
    close(mod.solve(a, b), np.linalg.solve(a, b), np.float64)
    close(mod.det(a), np.linalg.det(a), np.float64)
    # float32 with float64: numpy's common type is float64
    a32 = a.astype(np.float32)
    close(mod.solve(a32, b.astype(np.float64)),
          np.linalg.solve(a32, b.astype(np.float64)), np.float64)


@pytest.mark.parametrize("dt", [np.float64, np.complex64])
def test_stacks(mod, dt):
    rng = np.random.default_rng(7)
    a = rand(rng, (2, 3, 4, 4), dt) + 4 * np.eye(4, dtype=dt)
    b = rand(rng, (2, 3, 4, 2), dt)
    close(mod.inv(a), np.linalg.inv(a), dt)
    close(mod.det(a), np.linalg.det(a), dt)
    close(mod.solve(a, b), np.linalg.solve(a, b), dt)
    b1 = rand(rng, (4,), dt)
    close(mod.solve(a, b1), np.linalg.solve(a, b1), dt)
    s = np.stack([spd(rng, 4, dt) for _ in range(3)])
    close(mod.cholesky(s), np.linalg.cholesky(s), dt)
    close(mod.eigvalsh(s), np.linalg.eigvalsh(s), dt)


@pytest.mark.parametrize("dt", [np.float64, np.complex128])
def test_views(mod, dt):
    rng = np.random.default_rng(3)
    a = rand(rng, (5, 5), dt) + 5 * np.eye(5, dtype=dt)
    b = rand(rng, (10,), dt)
    got = mod.views(a, b)
    want = (np.linalg.inv(a.T), np.linalg.solve(a[::-1], b[::2]),
            np.linalg.det(a[:, ::-1]), np.linalg.inv(a + 1.0))
    for g, w in zip(got, want):
        close(g, w, dt)


def test_results_used_later(mod):
    rng = np.random.default_rng(11)
    a = rng.standard_normal((6, 6)) + 6 * np.eye(6)
    b = rng.standard_normal((6, 2))
    r, c2, d, vw, ws = mod.used(a, b)
    assert np.allclose(r, 0, atol=1e-10)
    m = a @ a.T + 4.0 * np.eye(6)
    assert np.allclose(c2, m)
    assert np.isclose(d, np.linalg.det(a) * 2.0 + 1.0)
    w0, v0 = np.linalg.eigh(m)
    assert np.allclose(np.abs(vw), np.abs(v0 * w0))
    assert np.isclose(ws, w0.sum())


def test_inverse_and_solve_in_a_loop(mod):
    # the shape of NPBench's contour integral: complex128, one matrix per z
    rng = np.random.default_rng(5)
    a = rand(rng, (8, 8), np.complex128)
    y = rand(rng, (8, 3), np.complex128)
    zs = np.exp(2j * np.pi * np.arange(6) / 6) * 10
    want = np.zeros_like(y)
    for z in zs:
        t = z * np.eye(8) - a
        want += np.linalg.inv(t) @ y + np.linalg.solve(t, y)
    close(mod.in_loop(zs, a, y), want, np.complex128)


@pytest.mark.parametrize("dt", [np.float32, np.float64])
def test_cholesky_plus_triu_in_place(mod, dt):
    # NPBench cholesky2: the factor's zeros above the diagonal are what
    # np.triu(A, k=1) fills; A read before it is written
    rng = np.random.default_rng(9)
    a = spd(rng, 12, dt)
    want = np.linalg.cholesky(a) + np.triu(a, k=1)
    mod.chol_upper(a)
    close(a, want, dt)


@pytest.mark.parametrize("dt", DTYPES)
def test_errors(mod, dt):
    with pytest.raises(np.linalg.LinAlgError, match="^.*Singular matrix$"):
        mod.inv(np.zeros((3, 3), dt))
    with pytest.raises(np.linalg.LinAlgError, match="Singular matrix"):
        mod.solve(np.ones((2, 2), dt), np.ones(2, dt))
    with pytest.raises(np.linalg.LinAlgError,
                       match="Matrix is not positive definite"):
        mod.cholesky(-np.eye(3, dtype=dt))
    for f in (mod.inv, mod.cholesky, mod.det, mod.eigvalsh):
        with pytest.raises(np.linalg.LinAlgError,
                           match="Last 2 dimensions of the array must be "
                                 "square"):
            f(np.ones((2, 3), dt))
    with pytest.raises(ValueError, match=r"solve1: Input operand 1 has a "
                       r"mismatch in its core dimension 0.*\(size 2 is "
                       r"different from 3\)"):
        mod.solve(np.eye(3, dtype=dt), np.ones(2, dt))
    with pytest.raises(ValueError, match=r"solve: Input operand 1 has a "
                       r"mismatch.*\(m,m\),\(m,n\)->\(m,n\) \(size 4 is "
                       r"different from 3\)"):
        mod.solve(np.eye(3, dtype=dt), np.ones((4, 2), dt))
    # a singular matrix has determinant 0, as numpy's (no error)
    assert mod.det(np.zeros((3, 3), dt)) == 0
    s, l = mod.slogdet(np.zeros((2, 2), dt))
    assert s == 0 and l == -np.inf


def test_linalg_error_is_a_value_error_in_kernels(mod):
    assert mod.caught(np.zeros((2, 2))) == -1.0
    assert mod.caught(2 * np.eye(2)) == 0.5


@pytest.mark.parametrize("body, msg", [
    ("return np.linalg.inv(a[0])",
     "1-dimensional array given. Array must be at least two-dimensional"),
    ("return np.linalg.det(a.astype(np.float16))",
     "array type float16 is unsupported in linalg"),
    ("return np.linalg.cholesky(a, upper=True)", "upper is False in kernels"),
    ("return np.linalg.eigh(a, UPLO='U')[0]", "UPLO is 'L' in kernels"),
    ("return np.linalg.qr(a, mode='complete')[0]",
     "mode is 'reduced' in kernels"),
    ("return np.linalg.svd(a, hermitian=True)[0]", "hermitian is False"),
])
def test_compile_errors(body, msg):
    text = ("import numpy as np\nimport asc\n\n@asc.kernel\ndef f(a):\n    "
            + body + "\n")
    m = asc.compile(text)
    with pytest.raises(asc.CompileError, match=msg):
        m.f(np.eye(3))


def test_without_lapack_a_clear_error(tmp_path):
    # no LAPACK in the process: a RuntimeError at the call, nothing else
    # (matrix products keep working without the BLAS too)
    code = (
        "import numpy as np, asc\n"
        "m = asc.compile('''import numpy as np\\nimport asc\\n@asc.kernel\\n"
        "def f(a):\\n    return np.linalg.inv(a)\\n''')\n"
        "try:\n"
        "    m.f(np.eye(2))\n"
        "except RuntimeError as e:\n"
        "    print('RuntimeError', e)\n"
        "print(m.f(np.zeros((0, 0))).shape)\n")
    # the child finds this asc (conftest puts it on sys.path, not the
    # environment)
    pkg = os.path.dirname(os.path.dirname(os.path.abspath(asc.__file__)))
    path = os.pathsep.join(p for p in (pkg, os.environ.get("PYTHONPATH")) if p)
    env = dict(os.environ, ASC_LAPACK_LIB=str(tmp_path / "none.so"),
               ASC_CACHE_DIR=str(tmp_path / "cache"), PYTHONPATH=path)
    out = subprocess.run([sys.executable, "-c", code], env=env,
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert "RuntimeError" in out.stdout and "needs LAPACK" in out.stdout, \
        out.stdout
    assert "(0, 0)" in out.stdout
