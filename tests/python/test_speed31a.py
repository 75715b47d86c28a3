"""Lowerings that keep kernels of numpy code ahead of numpy
(docs/optimizer.md, "Work numpy does once"): a value assigned to several
targets (`a[...] = b[...] = x @ y`) is evaluated once, as Python does,
into one temporary that each target copies; `x[a[m], b[m]] = v[m]` (index
arrays selected by one mask) is one predicated loop over the mask, with
no selected index arrays, value array or counts of the mask; an integer
reduction loop (a mask's count) too small to share runs on the calling
thread.  Each form is compared with numpy, and the IR or C shows the
work done once.""" 
import os
import subprocess

import numpy as np
import pytest

import asc
from envvars import ROOT, ascc_ir

TEXT = """
import numpy as np
import asc

@asc.kernel
def sym(M, data):
    out = np.eye(M, dtype=data.dtype)
    for i in range(M - 1):
        out[i + 1:M, i] = out[i, i + 1:M] = data[:, i] @ data[:, i + 1:M]
    return out

@asc.kernel
def scaled_sym(M, s, data):
    out = np.zeros((M, M), dtype=data.dtype)
    for i in range(M):
        out[i:M, i] = out[i, i:M] = data[:, i] @ data[:, i:M] / (s - 1.0)
    return out

@asc.kernel
def shifted(x):
    x[0:3] = x[1:4] = x[2:5] * 2.0

@asc.kernel
def three(a, b, c, x, y):
    a[:] = b[1:, :] = c[::2] = x + y

@asc.kernel
def scatter(N, Z, Xi, Yi, V, I, k):
    N[Xi[I], Yi[I]] = k + 1
    Z[Xi[I], Yi[I]] = V[I] * 2.0

@asc.kernel
def count(I):
    return np.sum(I)
"""


@pytest.fixture(scope="module")
def mod():
    return asc.compile(TEXT)


def np_sym(M, data):
    out = np.eye(M, dtype=data.dtype)
    for i in range(M - 1):
        out[i + 1:M, i] = out[i, i + 1:M] = data[:, i] @ data[:, i + 1:M]
    return out


def np_scaled_sym(M, s, data):
    out = np.zeros((M, M), dtype=data.dtype)
    for i in range(M):
        out[i:M, i] = out[i, i:M] = data[:, i] @ data[:, i:M] / (s - 1.0)
    return out


@pytest.mark.parametrize("dt", [np.float32, np.float64])
def test_chained_product_matches_numpy(mod, dt):
    rng = np.random.default_rng(0)
    for n, m in [(7, 5), (60, 40), (1, 3)]:
        data = rng.random((n, m)).astype(dt)
        got = mod.sym(m, data.copy())
        want = np_sym(m, data.copy())
        rt = 1e-5 if dt == np.float32 else 1e-12
        np.testing.assert_allclose(got, want, rtol=rt, atol=rt * n)
        got = mod.scaled_sym(m, float(n) + 1.0, data.copy())
        want = np_scaled_sym(m, float(n) + 1.0, data.copy())
        np.testing.assert_allclose(got, want, rtol=rt, atol=rt * n)


def test_chained_value_is_evaluated_once(mod):
    """The value reads what the first target overwrites: Python computes
    it once, before any target is assigned."""
    x = np.arange(8, dtype=np.float64)
    want = x.copy()
    want[0:3] = want[1:4] = want[2:5] * 2.0
    mod.shifted(x)
    np.testing.assert_array_equal(x, want)


def test_chained_targets_convert_each(mod):
    rng = np.random.default_rng(1)
    x, y = rng.random((3, 4)) * 9, rng.random((3, 4)) * 9
    a = np.zeros((3, 4), np.int32)
    b = np.zeros((4, 4), np.float32)
    c = np.zeros((6, 4), np.float64)
    wa, wb, wc = a.copy(), b.copy(), c.copy()
    wa[:] = wb[1:, :] = wc[::2] = x + y
    mod.three(a, b, c, x, y)
    np.testing.assert_array_equal(a, wa)
    np.testing.assert_array_equal(b, wb)
    np.testing.assert_array_equal(c, wc)


