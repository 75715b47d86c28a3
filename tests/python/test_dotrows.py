"""A matrix times a vector (a @ x of a C-order a, x @ b.T): asc_krt.gemm
takes it in its own loop instead of the BLAS's gemv (runtime/blas.c,
dotrows(): four rows share each load of x, each row sums in eight lanes).
Checked against numpy in float64 at the BLAS's accuracy for every count of
rows around the four-row step and lengths around the lanes, alpha and
beta, an unread result, strided results; with the counting stand-in BLAS
of test_syrk, which forms take the loop (no gemv call) and which stay on
the library; and one core against two, equal bit for bit."""
import subprocess

import numpy as np
import pytest

from envvars import shim_child
from test_syrk import SHIM

asc = pytest.importorskip("asc")

SRC = '''
import numpy as np
import asc


@asc.kernel
def mv(a, x):
    return a @ x


@asc.kernel
def vm_t(x, b):
    return x @ b.T


@asc.kernel
def into(a, x, y):
    y[...] = a @ x


@asc.kernel
def scaled(a, x, y):
    y[...] = 2.0 * (a @ x) + 0.5 * y


@asc.kernel
def col_into(a, x, c):
    c[:, 1] = a @ x


@asc.kernel
def mv_t(a, x):
    return a.T @ x
'''


@pytest.fixture(scope="module")
def mod():
    return asc.compile(SRC)


def ref(a, b):
    return a.astype(np.float64) @ b.astype(np.float64)


def close(got, want, dt):
    rtol = 2e-6 if dt == np.float32 else 1e-13
    scale = max(np.abs(want).max(), 1e-300)
    assert got.dtype == dt
    assert np.abs(got - want).max() <= rtol * scale, np.abs(got - want).max() / scale


@pytest.mark.parametrize("dt", [np.float64, np.float32])
def test_against_numpy(mod, dt):
    r = np.random.default_rng(1)
    for m in (1, 2, 3, 4, 5, 7, 8, 9, 131):
        for k in (1, 2, 7, 8, 9, 15, 16, 17, 1000):
            a = r.standard_normal((m, k)).astype(dt)
            x = r.standard_normal(k).astype(dt)
            close(mod.mv(a, x), ref(a, x), dt)
            # x @ b.T: b's rows are the matrix's rows
            close(mod.vm_t(x, a), ref(x, a.T), dt)


@pytest.mark.parametrize("dt", [np.float64, np.float32])
def test_alpha_beta_unread_and_strided(mod, dt):
    r = np.random.default_rng(2)
    a = r.standard_normal((203, 517)).astype(dt)
    x = r.standard_normal(517).astype(dt)
    y = r.standard_normal(203).astype(dt)
    want = 2.0 * ref(a, x) + 0.5 * y
    mod.scaled(a, x, y)
    close(y, want, dt)
    y = np.full(203, np.nan, dt)        # beta 0: never read
    mod.into(a, x, y)
    close(y, ref(a, x), dt)
    c = np.full((203, 3), 7.0, dt)      # a column: stride of 3
    mod.col_into(a, x, c)
    close(c[:, 1], ref(a, x), dt)
    assert (c[:, 0] == 7.0).all() and (c[:, 2] == 7.0).all()
    # rows of a view, a gap between them
    big = r.standard_normal((203, 600)).astype(dt)
    close(mod.mv(big[:, 40:557], x), ref(big[:, 40:557], x), dt)


def test_nan_inf_and_empty(mod):
    a = np.ones((6, 20))
    a[2, 3] = np.nan
    a[4, 19] = np.inf
    got = mod.mv(a, np.ones(20))
    assert np.isnan(got[2]) and got[4] == np.inf and got[0] == 20.0
    assert mod.mv(np.zeros((5, 0)), np.zeros(0)).tolist() == [0.0] * 5
    assert mod.mv(np.zeros((0, 7)), np.zeros(7)).shape == (0,)


CHILD = r'''
import ctypes, sys
import numpy as np
import asc
shim = ctypes.CDLL(sys.argv[2]) if sys.argv[2] != "-" else None
m = asc.compile(open(sys.argv[1]).read())
r = np.random.default_rng(6)
def count():
    return ctypes.c_int.in_dll(shim, "gemv_calls").value if shim else 0
def run(label, f, *args):
    before = count()
    got = f(*args)
    print(label, count() - before, got.tobytes().hex())
a = r.standard_normal((1001, 777))
run("mv", m.mv, a, r.standard_normal(777))
run("vm_t", m.vm_t, r.standard_normal(777), a)
run("f32", m.mv, a.astype(np.float32), r.standard_normal(777).astype(np.float32))
if shim:
    # a's columns contiguous (a.T of a C-order array) stay on the library
    run("mv_t", m.mv_t, a, r.standard_normal(1001))
'''


def child(tmp_path, shim, cores=None):
    return shim_child(tmp_path, SRC, CHILD, shim, cores)


def test_which_forms_take_the_loop(tmp_path):
    c = tmp_path / "shim.c"
    c.write_text(SHIM)
    so = tmp_path / "libshimblas.so"
    subprocess.run(["cc", "-O1", "-shared", "-fPIC", "-o", str(so), str(c)],
                   check=True)
    out = child(tmp_path, so)
    for label in ("mv", "vm_t", "f32"):
        assert out[label][0] == "0", out
    assert int(out["mv_t"][0]) >= 1, out


def test_one_core_gives_the_same_bits(tmp_path):
    one = child(tmp_path, "-", cores="0")
    team = child(tmp_path, "-")
    assert one == team
    assert len(one["mv"][1]) == 2 * 8 * 1001
