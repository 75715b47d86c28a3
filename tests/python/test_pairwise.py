"""Float sums in numpy's pairwise order (docs/arrays.md, "The order of a
float sum"): np.sum, np.mean, np.var and np.std of a 1-D operand, along
the last axis, and of a boolean selection add in numpy's order, so they
are bit for bit numpy's where numpy sums the same elements in one inner
loop; a long sum split over the team gives the same bits on any number
of threads; ASC_PAIRWISE=0 is the C order; fastmath `reassoc` keeps its
reordered C-order loop."""
import os
import subprocess
import sys

import numpy as np
import pytest

from envvars import ROOT, ascc_ir, env

asc = pytest.importorskip("asc")

SRC = '''
import numpy as np
import asc

@asc.kernel
def total(x):
    return np.sum(x)

@asc.kernel
def average(x):
    return np.mean(x)

@asc.kernel
def spread(x):
    return np.var(x), np.std(x), np.var(x, ddof=1)

@asc.kernel
def rosen(x):
    return np.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)

@asc.kernel
def rows(a):
    return np.sum(a, axis=-1)

@asc.kernel
def row_means(a):
    return a - np.mean(a, axis=1, keepdims=True)

@asc.kernel
def total2(a):
    return np.sum(a), np.mean(a * 2.0)

@asc.kernel
def tail_axes(a):
    return (np.sum(a, axis=(1, 2)), np.var(a, axis=(1, 2)),
            np.mean(a, axis=(-1, 1)))

@asc.kernel
def positive(x):
    return np.sum(x[x > 0.0])

@asc.kernel
def positive_mean(x, m: asc.Tensor[asc.bool_, 2]):
    s = x[m]
    return s.mean()

@asc.kernel
def in_loop(x, k):
    t = 0.0
    for i in range(k):
        t += np.sum(x * (i + 1.0))
    return t

@asc.kernel(fastmath=True)
def loose(x):
    return np.sum(x)
'''

SIZES = [0, 1, 7, 8, 9, 15, 16, 17, 127, 128, 129, 130, 255, 256, 257, 1000,
         4097, 32767, 32768, 32769, 100003, (1 << 20) + 5]


@pytest.fixture(scope="module")
def mod():
    with env(ASC_PAIRWISE=None, ASC_FUSE_SELECT=None):
        return asc.compile(SRC)


def bits(v):
    return np.asarray(v, dtype=np.float64).tobytes()


def data(n, seed=0):
    r = np.random.default_rng(seed + n)
    # magnitudes over ten decades: a wrong order changes the last bits
    return r.standard_normal(n) * 10.0 ** r.integers(-5, 5, n)


@pytest.mark.parametrize("n", SIZES)
def test_sum_and_mean_are_numpys(mod, n):
    x = data(n)
    assert bits(mod.total(x)) == bits(np.sum(x)), n
    if n:
        assert bits(mod.average(x)) == bits(np.mean(x)), n


@pytest.mark.parametrize("n", [2, 100, 129, 5000, 70001])
def test_var_and_std_are_numpys(mod, n):
    x = data(n, 1)
    v, s, v1 = mod.spread(x)
    assert bits(v) == bits(np.var(x))
    assert bits(s) == bits(np.std(x))
    assert bits(v1) == bits(np.var(x, ddof=1))


@pytest.mark.parametrize("n", [3, 200, 40000, 1 << 20])
def test_an_expression_is_summed_as_numpys_temporary(mod, n):
    x = data(n, 2)
    want = np.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)
    assert bits(mod.rosen(x)) == bits(want)


def test_strided_and_float32(mod):
    x = data(200001, 3)
    # a strided 1-D array: numpy's inner loop runs over all of it
    assert bits(mod.total(x[::3])) == bits(np.sum(x[::3]))
    # float32 adds in float64 (docs/arrays.md): numpy's order over the
    # float64 values, rounded once
    f = x.astype(np.float32)
    got = mod.total(f)
    assert np.asarray(got).dtype == np.float32
    assert bits(got) == bits(np.float32(np.sum(f.astype(np.float64))))


@pytest.mark.parametrize("shape", [(3, 5), (4, 129), (7, 1000), (2, 40000)])
def test_rows_are_numpys(mod, shape):
    a = data(shape[0] * shape[1], 4).reshape(shape)
    assert np.asarray(mod.rows(a)).tobytes() == np.sum(a, axis=-1).tobytes()
    got = mod.row_means(a)
    assert got.tobytes() == (a - np.mean(a, axis=1, keepdims=True)).tobytes()


