"""`@`, np.dot and np.matmul of float32/float64 matrices on a BLAS
(asc_krt.gemm, docs/arrays.md "`@`, `np.dot`, `np.matmul`"): every
product is compared with numpy's, on the BLAS (when the runtime finds
one), with ASC_BLAS=0 (the loops the compiler emits), and in a process
where no library can be loaded (ASC_BLAS_LIB naming a missing file).
Shapes include empty ones, 1 x n and n x 1; operands are transposed,
strided and reversed views; products run inside asc.prange loops and
on several blocks."""
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
def mm(a, b, out):
    c = a @ b
    out[...] = c

@asc.kernel
def views(a, b, out1, out2, out3, out4):
    out1[...] = a.T @ b.T
    out2[...] = np.dot(a[::2, 1::2], b[1::2, ::3])
    out3[...] = np.matmul(a[::-1, :], b[:, ::-1])
    out4[...] = a[1:3, :] @ b[:, 2:3]

@asc.kernel
def vec(a, v, w, out1, out2, out3):
    out1[:] = a @ v
    out2[:] = np.dot(w, a)
    out3[:] = a[:, ::2] @ v[::2]

@asc.kernel
def in_prange(x, y, out):
    for i in asc.prange(x.shape[0]):
        t = x[i] @ y[i]
        out[i, :, :] = t + 1.0

@asc.kernel
def per_block(x, y, out):
    i = asc.get_block_idx()
    out[i, :, :] = x[i] @ y[i]

@asc.kernel
def mixed(a, b, out):
    out[...] = a @ b
