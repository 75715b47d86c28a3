"""`x[mask]` of a 1-D array from 32,768 elements is counted, then copied,
in chunks split over the team (compiler/lower_mask.c, select_count_par
and select_copy_par; docs/arrays.md, "Boolean masks"); and a statement
that reads one array twice (`np.multiply(z, z, z)` of an array bound in a
loop) no longer checks the array's broadcast against itself, so its loop
is a parallel one (lower_array.c, same_size).  Checked against numpy at
the sizes around each threshold and chunk boundary, on every dtype, with
views and masks that are expressions, against one core bit for bit, and
by the IR notes that say which path each statement took."""
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
def above(x, t):
    return x[x > t]


@asc.kernel
def by(x, m):
    return x[m]


@asc.kernel
def shrink(c0, steps):
    # the escape-time loop of numpy code: each step keeps the points
    # that have not diverged
    z = np.zeros(c0.shape, np.complex128)
    c = c0.copy()
    for i in range(steps):
        np.multiply(z, z, z)
        np.add(z, c, z)
        keep = abs(z) <= 2.0
        z = z[keep]
        c = c[keep]
    return z, c


@asc.kernel
def narrow(x, t):
    # a parameter rebound to selections of itself (a new C-order array)
    for i in range(3):
        x = x[x > t]
        t = t * 1.5
    return x
'''

SIZES = [0, 1, 4095, 32767, 32768, 32769, 40961, 262143, 262144, 262145,
         1_000_003]


@pytest.fixture(scope="module")
def mod():
    return asc.compile(SRC)


@pytest.mark.parametrize("n", SIZES)
def test_threshold_against_numpy(mod, n):
    r = np.random.default_rng(n)
    x = r.random(n)
    for t in (-1.0, 0.0, 0.5, 0.9999, 2.0):
        got = mod.above(x, t)
        want = x[x > t]
        assert got.dtype == want.dtype and got.shape == want.shape
        assert (got == want).all(), (n, t)


@pytest.mark.parametrize("dt", [np.float64, np.float32, np.int64, np.int8,
                                np.bool_, np.complex128])
def test_every_dtype(mod, dt):
    r = np.random.default_rng(1)
    n = 300_001
    x = (r.random(n) * 100).astype(dt) if dt != np.complex128 else \
        r.random(n) + 1j * r.random(n)
    m = r.random(n) < 0.37
    got = mod.by(x, m)
    assert got.dtype == x.dtype
    np.testing.assert_array_equal(got, x[m])


def test_views_and_masks_of_other_arrays(mod):
    r = np.random.default_rng(2)
    base = r.random(900_000)
    x = base[::3]          # strided, 300,000 elements
    m = r.random(600_000)[::2] < 0.5
    np.testing.assert_array_equal(mod.by(x, m), x[m])
    x = base[::-1][:500_000]  # reversed
    m = base[:500_000] > 0.25
    np.testing.assert_array_equal(mod.by(x, m), x[m])
    # every element, and none
    np.testing.assert_array_equal(mod.by(x, np.ones(500_000, bool)), x)
    assert mod.by(x, np.zeros(500_000, bool)).shape == (0,)


def test_mask_of_another_size_raises(mod):
    with pytest.raises(IndexError, match="boolean index did not match"):
        mod.by(np.zeros(40_000), np.zeros(40_001, bool))


def test_escape_time_loop(mod):
    n = 300
    xs, ys = np.meshgrid(np.linspace(-2, 0.5, n), np.linspace(-1.25, 1.25, n))
    c = (xs + 1j * ys).ravel()
    got_z, got_c = mod.shrink(c, 12)
    wz, wc = np.zeros_like(c), c.copy()
    for _ in range(12):
        np.multiply(wz, wz, wz)
        np.add(wz, wc, wz)
        keep = abs(wz) <= 2.0
        wz, wc = wz[keep], wc[keep]
    # the same points kept (complex products may round differently in
    # the last bits: docs/arrays.md, "Complex numbers")
    np.testing.assert_array_equal(got_c, wc)
    np.testing.assert_allclose(got_z, wz, rtol=1e-9, atol=1e-12)


def test_an_array_of_one_element_read_twice(mod):
    got_z, got_c = mod.shrink(np.array([0.1j]), 3)
    wz, wc = np.zeros(1, complex), np.array([0.1j])
    for _ in range(3):
        np.multiply(wz, wz, wz)
        np.add(wz, wc, wz)
        keep = abs(wz) <= 2.0
        wz, wc = wz[keep], wc[keep]
    np.testing.assert_allclose(got_z, wz, rtol=1e-12)


def test_a_parameter_rebound_to_its_selection(mod):
    r = np.random.default_rng(4)
    for n in (10, 100_000):
        x = r.random(n)
        want, t = x, 0.2
        for _ in range(3):
            want = want[want > t]
            t *= 1.5
        np.testing.assert_array_equal(mod.narrow(x, 0.2), want)


def ir(sig):
    path = os.path.join(os.environ.get("TMPDIR", "/tmp"),
                        "asc_select_parallel_%d.py" % os.getpid())
    with open(path, "w") as f:
        f.write(SRC)
    try:
        p = subprocess.run([os.path.join(ROOT, "build", "ascc"), "--emit=ir",
                            "--signature", sig, path],
                           capture_output=True, text=True, timeout=120)
    finally:
        os.unlink(path)
    assert p.returncode == 0, p.stderr
    return p.stdout


def test_ir_notes():
    text = ir("above(f64[1], f64)")
    assert "; boolean selection: counted, then copied, in chunks split " \
           "over the team from 32768 elements" in text
    assert text.count("pfor %sel.c") == 2
    text = ir("shrink(c128[1], i64)")
    # np.multiply(z, z, z) (line 23): a parallel loop, no broadcast check
    # of z against itself
    notes = [x for x in text.splitlines() if "; parallelize" in x and
             " at line 23 " in x]
    assert notes and all("becomes a pfor" in x for x in notes), notes
    assert "mixes" not in text


CHILD = r'''
import sys, numpy as np, asc
m = asc.compile(open(sys.argv[1]).read())
r = np.random.default_rng(7)
x = r.random(1_000_003)
sys.stdout.write(m.above(x, 0.3).tobytes().hex()[:4096])
sys.stdout.write(" %d" % m.above(x, 0.3).size)
'''


def test_one_core_gives_the_same(tmp_path):
    f = tmp_path / "k.py"
    f.write_text(SRC)
    outs = []
    for cores in ("0", None):
        env = dict(os.environ, ASC_CACHE_DIR=str(tmp_path / "c"),
                   PYTHONPATH=os.path.join(ROOT, "bindings", "python"))
        if cores is not None:
            env["ASC_VISIBLE_CORES"] = cores
        p = subprocess.run([sys.executable, "-c", CHILD, str(f)], env=env,
                           capture_output=True, text=True, timeout=300)
        assert p.returncode == 0, p.stderr
        outs.append(p.stdout)
    assert outs[0] == outs[1]
