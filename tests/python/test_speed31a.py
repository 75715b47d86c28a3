"""Lowerings that keep kernels of numpy code ahead of numpy
(docs/optimizer.md, "Work numpy does once"): a value assigned to several
targets (`a[...] = b[...] = x @ y`) is evaluated once, as Python does,
into one temporary that each target copies.  Each form is compared with
numpy, and the IR shows the work done once."""
import numpy as np
import pytest

import asc
from envvars import ascc_ir

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