def test_chained_product_is_one_gemm(tmp_path):
    """One product per iteration (the old lowering made one per target),
    into a temporary both targets copy."""
    f = tmp_path / "k.py"
    f.write_text(TEXT)
    ir = ascc_ir(f, "sym(int, f64[:, ::1])")
    assert ir.count("= gemm ") == 1, ir
    ir = ascc_ir(f, "scaled_sym(int, float, f64[:, ::1])")
    assert ir.count("= gemm ") == 1, ir


def scatter_args(rng, n=40, shape=(6, 7)):
    xi = rng.integers(-shape[0], shape[0], n)
    yi = rng.integers(-shape[1], shape[1], n)
    v = rng.random(n) + 1j * rng.random(n)
    m = rng.random(n) < 0.5
    return (np.zeros(shape, np.int64), np.zeros(shape, np.complex128),
            xi, yi, v, m)


def test_masked_scatter_matches_numpy(mod):
    """Repeated and negative positions: the last store wins, as numpy's;
    an empty mask stores nothing."""
    rng = np.random.default_rng(2)
    for n in (40, 1, 0):
        N, Z, xi, yi, v, m = scatter_args(rng, n)
        wN, wZ = N.copy(), Z.copy()
        wN[xi[m], yi[m]] = 5 + 1
        wZ[xi[m], yi[m]] = v[m] * 2.0
        mod.scatter(N, Z, xi, yi, v, m, 5)
        np.testing.assert_array_equal(N, wN)
        np.testing.assert_array_equal(Z, wZ)
    # strided index arrays and mask
    N, Z, xi, yi, v, m = scatter_args(rng, 80)
    wN, wZ = N.copy(), Z.copy()
    wN[xi[::2][m[::2]], yi[1::2][m[::2]]] = 3
    wZ[xi[::2][m[::2]], yi[1::2][m[::2]]] = v[::2][m[::2]] * 2.0
    mod.scatter(N, Z, xi[::2], yi[1::2], v[::2], m[::2], 2)
    np.testing.assert_array_equal(N, wN)
    np.testing.assert_array_equal(Z, wZ)


def test_masked_scatter_errors(mod):
    """numpy's IndexError before anything is written: an index out of
    range where the mask is true (one where it is false is never read),
    a mask of another length."""
    rng = np.random.default_rng(3)
    N, Z, xi, yi, v, m = scatter_args(rng, 40)
    xi[~m] = 99                     # not selected: fine
    wN = N.copy()
    wN[xi[m], yi[m]] = 1
    mod.scatter(N, Z, xi, yi, v, m, 0)
    np.testing.assert_array_equal(N, wN)
    N[:] = 0
    bad = xi.copy()
    bad[np.flatnonzero(m)[-1]] = 6
    with pytest.raises(IndexError, match="index 6 is out of bounds for "
                                         "axis 0 with size 6"):
        mod.scatter(N, Z, bad, yi, v, m, 0)
    assert not N.any()
    with pytest.raises(IndexError, match="boolean index did not match"):
        mod.scatter(N, Z, xi[:-1], yi, v, m, 0)
    assert not N.any()


def test_masked_scatter_is_one_loop(tmp_path):
    """No selected index array or value array: the only arrays the
    statements make are none (the old lowering made three for each
    line, each after a count of the mask)."""
    f = tmp_path / "k.py"
    f.write_text(TEXT)
    ir = ascc_ir(f, "scatter(i64[:, ::1], c128[:, ::1], i64[::1], i64[::1], "
                 "c128[::1], bool[::1], int)")
    assert "new_array" not in ir, ir
    assert ir.count("masked scatter: one predicated loop") == 2, ir


def test_integer_reduction_takes_a_grain(mod, tmp_path):
    """A count of a mask (an exact integer reduction) hands out parts of
    at least a grain of work, so a short one runs on the calling thread
    (the old C always split it into one part per team thread)."""
    f = tmp_path / "k.py"
    f.write_text(TEXT)
    r = subprocess.run([os.path.join(ROOT, "build", "ascc"), "--emit=c",
                        "--signature", "count(bool[::1])", str(f)],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert ".n / grain" in r.stdout, r.stdout
    rng = np.random.default_rng(4)
    for n in (0, 1, 1000, 300001):
        m = rng.random(n) < 0.3
        assert mod.count(m) == np.sum(m)
