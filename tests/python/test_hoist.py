"""The hoist pass (docs/optimizer.md, "hoist.c"): invariant loads leave
loops whose stores cannot reach them.  Every kernel runs with the pass on
and off (ASC_HOIST=0, read when a kernel compiles, at its first launch) on
random inputs, and the outputs must be the same bytes, and equal to a
reference computed in Python: loads invariant in an inner loop, stores to
the same array that do or do not reach the loaded element, arguments that
overlap (the may_alias specialisation), loops that run zero times with an
index that would read far out of bounds, and bounds-checked kernels."""
import os
import subprocess
import sys
import types
from pathlib import Path

import numpy as np
import pytest

asc = pytest.importorskip("asc")

ROOT = Path(__file__).resolve().parents[2]

SRC = '''
import asc


@asc.kernel
def rows(a, w, n: int):
    s = 0.0
    for i in range(n):
        for j in range(a.shape[1]):
            s += a[i, j] * w[i]
    return s


@asc.kernel
def scale(a, c, sc):
    for i in range(a.shape[0]):
        for j in range(a.shape[1]):
            c[i, j] = a[i, j] * sc[0]


@asc.kernel
def add_row(a, b, c):
    for i in range(a.shape[0]):
        for j in range(a.shape[1]):
            c[i, j] = a[i, j] + b[i]


@asc.kernel
def self_first(a, n: int):
    for j in range(n):
        a[j] = a[0] + 1


@asc.kernel
def next_row(a):
    for i in range(a.shape[0] - 1):
        for j in range(a.shape[1]):
            a[i + 1, j] = a[i, 0] * 0.5 + a[i + 1, j]


@asc.kernel
def far(w, out, k: int, off: int):
    for i in range(out.shape[0]):
        for j in range(k):
            out[i] += w[off]


@asc.kernel
def gather(a, idx, out):
    for j in range(out.shape[0]):
        out[j] = a[idx[0]] + out[j]


@asc.kernel(boundscheck=True)
def checked(a, out, k: int):
    for j in range(out.shape[0]):
        out[j] = a[k] * 2.0


@asc.kernel(boundscheck=True)
def checked_after_store(a, out, k: int):
    for j in range(out.shape[0]):
        out[j] = 1.0
        out[j] = out[j] + a[k]
'''

SWITCH = "ASC_HOIST"


class Switched:
    """The module with ASC_HOIST set while its kernels launch (they compile
    at their first launch)."""

    def __init__(self, value):
        self.value = value
        self.mod = None

    def __enter__(self):
        self.saved = os.environ.get(SWITCH)
        os.environ[SWITCH] = self.value
        self.mod = asc.compile(SRC)
        return self.mod

    def __exit__(self, *exc):
        if self.saved is None:
            os.environ.pop(SWITCH, None)
        else:
            os.environ[SWITCH] = self.saved
        return False


def both(fn):
    """fn(mod) with the pass on and with it off; the two results."""
    out = []
    for v in ("1", "0"):
        with Switched(v) as m:
            out.append(fn(m))
    return out


def same_bytes(x, y):
    x = np.asarray(x)
    y = np.asarray(y)
    assert x.dtype == y.dtype and x.shape == y.shape
    assert np.ascontiguousarray(x).tobytes() == np.ascontiguousarray(y).tobytes()


SHAPES = [(0, 0), (0, 3), (3, 0), (1, 1), (1, 9), (9, 1), (7, 13), (33, 64)]


