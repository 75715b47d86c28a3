"""`a @ a.T` and `a.T @ a` (a Gram matrix, np.cov's product): numpy
computes one triangle with the BLAS's syrk and copies it to the other,
half the multiply-adds of a gemm, and so does asc_krt.gemm when both
operands are the same elements, one the transpose of the other, and c is
written whole (beta 0).  docs/arrays.md, "`@`, `np.dot`, `np.matmul`".

A stand-in BLAS built here (plain loops, in the CBLAS row-major
convention) counts the calls, so that the tests see which routine ran;
the same products are also checked on the real library against numpy."""
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from envvars import ROOT

asc = pytest.importorskip("asc")

SRC = '''
import numpy as np
import asc


@asc.kernel
def gram(a):
    return a @ a.T


@asc.kernel
def gram_t(a):
    return a.T @ a


@asc.kernel
def scaled(a):
    return 0.5 * a @ a.T


@asc.kernel
def two(a, b):
    return a @ b.T


@asc.kernel
def views(a):
    s = a[::2, 1:]
    return s @ s.T


@asc.kernel
def plus(a, c):
    c[...] = a @ a.T + c


@asc.kernel
def cov(x):
    return np.cov(x)
'''

SHIM = r'''
#include <stdint.h>
enum { ROW = 101, NT = 111, T = 112, LOWER = 122 };
int syrk_calls, gemm_calls, gemv_calls;
#define GEMM(name, ty)                                                       \
void name(int o, int ta, int tb, int m, int n, int k, ty al, const ty *a,   \
          int lda, const ty *b, int ldb, ty be, ty *c, int ldc) {           \
  __atomic_fetch_add(&gemm_calls, 1, __ATOMIC_RELAXED);                     \
  for (int i = 0; i < m; i++)                                               \
    for (int j = 0; j < n; j++) {                                           \
      ty s = 0;                                                             \
      for (int p = 0; p < k; p++)                                           \
        s += (ta == T ? a[p * lda + i] : a[i * lda + p]) *                  \
             (tb == T ? b[j * ldb + p] : b[p * ldb + j]);                   \
      c[i * ldc + j] = al * s + (be != 0 ? be * c[i * ldc + j] : 0);        \
    }                                                                       \
}
GEMM(cblas_sgemm, float)
GEMM(cblas_dgemm, double)
#define GEMV(name, ty)                                                       \
void name(int o, int t, int m, int n, ty al, const ty *a, int lda,          \
          const ty *x, int incx, ty be, ty *y, int incy) {                  \
  __atomic_fetch_add(&gemv_calls, 1, __ATOMIC_RELAXED);                     \
  int rows = t == T ? n : m, cols = t == T ? m : n;                         \
  for (int i = 0; i < rows; i++) {                                          \
    ty s = 0;                                                               \
    for (int p = 0; p < cols; p++)                                          \
      s += (t == T ? a[p * lda + i] : a[i * lda + p]) * x[p * incx];        \
    y[i * incy] = al * s + (be != 0 ? be * y[i * incy] : 0);                \
  }                                                                         \
}
GEMV(cblas_sgemv, float)
GEMV(cblas_dgemv, double)
#define SYRK(name, ty)                                                       \
void name(int o, int up, int t, int n, int k, ty al, const ty *a, int lda,  \
          ty be, ty *c, int ldc) {                                          \
  __atomic_fetch_add(&syrk_calls, 1, __ATOMIC_RELAXED);                     \
  for (int i = 0; i < n; i++)                                               \
    for (int j = 0; j <= i; j++) {                                          \
      ty s = 0;                                                             \
      for (int p = 0; p < k; p++)                                           \
        s += t == T ? a[p * lda + i] * a[p * lda + j]                       \
                    : a[i * lda + p] * a[j * lda + p];                      \
      c[i * ldc + j] = al * s + (be != 0 ? be * c[i * ldc + j] : 0);        \
    }                                                                       \
}
SYRK(cblas_ssyrk, float)
SYRK(cblas_dsyrk, double)
'''

