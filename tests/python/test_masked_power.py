"""A masked store of a power, `x[m] = x[m] ** -1.5` (NPBench nbody's
inverse cubes): the value is computed at every element before the mask's
test (lower_mask.c), and vmchunk computes the powers ahead, a chunk at a
time, in a loop that vectorises, reading the element each iteration
stores (docs/optimizer.md, "vmchunk.c").  Checked: the stored elements
against numpy, the others untouched bit for bit (where the power is an
infinity or a NaN), float32, views, arithmetic around the power, an
update (op=), and loops whose stores an earlier read must see, which
stay as written."""
import math

import numpy as np
import pytest

import asc

TEXT = """
import numpy as np
import asc

@asc.kernel
def inv_cube(r):
    r[r > 0] = r[r > 0] ** (-1.5)

@asc.kernel
def mixed(x, y, z):
    x[y != 0] = x[y != 0] ** 1.5 / y[y != 0] - z[y != 0]

@asc.kernel
def update(x, m):
    x[m] += x[m] ** 0.5

@asc.kernel
def shifted(a, out):
    for i in range(a.shape[0] - 1):
        v = a[i] ** 1.5
        if v > 1.0:
            a[i + 1] = v * 0.5
        out[i] = a[i]
"""


@pytest.fixture(scope="module")
def mod():
    return asc.compile(TEXT)


def ref_inv_cube(r):
    r = r.copy()
    r[r > 0] = r[r > 0] ** (-1.5)
    return r


@pytest.mark.parametrize("dt", [np.float32, np.float64])
@pytest.mark.parametrize("shape", [(7,), (50, 50), (3, 1000), (600, 3)])
def test_inv_cube(mod, dt, shape):
    rng = np.random.default_rng(sum(shape))
    r = rng.standard_normal(shape).astype(dt)
    r.flat[::7] = 0.0           # pow(0, -1.5) is inf: left alone
    r.flat[::11] = -0.0
    want = ref_inv_cube(r)
    got = r.copy()
    mod.inv_cube(got)
    keep = ~(r > 0)
    assert np.array_equal(got[keep].view(np.uint8), r[keep].view(np.uint8))
    np.testing.assert_allclose(got[~keep], want[~keep], rtol=4e-7 if dt == np.float32 else 1e-15)


def test_views(mod):
    rng = np.random.default_rng(1)
    big = rng.standard_normal((300, 400))
    for v in (big[::2, 1::3], big.T, big[5:200, ::-1]):
        want = ref_inv_cube(v)
        got = v.copy()
        mod.inv_cube(got)
        np.testing.assert_allclose(got, want, rtol=1e-15)


def test_division_by_zero_where_the_mask_is_false(mod):
    rng = np.random.default_rng(2)
    x = np.abs(rng.standard_normal(2000))
    y = rng.standard_normal(2000)
    y[::3] = 0.0
    z = rng.standard_normal(2000)
    want = x.copy()
    m = y != 0
    want[m] = x[m] ** 1.5 / y[m] - z[m]
    got = x.copy()
    mod.mixed(got, y, z)
    # a power within an ulp of numpy's, then a difference
    np.testing.assert_allclose(got, want, rtol=1e-13, atol=1e-14)
    assert np.array_equal(got[~m], x[~m])


def test_update(mod):
    rng = np.random.default_rng(3)
    x = rng.standard_normal(3000)
    m = x > 0
    want = x.copy()
    want[m] += x[m] ** 0.5
    got = x.copy()
    mod.update(got, m)
    np.testing.assert_allclose(got, want, rtol=1e-15)
    assert np.array_equal(got[~m], x[~m])


def test_a_store_the_next_read_sees(mod):
    # a[i + 1] is stored from a[i]'s power: computing the powers ahead
    # would read the old a[i + 1]
    a0 = np.linspace(1.2, 3.0, 700)
    a, out = a0.copy(), np.zeros(700)
    mod.shifted(a, out)
    b, want = a0.copy(), np.zeros(700)
    for i in range(699):
        v = b[i] ** 1.5
        if v > 1.0:
            b[i + 1] = v * 0.5
        want[i] = b[i]
    np.testing.assert_allclose(out, want, rtol=1e-15)
    np.testing.assert_allclose(a, b, rtol=1e-15)


def test_the_ir_notes(tmp_path):
    from envvars import ascc_ir
    f = tmp_path / "k.py"
    f.write_text(TEXT)
    ir = ascc_ir(f, "inv_cube(f64[2])")
    assert "the value computed at every element, stored where the mask is true" in ir
    assert "computed ahead, 256 iterations at a time" in ir
    assert "a branch reads the value" in ir
    ir = ascc_ir(f, "shifted(f64[1], f64[1])")
    assert "a branch reads the value" not in ir