"""

SHAPES = [(5, 7, 4), (0, 3, 4), (3, 0, 4), (3, 4, 0), (1, 9, 6), (6, 9, 1),
          (1, 1, 1), (37, 53, 29), (130, 70, 90), (2, 300, 700)]

DTYPES = [np.float32, np.float64]


def tol(dt, k):
    return dict(rtol=2e-5 if dt == np.float32 else 1e-12,
                atol=(1e-5 if dt == np.float32 else 1e-12) * (k + 1))


@pytest.fixture(params=["blas", "loops"])
def mode(request, monkeypatch):
    if request.param == "loops":
        monkeypatch.setenv("ASC_BLAS", "0")    # read at each product
    else:
        monkeypatch.delenv("ASC_BLAS", raising=False)
    return request.param


@pytest.fixture(scope="module")
def mod():
    return asc.compile(TEXT)


def rnd(rng, shape, dt):
    return (rng.random(shape) * 2 - 1).astype(dt)


@pytest.mark.parametrize("dt", DTYPES)
def test_shapes(mod, mode, dt):
    rng = np.random.default_rng(1)
    for m, k, n in SHAPES:
        a, b = rnd(rng, (m, k), dt), rnd(rng, (k, n), dt)
        out = np.full((m, n), 99, dt)
        mod.mm(a, b, out)
        np.testing.assert_allclose(out, a @ b, **tol(dt, k))
        # column-major operands: transposes for BLAS
        out[...] = 99
        mod.mm(np.asfortranarray(a), np.asfortranarray(b), out)
        np.testing.assert_allclose(out, a @ b, **tol(dt, k))


@pytest.mark.parametrize("dt", DTYPES)
def test_views_and_vectors(mod, mode, dt):
    rng = np.random.default_rng(2)
    a, b = rnd(rng, (12, 10), dt), rnd(rng, (10, 12), dt)
    o1, o2 = np.zeros((10, 10), dt), np.zeros((6, 4), dt)
    o3, o4 = np.zeros((12, 12), dt), np.zeros((2, 1), dt)
    mod.views(a, b, o1, o2, o3, o4)
    np.testing.assert_allclose(o1, a.T @ b.T, **tol(dt, 12))
    np.testing.assert_allclose(o2, a[::2, 1::2] @ b[1::2, ::3], **tol(dt, 5))
    np.testing.assert_allclose(o3, a[::-1, :] @ b[:, ::-1], **tol(dt, 10))
    np.testing.assert_allclose(o4, a[1:3, :] @ b[:, 2:3], **tol(dt, 10))
    # a transposed parameter, as numpy hands it over
    o1[...] = 0
    mod.views(b.T, a.T, o1, o2, o3, o4)
    np.testing.assert_allclose(o1, b @ a, **tol(dt, 12))
    v, w = rnd(rng, 10, dt), rnd(rng, 12, dt)
    r1, r2, r3 = np.zeros(12, dt), np.zeros(10, dt), np.zeros(12, dt)
    mod.vec(a, v, w, r1, r2, r3)
    np.testing.assert_allclose(r1, a @ v, **tol(dt, 10))
    np.testing.assert_allclose(r2, w @ a, **tol(dt, 12))
    np.testing.assert_allclose(r3, a[:, ::2] @ v[::2], **tol(dt, 5))
    for m, k in [(0, 4), (4, 0), (1, 1)]:
        a0, v0 = rnd(rng, (m, k), dt), rnd(rng, k, dt)
        r = np.full(m, 99, dt)
        mod.vec(a0, v0, rnd(rng, m, dt), r, np.zeros(k, dt),
                np.zeros(m, dt))
        np.testing.assert_allclose(r, a0 @ v0, **tol(dt, k))


@pytest.mark.parametrize("dt", DTYPES)
def test_inside_prange_and_blocks(mod, mode, dt):
    rng = np.random.default_rng(3)
    x, y = rnd(rng, (6, 33, 40), dt), rnd(rng, (6, 40, 35), dt)
    want = np.matmul(x, y)
    out = np.zeros((6, 33, 35), dt)
    mod.in_prange(x, y, out)
    np.testing.assert_allclose(out, want + 1, **tol(dt, 40))
    out[...] = 0
    mod.per_block[6](x, y, out)
    asc.synchronize()
    np.testing.assert_allclose(out, want, **tol(dt, 40))


def test_other_dtypes_keep_the_loops(mod, mode):
    rng = np.random.default_rng(4)
    ai, bi = rng.integers(-9, 9, (7, 5)), rng.integers(-9, 9, (5, 3))
    o = np.zeros((7, 3), np.int64)
    mod.mixed(ai, bi, o)
    np.testing.assert_array_equal(o, ai @ bi)          # integers: exact
    a32, b64 = rnd(rng, (7, 5), np.float32), rnd(rng, (5, 3), np.float64)
    o = np.zeros((7, 3))
    mod.mixed(a32, b64, o)          # promoted to float64: the loops
    np.testing.assert_allclose(o, a32 @ b64, rtol=1e-12)


def test_without_the_library(tmp_path):
    """A process where no BLAS loads runs the same kernels (the loops)."""
    code = (
        "import numpy as np, asc\n"
        f"m = asc.compile({TEXT!r})\n"
        "rng = np.random.default_rng(5)\n"
        "for dt in (np.float32, np.float64):\n"
        "    for s in [(5, 7, 4), (0, 3, 4), (3, 0, 4), (64, 65, 66)]:\n"
        "        a = rng.random(s[:2]).astype(dt)\n"
        "        b = rng.random(s[1:]).astype(dt)\n"
        "        o = np.full((s[0], s[2]), 99, dt)\n"
        "        m.mm(a.T.copy().T, b, o)\n"
        "        np.testing.assert_allclose(o, a @ b, rtol=2e-5)\n"
        "print('matched')\n")
    env = dict(os.environ, ASC_BLAS_LIB=str(tmp_path / "no_such_blas.so"))
    env.pop("ASC_BLAS", None)
    pkg = os.path.dirname(os.path.dirname(os.path.abspath(asc.__file__)))
    env["PYTHONPATH"] = os.pathsep.join(
        [pkg] + [p for p in [env.get("PYTHONPATH")] if p])
    r = subprocess.run([sys.executable, "-c", code], env=env,
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    assert "matched" in r.stdout