CHILD = r'''
import ctypes, sys
import numpy as np
import asc
shim = ctypes.CDLL(sys.argv[2])
m = asc.compile(open(sys.argv[1]).read())
def calls(name):
    return ctypes.c_int.in_dll(shim, name + "_calls").value
def run(label, f, *args):
    before = calls("syrk"), calls("gemm")
    got = f(*args)
    print(label, calls("syrk") - before[0], calls("gemm") - before[1])
    return got
r = np.random.default_rng(5)
for n, k in ((3, 4), (200, 150), (700, 90)):
    a = r.standard_normal((n, k))
    g = run("gram%d" % n, m.gram, a)
    np.testing.assert_allclose(g, a @ a.T, rtol=1e-12, atol=1e-12)
    assert (g == g.T).all()
    g = run("gram_t%d" % n, m.gram_t, a.T.copy())
    np.testing.assert_allclose(g, a @ a.T, rtol=1e-12, atol=1e-12)
    assert (g == g.T).all()
a = r.standard_normal((300, 80)).astype(np.float32)
g = run("f32", m.gram, a)
np.testing.assert_allclose(g, a.astype(float) @ a.T.astype(float), rtol=1e-4, atol=1e-3)
a = r.standard_normal((300, 81))
np.testing.assert_allclose(run("scaled", m.scaled, a), 0.5 * a @ a.T, rtol=1e-12, atol=1e-12)
np.testing.assert_allclose(run("views", m.views, a), a[::2, 1:] @ a[::2, 1:].T, rtol=1e-12, atol=1e-12)
np.testing.assert_allclose(run("two", m.two, a, a.copy()), a @ a.T, rtol=1e-12, atol=1e-12)
c = r.standard_normal((300, 300)); want = a @ a.T + c
run("plus", m.plus, a, c)
np.testing.assert_allclose(c, want, rtol=1e-12, atol=1e-12)
x = r.standard_normal((400, 500))
np.testing.assert_allclose(run("cov", m.cov, x), np.cov(x), rtol=1e-10, atol=1e-12)
print("matched")
'''


@pytest.fixture(scope="module")
def shim(tmp_path_factory):
    d = tmp_path_factory.mktemp("shim")
    c = d / "shim.c"
    c.write_text(SHIM)
    so = d / "libshimblas.so"
    subprocess.run(["cc", "-O1", "-shared", "-fPIC", "-o", str(so), str(c)],
                   check=True)
    return so


@pytest.fixture(scope="module")
def counts(shim, tmp_path_factory):
    d = tmp_path_factory.mktemp("run")
    f = d / "k.py"
    f.write_text(SRC)
    env = dict(os.environ, ASC_BLAS_LIB=str(shim), ASC_CACHE_DIR=str(d / "c"),
               PYTHONPATH=os.path.join(ROOT, "bindings", "python"))
    env.pop("ASC_BLAS", None)
    r = subprocess.run([sys.executable, "-c", CHILD, str(f), str(shim)],
                       env=env, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr + r.stdout
    assert "matched" in r.stdout, r.stdout
    out = {}
    for line in r.stdout.splitlines():
        w = line.split()
        if len(w) == 3:
            out[w[0]] = (int(w[1]), int(w[2]))
    return out


@pytest.mark.parametrize("label", ["gram3", "gram200", "gram700", "gram_t3",
                                   "gram_t200", "gram_t700", "f32", "scaled",
                                   "views", "cov"])
def test_a_times_its_transpose_is_a_syrk(counts, label):
    syrk, gemm = counts[label]
    # one syrk per slab of rows; a gemm only for the blocks left of the
    # diagonal blocks of the second slab on
    assert syrk >= 1, counts
    assert gemm <= syrk - 1, counts


@pytest.mark.parametrize("label", ["two", "plus"])
def test_other_products_stay_a_gemm(counts, label):
    syrk, gemm = counts[label]
    assert syrk == 0 and gemm >= 1, counts


def test_the_library_syrk_against_numpy():
    m = asc.compile(SRC)
    r = np.random.default_rng(9)
    for n, k in ((1, 5), (2, 3), (64, 64), (1000, 300)):
        a = r.standard_normal((n, k))
        g = m.gram(a)
        np.testing.assert_allclose(g, a @ a.T, rtol=1e-12, atol=1e-10)
        assert (g == g.T).all()
        np.testing.assert_allclose(m.gram_t(a), a.T @ a, rtol=1e-12, atol=1e-10)
    x = r.standard_normal((1400, 1800))
    np.testing.assert_allclose(m.cov(x), np.cov(x), rtol=1e-10, atol=1e-13)
    a = r.standard_normal((0, 4))
    assert m.gram(a).shape == (0, 0)
    assert (m.gram_t(a) == 0).all() and m.gram_t(a).shape == (4, 4)


def test_cov_runs_its_passes_in_parallel(tmp_path):
    from envvars import ascc_ir
    f = tmp_path / "k.py"
    f.write_text(SRC)
    ir = ascc_ir(f, "cov(f64[2])")
    # the copy, the centring and the scaling each become a pfor
    assert ir.count("pfor ") >= 3, ir
    assert "mixes" not in ir, ir