@pytest.mark.parametrize("shape", [(3, 5), (17, 31), (300, 301), (2, 70000)])
def test_all_elements_of_a_matrix_are_numpys(mod, shape):
    # numpy sums a contiguous array's elements as one inner loop
    a = data(shape[0] * shape[1], 12).reshape(shape)
    s, m = mod.total2(a)
    assert bits(s) == bits(np.sum(a))
    assert bits(m) == bits(np.mean(a * 2.0))


@pytest.mark.parametrize("shape", [(4, 5, 6), (3, 20, 33), (2, 9, 3000)])
def test_trailing_axes_are_numpys(mod, shape):
    a = data(shape[0] * shape[1] * shape[2], 13).reshape(shape)
    s, v, m = mod.tail_axes(a)
    assert s.tobytes() == np.sum(a, axis=(1, 2)).tobytes()
    assert v.tobytes() == np.var(a, axis=(1, 2)).tobytes()
    # one division of the whole sum, as numpy (not a mean of means)
    assert m.tobytes() == np.mean(a, axis=(-1, 1)).tobytes()


def test_special_values(mod):
    assert bits(mod.total(np.array([-0.0]))) == bits(0.0)
    assert bits(mod.total(np.zeros(300) * -1.0)) == bits(np.sum(np.zeros(300) * -1.0))
    x = data(5000, 5)
    x[4321] = np.inf
    assert mod.total(x) == np.inf
    x[17] = -np.inf
    assert np.isnan(mod.total(x))
    y = data(40000, 6)
    y[39999] = np.nan
    assert np.isnan(mod.total(y))


@pytest.mark.parametrize("n", [10, 300, 50000])
def test_selection_is_numpys_fused_or_made(n):
    x = data(n, 7)
    m = (data(n * 2, 8) > 0).reshape(2, n)
    got = {}
    for fuse in (None, "0"):
        with env(ASC_FUSE_SELECT=fuse, ASC_PAIRWISE=None):
            k = asc.compile(SRC)
            got[fuse] = (k.positive(x), k.positive_mean(np.stack([x, -x]), m))
    want = (np.sum(x[x > 0.0]), np.stack([x, -x])[m].mean())
    for fuse in got:
        assert bits(got[fuse][0]) == bits(want[0]), fuse
        assert bits(got[fuse][1]) == bits(want[1]), fuse


def test_in_a_loop(mod):
    x = data(50000, 9)
    want = 0.0
    for i in range(3):
        want += np.sum(x * (i + 1.0))
    assert bits(mod.in_loop(x, 3)) == bits(want)


def test_c_order_switch():
    x = data(70001, 10)
    with env(ASC_PAIRWISE="0"):
        k = asc.compile(SRC)
        got = k.total(x)
    s = 0.0
    for v in x.tolist():
        s += v
    assert bits(got) == bits(s)
    assert bits(got) != bits(np.sum(x))  # the orders differ for this x


def test_same_bits_on_one_thread(tmp_path):
    """The split over the team never changes the sum."""
    path = tmp_path / "k.py"
    path.write_text(SRC)
    code = ("import numpy as np, asc\n"
            "k = asc.compile(open(%r).read())\n"
            "r = np.random.default_rng(11)\n"
            "x = r.standard_normal(3000017) * 10.0 ** r.integers(-5, 5, 3000017)\n"
            "print(np.asarray(k.total(x)).tobytes().hex(), "
            "np.sum(x).tobytes().hex(), asc.device_properties(0).cores)\n"
            ) % str(path)
    outs = []
    for cores in (None, "0"):
        e = dict(os.environ)
        e["PYTHONPATH"] = os.path.join(ROOT, "bindings", "python")
        e.pop("ASC_VISIBLE_CORES", None)
        if cores is not None:
            e["ASC_VISIBLE_CORES"] = cores
        r = subprocess.run([sys.executable, "-c", code], capture_output=True,
                           text=True, env=e, timeout=300)
        assert r.returncode == 0, r.stderr
        outs.append(r.stdout.split())
    assert outs[1][2] == "1", outs  # a team of one thread
    assert outs[0][:2] == outs[1][:2], outs
    assert outs[0][0] == outs[0][1], outs  # numpy's bits


def test_ir(tmp_path):
    f = tmp_path / "k.py"
    f.write_text(SRC)
    ir = ascc_ir(f, "total(f64[:])")
    assert "pairwise sum: split over the team at depth 6" in ir, ir
    assert "%pw.stk_s" in ir
    # inside a loop: one thread (the loop may run in parallel)
    ir = ascc_ir(f, "in_loop(f64[:], i64)")
    assert "%pw.stk_s" in ir and "split over the team" not in ir, ir
    # fastmath reassoc: the C-order loop, reordered by the compiler
    ir = ascc_ir(f, "loose(f64[:])")
    assert "%pw." not in ir, ir
    ir = ascc_ir(f, "total(f64[:])", {"ASC_PAIRWISE": "0"})
    assert "%pw." not in ir, ir
