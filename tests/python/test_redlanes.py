"""The redlanes pass (docs/optimizer.md): a float `m = max(m, v)` or
`min` over a loop runs in vector lanes, folded together after the loop,
and a zero result is scanned again for its sign.  The result must be the
bits of the loop as written: compared with ASC_REDLANES=0 and with the
same fold in Python, on data full of NaNs, infinities and zeros of both
signs, at every position around the lane count."""
import functools
import os
import subprocess

import numpy as np
import pytest
from envvars import compile_on_off, env

asc = pytest.importorskip("asc")

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

SRC = '''
import asc


@asc.kernel
def rowmax(x, out):
    for r in asc.prange(x.shape[0]):
        m = x[r, 0]
        for j in range(1, x.shape[1]):
            m = max(m, x[r, j])
        out[r] = m


@asc.kernel
def scaled_min(x, c, out):
    m = x[0] * c
    for j in range(x.shape[0]):
        m = min(m, x[j] * c)
    out[0] = m
'''


@pytest.fixture(scope="module")
def mods():
    return compile_on_off(asc, SRC, "ASC_REDLANES")


def py_max(row):
    # Python's max(m, v): v only when v > m
    return functools.reduce(lambda m, v: v if v > m else m, row[1:], row[0])


def py_min(vals, m):
    return functools.reduce(lambda m, v: v if v < m else m, vals, m)


def rows(dt, cols, seed):
    """Rows that probe each rule: plain, NaN first, NaNs inside, all
    negative with zeros of both signs (a zero max), +-inf, constant."""
    r = np.random.default_rng(seed)
    out = []
    for kind in range(10):
        x = r.standard_normal(cols).astype(dt)
        if kind == 1:
            x[0] = np.nan
        elif kind == 2:
            x[r.integers(0, cols, 3)] = np.nan
        elif kind in (3, 4, 5):
            x = -np.abs(x) - 1
            k = r.integers(0, cols, 4)
            x[k[0]], x[k[1]] = 0.0, -0.0
            if kind == 4:
                x[k[2]], x[k[3]] = -0.0, 0.0
            if kind == 5:
                x[0] = -0.0
        elif kind == 6:
            x[r.integers(0, cols)] = np.inf
        elif kind == 7:
            x[:] = -np.inf
        elif kind == 8:
            x[:] = dt(3.5)
        elif kind == 9:
            x = np.where(r.random(cols) < 0.5, dt(0.0), dt(-0.0)).astype(dt)
        out.append(x)
    return np.array(out)


@pytest.mark.parametrize("dt", [np.float32, np.float64])
@pytest.mark.parametrize("cols", [1, 2, 31, 32, 33, 63, 64, 65, 200, 257, 1000])
def test_rowmax_bits(mods, dt, cols):
    on, off = mods
    x = rows(dt, cols, cols)
    a, b = np.zeros(len(x), dt), np.zeros(len(x), dt)
    with env(ASC_REDLANES=None):
        on.rowmax(x, a)
    with env(ASC_REDLANES="0"):
        off.rowmax(x, b)
    assert a.tobytes() == b.tobytes()
    want = np.array([py_max(list(row)) for row in x], dt)
    assert a.tobytes() == want.tobytes()


@pytest.mark.parametrize("dt", [np.float32, np.float64])
@pytest.mark.parametrize("n", [1, 40, 128, 129, 999])
@pytest.mark.parametrize("c", [1.0, -1.0, 0.0])
def test_min_bits(mods, dt, n, c):
    on, off = mods
    for x in rows(dt, n, n + 7):
        a, b = np.zeros(1, dt), np.zeros(1, dt)
        with env(ASC_REDLANES=None):
            on.scaled_min(x, c, a)
        with env(ASC_REDLANES="0"):
            off.scaled_min(x, c, b)
        assert a.tobytes() == b.tobytes()
        with np.errstate(invalid="ignore"):
            vals = [dt(v * dt(c)) for v in x]
        assert a[0].tobytes() == dt(py_min(vals, vals[0])).tobytes() or \
            (np.isnan(a[0]) and np.isnan(py_min(vals, vals[0])))


