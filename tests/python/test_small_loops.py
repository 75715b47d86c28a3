"""Small parallel loops (docs/parallelize.md, "Small loops"): a pfor whose
work per iteration C emission can count gets a grain of about
PAR_MIN_WORK operations, so a loop with less work than that runs on the
calling thread without waking the team, and a larger one hands out at
least that much at a time.  The grain changes where iterations run, never
what they compute."""
import os
import re
import subprocess

import numpy as np
import pytest

from envvars import ROOT

asc = pytest.importorskip("asc")

SRC = '''
import numpy as np
import asc

@asc.kernel
def axpb(a, b, out):
    out[:] = a * 2.0 + b

@asc.kernel
def rows(a, out):
    out[:, :] = a * 3.0 - 1.0

@asc.kernel
def isum(a):
    s = 0
    for i in range(a.shape[0]):
        s += a[i] * 3
    return s

@asc.kernel
def fsum(a):
    s = 0.0
    for i in asc.prange(a.shape[0]):
        s += a[i] * 3.0
    return s

@asc.kernel
def nested(a, out):
    for i in range(a.shape[0]):
        for j in range(a.shape[1]):
            t = 0.0
            for k in range(j):
                t += a[i, k]
            out[i, j] = t
'''


def c_of(tmp_path, sig):
    ascc = os.path.join(ROOT, "build", "ascc")
    if not os.path.exists(ascc):
        pytest.skip("no build/ascc")
    f = tmp_path / "k.py"
    f.write_text(SRC)
    out = tmp_path / "k.c"
    r = subprocess.run([ascc, "--emit=c", "--signature", sig, str(f), "-o",
                        str(out)], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    return out.read_text()


def grain_line(c):
    m = re.search(r"const int64_t grain\d+ = (\d+) / \((.*)\) \+ 1;", c)
    assert m, "no grain in the generated C"
    return int(m.group(1)), m.group(2)


def test_elementwise_loop_gets_a_grain_of_work(tmp_path):
    c = c_of(tmp_path, "axpb(f64[:], f64[:], f64[:])")
    work, per = grain_line(c)
    assert work == 131072
    per = int(per)          # a loop-free body: a constant count
    assert 4 <= per <= 40, per
    assert re.search(r"parallel_for\(ctx, env\d+\.n, grain\d+,", c)


def test_row_loop_counts_its_columns(tmp_path):
    c = c_of(tmp_path, "rows(f64[:,::1], f64[:,::1])")
    _, per = grain_line(c)
    assert "asc_trip(" in per, per     # the column loop's trip, at run time


def test_reductions_keep_a_part_per_thread(tmp_path):
    # the parts fix the order float sums combine in: not cut by the grain
    c = c_of(tmp_path, "fsum(f64[:])")
    assert "grain" not in c
    assert re.search(r"env\d+\.nb = ctx->rt->team_size\(ctx\);", c)
    # integer sums give the same result in any order: they take the grain
    # (test_speed31a.py::test_integer_reduction_takes_a_grain)
    c = c_of(tmp_path, "isum(i64[:])")
    assert re.search(r"env\d+\.nb > env\d+\.n / grain\d+", c)


def test_unknown_work_keeps_the_old_grain(tmp_path):
    c = c_of(tmp_path, "nested(f64[:,:], f64[:,:])")
    assert "grain" not in c
    assert re.search(r"parallel_for\(ctx, env\d+\.n, 1,", c)


@pytest.mark.parametrize("n", [0, 1, 63, 64, 65, 1000, 20000, 40001,
                               300007])
def test_results_at_every_size(n):
    m = asc.compile(SRC)
    r = np.random.default_rng(n)
    a, b = r.random(n), r.random(n)
    out = np.empty(n)
    m.axpb(a, b, out)
    assert out.tobytes() == (a * 2.0 + b).tobytes()
    ai = r.integers(-1000, 1000, n)
    assert m.isum(ai) == int(np.sum(ai * 3))
    rows = max(1, n // 700)
    a2 = r.random((rows, n // rows))
    o2 = np.empty_like(a2)
    m.rows(a2, o2)
    assert o2.tobytes() == (a2 * 3.0 - 1.0).tobytes()
