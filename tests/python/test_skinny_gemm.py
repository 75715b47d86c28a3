"""A product whose result has a few rows, through a large matrix (a batch
of inputs through a layer's weights: NPBench's mlp): asc_krt.gemm streams
the matrix once in its own loop instead of calling the BLAS
(runtime/blas.c, skinny(); docs/arrays.md, "`@`, `np.dot`, `np.matmul`").
Checked against numpy in float64 at the BLAS's accuracy on each dtype, for
sizes that leave remainders in every blocking, a transposed and a strided
left operand, alpha and beta; with the counting stand-in BLAS of
test_syrk, which products take the loop (no gemm call) and which stay on
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
def mm(a, b):
    return a @ b


@asc.kernel
def mm_t(a, b):
    return a.T @ b


@asc.kernel
def every_other(a, b):
    return a[:, ::2] @ b


@asc.kernel
def into(a, b, c):
    c[...] = a @ b


@asc.kernel
def scaled(a, b, c):
    c[...] = 2.0 * (a @ b) + 0.5 * c


@asc.kernel
def layer(x, w, bias):
    return np.maximum(x @ w + bias, 0)
'''

# b of 16 MiB and more (SKINNY_MIN_BYTES), c's columns of 32 bytes at
# most: k and n leave remainders in the eight-row steps, the 256-row
# blocks and the 64-column tiles
F64 = (4, 2051, 1031)
F32 = (8, 4103, 1027)


@pytest.fixture(scope="module")
def mod():
    return asc.compile(SRC)


def ref(a, b):
    return a.astype(np.float64) @ b.astype(np.float64)


def close(got, want, dt):
    # the BLAS's own error: sums of 256 products in order, then added
    rtol = 2e-6 if dt == np.float32 else 1e-13
    scale = np.abs(want).max()
    assert got.dtype == dt
    assert np.abs(got - want).max() <= rtol * scale, np.abs(got - want).max() / scale


@pytest.mark.parametrize("dt", [np.float64, np.float32])
@pytest.mark.parametrize("m", [2, 3, 4, 5, 8, 9])
def test_against_numpy(mod, dt, m):
    r = np.random.default_rng(m)
    _, k, n = F64 if dt == np.float64 else F32
    a = r.standard_normal((m, k)).astype(dt)
    b = r.standard_normal((k, n)).astype(dt)
    close(mod.mm(a, b), ref(a, b), dt)
    close(mod.mm_t(np.ascontiguousarray(a.T), b), ref(a, b), dt)
    a2 = r.standard_normal((m, 2 * k)).astype(dt)
    close(mod.every_other(a2, b), ref(a2[:, ::2], b), dt)


@pytest.mark.parametrize("dt", [np.float64, np.float32])
def test_alpha_beta_and_an_unread_result(mod, dt):
    r = np.random.default_rng(3)
    m, k, n = F64 if dt == np.float64 else F32
    a = r.standard_normal((m, k)).astype(dt)
    b = r.standard_normal((k, n)).astype(dt)
    c = r.standard_normal((m, n)).astype(dt)
    want = 2.0 * ref(a, b) + 0.5 * c
    mod.scaled(a, b, c)
    close(c, want, dt)
    # beta 0: c is written, never read (a NaN there does not leak)
    c = np.full((m, n), np.nan, dt)
    mod.into(a, b, c)
    close(c, ref(a, b), dt)
    # a column block of c: rows strided by the whole row
    wide = np.full((m, n + 40), 7.0, dt)
    mod.into(a, b, wide[:, 20:20 + n])
    close(wide[:, 20:20 + n], ref(a, b), dt)
    assert (wide[:, :20] == 7.0).all() and (wide[:, 20 + n:] == 7.0).all()


def test_a_layer_with_bias_and_relu(mod):
    r = np.random.default_rng(4)
    x = r.random((8, 4100), dtype=np.float32)
    w = r.random((4100, 1100), dtype=np.float32) - 0.5
    bias = r.random(1100, dtype=np.float32)
    want = np.maximum(ref(x, w) + bias, 0)
    got = mod.layer(x, w, bias)
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=2e-4 * np.abs(want).max())


CHILD = r'''
import ctypes, sys
import numpy as np
import asc
shim = ctypes.CDLL(sys.argv[2]) if sys.argv[2] != "-" else None
m = asc.compile(open(sys.argv[1]).read())
r = np.random.default_rng(6)
out = {}
def run(label, f, *args):
    before = ctypes.c_int.in_dll(shim, "gemm_calls").value if shim else 0
    got = f(*args)
    after = ctypes.c_int.in_dll(shim, "gemm_calls").value if shim else 0
    print(label, after - before, got.tobytes().hex()[:64] if shim else got.tobytes().hex())
a = r.standard_normal((4, 2051)); b = r.standard_normal((2051, 1031))
run("skinny", m.mm, a, b)
run("skinny_t", m.mm_t, np.ascontiguousarray(a.T), b)
run("f32", m.mm, r.standard_normal((8, 4103)).astype(np.float32),
    r.standard_normal((4103, 1027)).astype(np.float32))
if shim:
    run("f64_rows5", m.mm, r.standard_normal((5, 2051)), b)
    run("f32_rows9", m.mm, r.standard_normal((9, 4103)).astype(np.float32),
        r.standard_normal((4103, 1027)).astype(np.float32))
    run("small_b", m.mm, r.standard_normal((8, 500)), r.standard_normal((500, 300)))
    run("b_transposed", m.mm, a, np.ascontiguousarray(b.T).T)
'''


def child(tmp_path, shim, cores=None):
    return shim_child(tmp_path, SRC, CHILD, shim, cores)


def test_which_products_take_the_loop(tmp_path):
    c = tmp_path / "shim.c"
    c.write_text(SHIM)
    so = tmp_path / "libshimblas.so"
    subprocess.run(["cc", "-O1", "-shared", "-fPIC", "-o", str(so), str(c)],
                   check=True)
    out = child(tmp_path, so)
    for label in ("skinny", "skinny_t", "f32"):
        assert out[label][0] == "0", out
    # more rows than 32 bytes (SKINNY_ROW_BYTES), a b that stays in the
    # caches, and b's columns contiguous instead of its rows stay on the
    # library
    for label in ("f64_rows5", "f32_rows9", "small_b", "b_transposed"):
        assert int(out[label][0]) >= 1, out


def test_one_core_gives_the_same_bits(tmp_path):
    one = child(tmp_path, "-", cores="0")
    team = child(tmp_path, "-")
    assert one == team
    assert len(one["skinny"][1]) == 2 * 8 * 4 * 1031
