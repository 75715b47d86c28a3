"""Bugs tests/tools/numpy_fuzz.py found, each compared with numpy, and a
bounded, seeded run of that fuzzer (docs/arrays.md, "The numpy function
fuzzer")."""
import subprocess
import sys

import numpy as np
import pytest

import asc

SRC = """
import numpy as np
import asc

@asc.kernel
def angle(a):
    return np.angle(a)

@asc.kernel
def angle_view(a):
    return np.angle(a[::-2]) + 1.0

@asc.kernel
def gather_add(x, i, v):
    x[i] += v

@asc.kernel
def gather_mul(x, i):
    x[i] *= 3

@asc.kernel
def cov(m):
    return np.cov(m)

@asc.kernel
def corr(m, y):
    return np.corrcoef(m, y, rowvar=False)

@asc.kernel
def cat_flat(a, b, c):
    return np.concatenate((a.T, b[::-1], c), axis=None)
"""

M = asc.compile(SRC)


@pytest.mark.parametrize("dtype", ["int32", "int64", "uint32"])
def test_angle_of_integers(dtype):
    """np.angle of an integer array is pi where an element is negative, 0
    elsewhere (numpy_fuzz seed 1 case 0: the conversion to float64 was
    placed after the atan2 that reads it, so each element got the angle
    of the one before: [-3, 2] gave [0, pi])."""
    a = np.array([3, 0, 9] if dtype.startswith("u") else [-3, 2, 0, -1, 5, -7], dtype)
    np.testing.assert_array_equal(M.angle(a), np.angle(a))
    assert M.angle(a).dtype == np.angle(a).dtype
    np.testing.assert_array_equal(M.angle_view(a), np.angle(a[::-2]) + 1.0)
    if dtype in ("int32", "int64"):
        assert M.angle(np.array(-4, dtype)) == np.pi
        assert M.angle(-4) == np.pi and M.angle(4) == 0.0


def test_concatenate_flat_of_other_ranks():
    """np.concatenate(arrays, axis=None) ravels each array, so arrays of
    other numbers of axes join (numpy_fuzz seed 3 case 14: it was the
    compile error "all the input arrays must have same number of
    dimensions")."""
    a = np.arange(6.0).reshape(2, 3)
    b = np.arange(4, dtype=np.int64)
    c = np.arange(24.0).reshape(2, 3, 4)[:, ::2]
    got, want = M.cat_flat(a, b, c), np.concatenate((a.T, b[::-1], c), axis=None)
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)
    e = np.zeros((0, 3, 2))
    np.testing.assert_array_equal(M.cat_flat(a, b[:0], e),
                                  np.concatenate((a.T, b[:0], e), axis=None))


@pytest.mark.parametrize("shape", [(4, 3), (5, 2, 3)])
def test_index_array_update_of_rows(shape):
    """x[i] op= v with an index array into an array of 2 or more axes: the
    new values go to a temporary, then are stored; the offset into the
    temporary was computed after the load that reads it (an uninitialised
    offset: wrong values or a crash).  The same misplaced-operand pattern
    as np.angle's, found by reading the lowering for it."""
    x = np.arange(float(np.prod(shape))).reshape(shape)
    i = np.array([2, 0, 3, 0])
    v = np.arange(float(np.prod((4,) + shape[1:]))).reshape((4,) + shape[1:]) * 10
    got, want = x.copy(), x.copy()
    M.gather_add(got, i, v)
    want[i] += v                       # a repeated index takes the last value
    np.testing.assert_array_equal(got, want)
    got, want = x.copy(), x.copy()
    M.gather_mul(got, i[::-1])
    want[i[::-1]] *= 3
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_cov_without_blas(monkeypatch, dtype):
    """np.cov and np.corrcoef of float arrays call the BLAS and fall back
    to loops when the call does nothing (ASC_BLAS=0, no library); the test
    of the call's status was placed after the branch that reads it, so
    the fallback ran or not by an uninitialised flag (main's build: a
    wrong result with ASC_BLAS=0).  Found with np.angle's pattern."""
    monkeypatch.setenv("ASC_BLAS", "0")
    a = (np.arange(12.0).reshape(3, 4) ** 1.5).astype(dtype)
    y = np.cos(np.arange(8.0)).reshape(4, 2).astype(dtype)
    tol = 1e-5 if dtype == "float32" else 1e-12
    np.testing.assert_allclose(M.cov(a), np.cov(a), rtol=tol)
    np.testing.assert_allclose(M.corr(a.T, y), np.corrcoef(a.T, y, rowvar=False),
                               rtol=tol, atol=tol)


def test_numpy_fuzz_matches_numpy(root, tmp_path):
    """A bounded, seeded run of tests/tools/numpy_fuzz.py (every family
    of numpy functions, one module of 100 kernels at -O0): no mismatch,
    crash or internal error."""
    p = subprocess.run([sys.executable, str(root / "tests/tools/numpy_fuzz.py"),
                        "--seed", "32", "--count", "100", "--batch", "100"],
                       capture_output=True, text=True, timeout=600,
                       env={**__import__("os").environ, "ASC_CACHE_DIR": str(tmp_path)})
    out = p.stdout + p.stderr
    assert p.returncode == 0, out
    counts = dict(line.rsplit(None, 1) for line in out.splitlines()
                  if line.startswith("  ") and line.strip().split()[-1].isdigit()
                  and not line.strip()[0].isdigit())
    counts = {k.strip(): int(v) for k, v in counts.items()}
    assert counts["cases"] == 100, out
    assert counts["matched"] >= 90, out
    assert counts["mismatched"] == counts["crashed"] == counts["internal error"] == 0, out