def test_note_and_switch(tmp_path):
    ascc = os.path.join(ROOT, "build", "ascc")
    if not os.path.exists(ascc):
        pytest.skip("no build/ascc")
    src = tmp_path / "k.py"
    src.write_text(SRC)

    def ir(extra):
        r = subprocess.run([ascc, "--emit=ir", "--signature", "rowmax(f32[:, ::1], f32[::1])",
                            str(src)], capture_output=True, text=True,
                           env=dict(os.environ, **extra), timeout=120)
        assert r.returncode == 0, r.stderr
        return r.stdout

    on = ir({})
    assert "; redlanes: max of %m (line 10) in 64 vector lanes" in on
    assert "local_array [64]" in on
    off = ir({"ASC_REDLANES": "0"})
    assert "redlanes" not in off and "local_array" not in off
    # under fastmath (nnan, nsz) the C compiler vectorises the max itself
    r = subprocess.run([ascc, "--emit=ir", "--fastmath", "--signature",
                        "rowmax(f32[:, ::1], f32[::1])", str(src)],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert "fastmath(" in r.stdout and "redlanes" not in r.stdout


def gen_kernels(seed, count):
    """Random max / min reductions: the accumulator's start, the value
    folded (arithmetic on two inputs, which may make NaNs and zeros of
    either sign), the bounds and the operand order vary."""
    import random
    r = random.Random(seed)
    lines = ["import asc", ""]
    for k in range(count):
        op = r.choice(["max", "min"])
        start = r.choice(["x[0]", "y[lo]", "0.0", "-0.0", "x[1] * 0.0"])
        a, b = r.choice(["x[j]", "y[j]", "x[j + 1]"]), r.choice(["x[j]", "y[j]", "1.5"])
        val = r.choice([f"{a}", f"{a} - {b}", f"{a} * {b}", f"-{a}", f"{a} * 0.0"])
        lo = r.choice(["0", "1", "lo"])
        hi = r.choice(["n", "n - 1", "hi"])
        order = f"{op}(m, {val})" if r.random() < 0.85 else f"{op}({val}, m)"
        lines += ["@asc.kernel",
                  f"def k{k}(x, y, out, lo: int, hi: int):",
                  "    n = x.shape[0] - 1",
                  f"    m = {start}",
                  f"    for j in range({lo}, {hi}):",
                  f"        m = {order}",
                  "    out[0] = m",
                  "    out[1] = y[0]", ""]
    return "\n".join(lines)


def data(dt, n, seed):
    r = np.random.default_rng(seed)
    x = r.standard_normal(n).astype(dt)
    kind = seed % 4
    if kind == 1:
        x[r.integers(0, n, 5)] = np.nan
    elif kind == 2:
        x = -np.abs(x)
        x[r.integers(0, n, 6)] = 0.0
        x[r.integers(0, n, 6)] = -0.0
    elif kind == 3:
        x = np.where(r.random(n) < 0.5, dt(0.0), dt(-0.0)).astype(dt)
    return x


@pytest.mark.parametrize("dt", [np.float32, np.float64])
def test_random_reductions(dt):
    count = 24
    text = gen_kernels(11 if dt is np.float32 else 12, count)
    on, off = compile_on_off(asc, text, "ASC_REDLANES")
    checked = 0
    for k in range(count):
        for n, lo, hi in ((1000, 3, 900), (300, 0, 299), (70, 2, 60), (2049, 5, 2040)):
            for s in range(4):
                x, y = data(dt, n, s + 10 * k), data(dt, n, s + 10 * k + 5)
                a, b = np.zeros(2, dt), np.zeros(2, dt)
                with env(ASC_REDLANES=None):
                    getattr(on, f"k{k}")(x, y, a, lo, hi)
                with env(ASC_REDLANES="0"):
                    getattr(off, f"k{k}")(x, y, b, lo, hi)
                assert a.tobytes() == b.tobytes(), (k, n, s)
                checked += 1
    assert checked == count * 16