def rnd(shape, dt=np.float64, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(dt)


@pytest.mark.parametrize("shape", SHAPES)
def test_rows_reduction(shape):
    a = rnd(shape, seed=1)
    w = rnd((shape[0],), seed=2)
    want = 0.0
    for i in range(shape[0]):
        for j in range(shape[1]):
            want += a[i, j] * w[i]
    on, off = both(lambda m: m.rows(a, w, shape[0]))
    same_bytes(np.float64(on), np.float64(off))
    same_bytes(np.float64(on), np.float64(want))


@pytest.mark.parametrize("dt", [np.float32, np.float64])
@pytest.mark.parametrize("shape", SHAPES)
def test_scale_and_add_row(shape, dt):
    a = rnd(shape, dt, 3)
    sc = rnd((1,), dt, 4)
    b = rnd((shape[0],), dt, 5)

    def run(m):
        c = np.full(shape, 7, dt)
        m.scale(a, c, sc)
        d = np.full(shape, 7, dt)
        m.add_row(a, b, d)
        return c, d
    (c1, d1), (c0, d0) = both(run)
    same_bytes(c1, c0)
    same_bytes(d1, d0)
    same_bytes(c1, a * sc[0])
    same_bytes(d1, a + b[:, None])


def test_strided_views():
    big = rnd((40, 60), np.float32, 6)
    views = [big[::2, ::3], big.T[::-1], big[3:30, 5:50], big[:, ::-1]]
    sc = rnd((3,), np.float32, 7)[::2]

    def run(m):
        outs = []
        for a in views:
            c = np.zeros(a.shape, np.float32)
            m.scale(a, c, sc)
            outs.append(c)
        return outs
    on, off = both(run)
    for x, y, a in zip(on, off, views):
        same_bytes(x, y)
        same_bytes(x, a * sc[0])


def test_store_reaches_the_load():
    """a[j] = a[0] + 1: the store at j = 0 changes a[0]; the load stays."""
    def run(m):
        a = rnd((10,), seed=8)
        m.self_first(a, 10)
        return a
    on, off = both(run)
    a = rnd((10,), seed=8)
    for j in range(10):
        a[j] = a[0] + 1
    same_bytes(on, off)
    same_bytes(on, a)


@pytest.mark.parametrize("shape", [(0, 4), (1, 4), (2, 1), (6, 5), (17, 9)])
def test_store_to_other_rows(shape):
    """a[i + 1, j] = a[i, 0] * 0.5 + a[i + 1, j]: row i + 1 is written, row
    i read (hoisted); row i was written by the iteration before."""
    def run(m):
        a = rnd(shape, seed=9)
        m.next_row(a)
        return a
    on, off = both(run)
    a = rnd(shape, seed=9)
    for i in range(shape[0] - 1):
        for j in range(shape[1]):
            a[i + 1, j] = a[i, 0] * 0.5 + a[i + 1, j]
    same_bytes(on, off)
    same_bytes(on, a)


def test_overlapping_arguments():
    """sc is a view of c's memory: the launch compiles the may_alias
    specialisation, where the store to c may write sc[0], which each
    iteration reads again."""
    def run(m):
        outs = []
        for k in (0, 5, 11):
            buf = rnd((4, 3), seed=10).ravel()
            a = rnd((4, 3), seed=11)
            c = buf.reshape(4, 3)
            sc = buf[k:k + 1]
            m.scale(a, c, sc)
            outs.append(buf.copy())
            # the same array twice: c is also a
            d = rnd((4, 3), seed=12)
            m.scale(d, d, d.ravel()[2:3])
            outs.append(d)
        return outs
    on, off = both(run)
    for x, y in zip(on, off):
        same_bytes(x, y)
    for n, k in enumerate((0, 5, 11)):
        buf = rnd((4, 3), seed=10).ravel()
        a = rnd((4, 3), seed=11)
        c = buf.reshape(4, 3)
        for i in range(4):
            for j in range(3):
                c[i, j] = a[i, j] * buf[k]
        same_bytes(on[2 * n], buf)
        d = rnd((4, 3), seed=12)
        dr = d.ravel()
        for i in range(4):
            for j in range(3):
                d[i, j] = d[i, j] * dr[2]
        same_bytes(on[2 * n + 1], d)


def test_zero_trip_loop_reads_nothing():
    """w[off] far past w's end in a loop that runs zero times: the hoisted
    load must not run (it would fault); with k > 0 and a valid off the
    sums are the same."""
    def run(m):
        w = rnd((5,), seed=13)
        out = rnd((6,), seed=14)
        m.far(w, out, 0, 1 << 40)
        empty = np.zeros((0,))
        m.far(empty, out, 0, 1 << 40)
        m.far(empty, out, 0, 0)
        r = out.copy()
        m.far(w, out, 3, 4)
        return r, out
    (z1, o1), (z0, o0) = both(run)
    same_bytes(z1, rnd((6,), seed=14))
    same_bytes(z1, z0)
    same_bytes(o1, o0)
    want = rnd((6,), seed=14)
    w = rnd((5,), seed=13)
    for i in range(6):
        for j in range(3):
            want[i] += w[4]
    same_bytes(o1, want)


def test_zero_rows_zero_columns():
    """Zero-trip inner and outer loops around hoisted loads."""
    def run(m):
        outs = []
        for shape in [(0, 5), (5, 0), (0, 0)]:
            a = rnd(shape, seed=15)
            c = np.full(shape, 3.0)
            m.scale(a, c, np.zeros((1,)))
            outs.append(m.rows(a, np.zeros((shape[0],)), shape[0]))
            outs.append(c)
        return outs
    on, off = both(run)
    for x, y in zip(on, off):
        same_bytes(np.asarray(x), np.asarray(y))


def test_gather_through_a_loaded_index():
    def run(m):
        outs = []
        for i0 in (0, 3, 6):
            a = rnd((7,), np.float32, 16)
            idx = np.array([i0, 1], np.int64)
            out = rnd((9,), np.float32, 17)
            m.gather(a, idx, out)
            outs.append(out)
            empty = np.zeros((0,), np.float32)
            m.gather(a, np.array([1 << 40], np.int64), empty)
        return outs
    on, off = both(run)
    for i0, x, y in zip((0, 3, 6), on, off):
        same_bytes(x, y)
        a = rnd((7,), np.float32, 16)
        same_bytes(x, a[i0] + rnd((9,), np.float32, 17))


def test_bounds_checked():
    """The check raises before the load could run (the invariant check
    leaves the loop with the load, behind the guard); an empty loop raises
    nothing; a store before the check still happens before it raises."""
    msgs = {}
    for v in ("1", "0"):
        with Switched(v) as m:
            a = rnd((4,), seed=18)
            out = np.zeros(3)
            m.checked(a, out, 2)
            same_bytes(out, np.full(3, a[2] * 2.0))
            with pytest.raises(IndexError) as e4:
                m.checked(a, out, 4)
            # far past the end: a load run before the check would fault
            with pytest.raises(IndexError) as ebig:
                m.checked(a, out, 1 << 40)
            m.checked(a, np.zeros(0), 99)
            m.checked(a, np.zeros(0), 1 << 40)
            out = np.full(5, 7.0)
            m.checked_after_store(a, out, 1)
            same_bytes(out, np.full(5, 1.0 + a[1]))
            out = np.full(5, 7.0)
            with pytest.raises(IndexError) as eafter:
                m.checked_after_store(a, out, 1 << 40)
            # Python's order: out[0] = 1.0, then a[k] raises
            same_bytes(out, np.array([1.0, 7.0, 7.0, 7.0, 7.0]))
            msgs[v] = (str(e4.value), str(ebig.value), str(eafter.value))
    assert msgs["1"] == msgs["0"], msgs
    assert "index 1099511627776 is out of bounds for axis 0 with size 4" \
        in msgs["1"][1], msgs


@pytest.mark.parametrize("seed", range(6))
def test_random_nests(seed):
    """Random 2-deep nests: an invariant load of x[i] or x[c] beside a store
    to the same or another array at a random offset."""
    r = np.random.default_rng(100 + seed)
    kernels = []
    for n in range(8):
        row = r.choice(["i", "0", "i + 1", "n - 1"])
        tgt = r.choice(["x", "y"])
        col = r.choice(["j", "0", "j + 1", "i"])
        op = r.choice(["+", "*", "-"])
        kernels.append((f"k{n}", row, tgt, col, op))
    src = "import asc\n"
    for name, row, tgt, col, op in kernels:
        src += f'''

@asc.kernel
def {name}(x, y, k: int):
    n = x.shape[0] - 1
    for i in range(n):
        for j in range(k):
            {tgt}[i, {col}] = {tgt}[i, {col}] {op} x[{row}, 0]
    y[0, 0] = y[0, 0]
'''
    outs = {}
    for v in ("1", "0"):
        saved = os.environ.get(SWITCH)
        os.environ[SWITCH] = v
        try:
            m = asc.compile(src)
            res = []
            for name, *_ in kernels:
                for shape, k in [((5, 6), 4), ((1, 6), 3), ((4, 6), 0),
                                 ((9, 12), 10)]:
                    x = rnd(shape, seed=seed)
                    y = rnd(shape, seed=seed + 50)
                    getattr(m, name)(x, y, k)
                    res.append(np.concatenate([x.ravel(), y.ravel()]))
            outs[v] = res
        finally:
            if saved is None:
                os.environ.pop(SWITCH, None)
            else:
                os.environ[SWITCH] = saved
    # the same loops run by Python on numpy elements
    ns = {"asc": types.SimpleNamespace(kernel=lambda f: f)}
    exec(src.replace("import asc\n", "", 1), ns)
    want = []
    for name, *_ in kernels:
        for shape, k in [((5, 6), 4), ((1, 6), 3), ((4, 6), 0), ((9, 12), 10)]:
            x = rnd(shape, seed=seed)
            y = rnd(shape, seed=seed + 50)
            ns[name](x, y, k)
            want.append(np.concatenate([x.ravel(), y.ravel()]))
    assert len(outs["1"]) == len(outs["0"]) == len(want) == 32
    for a, b, c in zip(outs["1"], outs["0"], want):
        same_bytes(a, b)
        same_bytes(a, c)


def ascc_ir(tmp_path, sig, env=None):
    ascc = ROOT / "build" / "ascc"
    if not ascc.exists():
        pytest.skip("no build/ascc")
    src = tmp_path / "k.py"
    src.write_text(SRC)
    e = dict(os.environ)
    e.pop(SWITCH, None)
    e.update(env or {})
    r = subprocess.run([str(ascc), "--emit=ir", "--signature", sig, str(src)],
                       capture_output=True, text=True, timeout=120, env=e)
    assert r.returncode == 0, r.stderr
    return r.stdout


def line_of(text):
    """SRC's line number of the statement text."""
    for n, line in enumerate(SRC.split("\n"), 1):
        if line.strip() == text:
            return n
    raise AssertionError(text)


@pytest.mark.parametrize("sig,stmt,tensor,verdict", [
    ("rows(f64[:, :], f64[:], i64)", "s += a[i, j] * w[i]", "w", "moved"),
    ("add_row(f32[:, ::1], f32[::1], f32[:, ::1])", "c[i, j] = a[i, j] + b[i]",
     "b", "moved"),
    ("scale(f32[:, :], f32[:, :], f32[:])", "c[i, j] = a[i, j] * sc[0]", "sc",
     "moved"),
    ("next_row(f64[:, :])", "a[i + 1, j] = a[i, 0] * 0.5 + a[i + 1, j]", "a",
     "moved"),
    ("self_first(f64[:], i64)", "a[j] = a[0] + 1", "a", "stays"),
    ("checked(f64[::1], f64[::1], i64)", "out[j] = a[k] * 2.0", "a", "moved"),
    ("checked_after_store(f64[::1], f64[::1], i64)",
     "out[j] = out[j] + a[k]", "a", "stays"),
])
def test_notes_in_ir(tmp_path, sig, stmt, tensor, verdict):
    out = ascc_ir(tmp_path, sig)
    note = f"; hoist: load of %{tensor} at line {line_of(stmt)} "
    note += "moved out of the loop" if verdict == "moved" else "stays in the loop"
    assert note in out, out
    if verdict == "stays":
        assert "moved out of the loop" not in out, out
    off = ascc_ir(tmp_path, sig, {SWITCH: "0"})
    assert "hoist:" not in off and "%runs" not in off, off


CACHE_SCRIPT = '''
import os, sys
import numpy as np
import asc
text = """
import asc

@asc.kernel
def k(a, w, c):
    for i in range(a.shape[0]):
        for j in range(a.shape[1]):
            c[i, j] = a[i, j] * w[i]
"""
a = np.arange(6.0).reshape(2, 3)
w = np.array([2.0, 3.0])
for sw in sys.argv[1:]:
    os.environ["ASC_HOIST"] = sw
    c = np.zeros((2, 3))
    asc.compile(text).k(a, w, c)
    assert (c == a * w[:, None]).all()
'''


def test_switch_is_part_of_the_cache_key(tmp_path):
    """ASC_HOIST=0 and the pass are two cache entries, each hit again."""
    cache = tmp_path / "cache"
    script = tmp_path / "sw.py"
    script.write_text(CACHE_SCRIPT)
    env = dict(os.environ, ASC_CACHE_DIR=str(cache),
               PYTHONPATH=str(ROOT / "bindings" / "python"))
    env.pop(SWITCH, None)

    def entries(*sw):
        subprocess.run([sys.executable, str(script), *sw], check=True,
                       env=env, timeout=300)
        return sorted(cache.rglob("*.so"))
    on = entries("1")
    assert len(on) == 1
    both_ = entries("0")
    assert len(both_) == 2
    assert entries("1", "0") == both_
