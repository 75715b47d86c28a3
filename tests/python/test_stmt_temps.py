"""Arrays a statement makes for its operands (a @ b inside a larger
expression, a gather, a reduction along an axis made first) are released
after the statement, not kept until the launch ends: in a loop they were
one new temporary per iteration, each allocation scanning all the
earlier ones (NPBench scattering_self_energies).  Results against numpy,
buffers reused across iterations, and the IR."""
import numpy as np
import pytest

from envvars import ascc_ir

asc = pytest.importorskip("asc")

SRC = '''
import numpy as np
import asc

@asc.kernel
def acc_products(a, b, idx, out):
    for k in range(a.shape[0]):
        for j in range(b.shape[0]):
            d = b[j] * 2.0
            out[idx[k]] += a[k] @ d + 1.0

@asc.kernel
def gathers(x, idx: asc.Tensor[asc.int64, 1], out):
    for k in range(out.shape[0]):
        out[k] = np.sum(x[idx] * k) + np.max(x[idx] + k)

@asc.kernel
def rows_then_more(x, out):
    for k in range(out.shape[0]):
        out[k, :] = x.sum(axis=1) * k
        t = np.zeros(x.shape[0])
        t += x.sum(axis=1)
        out[k, :] += t
'''

NUMPY = {}
exec(SRC.replace("@asc.kernel", ""), NUMPY)


@pytest.fixture(scope="module")
def mod():
    return asc.compile(SRC)


@pytest.mark.parametrize("dt", [np.complex128, np.float64])
def test_small_products_in_loops(mod, dt):
    rng = np.random.default_rng(1)
    a = rng.random((30, 4, 4)).astype(dt)
    b = rng.random((7, 4, 4)).astype(dt)
    if dt == np.complex128:
        a = a + 1j * rng.random((30, 4, 4))
        b = b + 1j * rng.random((7, 4, 4))
    idx = rng.integers(0, 5, 30)
    out = np.zeros((5, 4, 4), dt)
    want = out.copy()
    mod.acc_products(a, b, idx, out)
    NUMPY["acc_products"](a, b, idx, want)
    np.testing.assert_allclose(out, want, rtol=1e-12)


def test_gathers_and_reductions_reused(mod):
    rng = np.random.default_rng(2)
    x = rng.random(1000)
    idx = rng.integers(0, 1000, 300)
    out = np.zeros(50)
    want = out.copy()
    mod.gathers(x, idx, out)
    NUMPY["gathers"](x, idx, want)
    np.testing.assert_allclose(out, want, rtol=1e-12)
    x = rng.random((40, 30))
    out = np.zeros((20, 40))
    want = out.copy()
    mod.rows_then_more(x, out)
    NUMPY["rows_then_more"](x, want)
    np.testing.assert_allclose(out, want, rtol=1e-12)


def test_ir_releases_in_the_loop(tmp_path):
    f = tmp_path / "k.py"
    f.write_text(SRC)
    ir = ascc_ir(f, "acc_products(c128[:,:,:], c128[:,:,:], i64[:], "
                 "c128[:,:,:])")
    lines = ir.splitlines()
    # the product's array is made and released inside the j loop
    new = [k for k, s in enumerate(lines) if "new_array" in s and "@10" in s]
    assert new, ir
    name = lines[new[-1]].split("=")[0].strip().split(":")[0]
    frees = [s for s in lines if s.strip().startswith("free_array " + name)]
    assert frees, ir
