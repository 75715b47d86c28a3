"""np.dot(x, y), x @ y of two float vectors, and np.linalg.norm(x) of a
float64 vector: a library call as in numpy (asc_krt.gemm_ab with
m = n = 1, split over the team for long vectors), the reduction's loops
for short ones (docs/arrays.md, "Dot products of vectors").  Checked
against numpy for sizes on both sides of the thresholds, strided and
reversed views, float32, the shape error, and ASC_BLAS=0."""
import os
import subprocess
import sys

import numpy as np
import pytest

from envvars import ROOT, ascc_ir

asc = pytest.importorskip("asc")

SRC = '''
import numpy as np
import asc


@asc.kernel
def dot(x, y):
    return np.dot(x, y)


@asc.kernel
def at(x, y):
    return x @ y


@asc.kernel
def views(a, b, x):
    return np.dot(a[:, 1], x[::2]) + np.dot(b[2], x[::-2]) + x[1:] @ x[:-1]


@asc.kernel
def norm(x):
    return np.linalg.norm(x)


@asc.kernel
def cosine(x, y):
    return np.dot(x, y) / (np.linalg.norm(x) * np.linalg.norm(y))


@asc.kernel
def in_loop(a, out):
    for i in range(a.shape[0]):
        out[i] = np.dot(a[i], a[i]) + np.linalg.norm(a[i])
'''

SIZES = [0, 1, 7, 1023, 1024, 5000, 70_000, 300_001]


@pytest.fixture(scope="module")
def mod():
    return asc.compile(SRC)


@pytest.mark.parametrize("n", SIZES)
def test_float64(mod, n):
    r = np.random.default_rng(n)
    x, y = r.standard_normal(n), r.standard_normal(n)
    want = np.dot(x, y)
    tol = 1e-12 * (np.abs(x) @ np.abs(y) + 1)
    assert abs(mod.dot(x, y) - want) <= tol
    assert abs(mod.at(x, y) - want) <= tol
    assert abs(mod.norm(x) - np.linalg.norm(x)) <= 1e-12 * (np.linalg.norm(x) + 1)
    if n:
        c = mod.cosine(x, y)
        assert abs(c - want / (np.linalg.norm(x) * np.linalg.norm(y))) <= 1e-10


@pytest.mark.parametrize("n", [5, 2000, 100_000])
def test_float32(mod, n):
    r = np.random.default_rng(n)
    x = r.standard_normal(n).astype(np.float32)
    y = r.standard_normal(n).astype(np.float32)
    got = mod.dot(x, y)
    assert type(got) in (float, np.float32)
    assert abs(got - np.dot(x.astype(float), y.astype(float))) <= \
        1e-4 * (np.abs(x) @ np.abs(y) + 1)
    assert abs(mod.norm(x) - np.linalg.norm(x.astype(float))) <= \
        1e-5 * np.linalg.norm(x.astype(float))


def test_views_against_numpy(mod):
    r = np.random.default_rng(11)
    for n in (6, 1500, 150_000):
        a = r.standard_normal((n, 3))      # a[:, 1]: strided by 3
        b = r.standard_normal((3, n))      # b[2]: contiguous
        x = r.standard_normal(2 * n)       # x[::2], x[::-2]: strided, reversed
        want = np.dot(a[:, 1], x[::2]) + np.dot(b[2], x[::-2]) + x[1:] @ x[:-1]
        got = mod.views(a, b, x)
        assert abs(got - want) <= 1e-9 * (1 + np.abs(x).sum()), (n, got, want)


def test_shape_error(mod):
    with pytest.raises(ValueError, match="mismatch|not aligned"):
        mod.dot(np.ones(3000), np.ones(3001))


def test_in_a_loop(mod):
    a = np.random.default_rng(2).standard_normal((50, 4000))
    out = np.empty(50)
    mod.in_loop(a, out)
    want = np.einsum("ij,ij->i", a, a) + np.linalg.norm(a, axis=1)
    np.testing.assert_allclose(out, want, rtol=1e-12)


def test_the_ir_calls_the_library(tmp_path):
    f = tmp_path / "d.py"
    f.write_text(SRC)
    ir = ascc_ir(f, "cosine(f64[1], f64[1])")
    assert ir.count("gemm ") == 3, ir
    assert "blas: the dot product at line" in ir
    ir = ascc_ir(f, "norm(f32[1])")
    assert "gemm " not in ir   # a float32 norm sums in float64, as before


CHILD = """
import numpy as np, asc, sys
m = asc.compile(open(sys.argv[1]).read())
r = np.random.default_rng(3)
x, y = r.standard_normal(100_000), r.standard_normal(100_000)
s = 0.0
for a, b in zip(x.tolist(), y.tolist()):
    s += a * b
print(m.dot(x, y) == s)
"""


def test_asc_blas_0_runs_the_loops_in_order(tmp_path):
    f = tmp_path / "d.py"
    f.write_text(SRC)
    r = subprocess.run([sys.executable, "-c", CHILD, str(f)], capture_output=True,
                       text=True, timeout=600,
                       env=dict(os.environ, ASC_BLAS="0",
                                PYTHONPATH=os.path.join(ROOT, "bindings", "python"),
                                ASC_CACHE_DIR=str(tmp_path / "c")))
    assert r.returncode == 0, r.stderr
    assert r.stdout.split()[-1] == "True", r.stdout
