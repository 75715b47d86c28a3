"""The wavefront pass (docs/optimizer.md, "wavefront.c"): a time loop around
sweeps over rows runs as chunks of sweeps over blocks of rows, and gives
the same bits as the plain loops (ASC_WAVEFRONT=0, read when a kernel
compiles).  Generated sweeps (random radius, arrays, offsets, per-row
sums, range and prange) are compared on and off; the chunked schedule is
forced onto small arrays with a small cache budget (ASC_CFLAGS
-DASC_WF_BUDGET, which also drops the "fits in cache anyway" shortcut)
and checked to run (-DASC_WF_TRACE prints its plan).  Jacobi and heat are
compared with numpy; rows that overlap in memory take the plain loop."""
import os
import random
import subprocess

import numpy as np
import pytest
from envvars import ascc_ir, env

asc = pytest.importorskip("asc")

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

NESTS = int(os.environ.get("ASC_WAVEFRONT_NESTS", "48"))


def forced(budget):
    return env(ASC_WAVEFRONT="1",
               ASC_CFLAGS=f"-DASC_WF_BUDGET={budget} -DASC_WF_TRACE -include stdio.h")


# ------------------------------------------------------------ generated


def gen_kernel(r, name):
    """A time loop around 2 or 3 sweeps over arrays X0..X2 (n x m): each
    sweep stores one array and reads the others at rows i-R..i+R."""
    na = r.choice([2, 3])
    K = r.choice([2, 3])
    R = r.choice([0, 1, 1, 2, 3])
    lines = [f"@asc.kernel",
             f"def {name}(" + ", ".join(f"X{a}" for a in range(na)) + ", T: int):",
             "    n = X0.shape[0]",
             "    m = X0.shape[1]",
             "    for t in range(T):"]
    written, reads = [], []
    for k in range(K):
        w = r.randrange(na)
        written.append(w)
        srcs = [a for a in range(na) if a != w]
        loop = "asc.prange" if r.random() < 0.3 else "range"
        lines.append(f"        for i in {loop}({R}, n - {R}):")
        terms = []
        for _ in range(r.randint(1, 4)):
            a = r.choice(srcs)
            d = r.randint(-R, R)
            e = r.randint(-1, 1)
            c = r.choice(["0.25", "0.5", "0.125", "1.5", "-0.75"])
            terms.append(f"{c} * X{a}[i + {d}, j + {e}]")
            reads.append((a, d))
        expr = " + ".join(terms)
        if r.random() < 0.3:
            # a running sum along the row: per-row state, legal
            lines += ["            s = 0.0",
                      "            for j in range(1, m - 1):",
                      f"                s = 0.5 * s + {expr}",
                      f"                X{w}[i, j] = s"]
        else:
            lines += ["            for j in range(1, m - 1):",
                      f"                X{w}[i, j] = {expr}"]
    # the pass's radius: the widest row offset into an array a sweep stores
    radius = max([abs(d) for a, d in reads if a in written], default=0)
    return "\n".join(lines) + "\n", na, radius


def test_generated_sweeps_bitwise(capfd):
    r = random.Random(20261205)
    kernels = [gen_kernel(r, f"k{q}") for q in range(NESTS)]
    src = "import asc\n\n" + "\n\n".join(k[0] for k in kernels)
    ran = 0
    for q, (text, na, R) in enumerate(kernels):
        n = r.randint(2 * R + 1, 70)
        m = r.randint(2, 40)
        T = r.randint(0, 6)
        # a budget of 6 to 40 rows of the stored arrays: chunks of 2 to 37
        # sweeps (at radius 1), or the plain order when the rows are few
        budget = 8 * m * len(set(written_of(kernels[q][0]))) * r.randint(6, 40)
        rng = np.random.default_rng(q)
        start = [rng.standard_normal((n, m)) for _ in range(na)]
        outs = {}
        for mode in ("on", "off"):
            xs = [a.copy() for a in start]
            ctx = forced(budget) if mode == "on" else env(ASC_WAVEFRONT="0", ASC_CFLAGS=None)
            with ctx:
                getattr(asc.compile(src), f"k{q}")(*xs, T)
            outs[mode] = xs
        for a, b in zip(outs["on"], outs["off"]):
            assert a.tobytes() == b.tobytes(), f"k{q}: n={n} m={m} T={T} budget={budget}"
        ran += 1
    assert ran == NESTS
    chunked = capfd.readouterr().err.count("asc_wavefront:")
    assert chunked >= NESTS // 2, chunked


def written_of(text):
    import re
    return re.findall(r"(X\d)\[i, j\] =", text)


def test_generated_kernels_are_wavefronts(tmp_path):
    """Every generated kernel is one the pass takes (so the test above
    tests the wavefront, not the plain loop)."""
    r = random.Random(20261205)
    kernels = [gen_kernel(r, f"k{q}") for q in range(NESTS)]
    src = tmp_path / "gen.py"
    src.write_text("import asc\n\n" + "\n\n".join(k[0] for k in kernels))
    for q, (_, na, R) in enumerate(kernels[:12]):
        sig = f"k{q}(" + ", ".join(["f64[:, :]"] * na) + ", i64)"
        out = ascc_ir(src, sig)
        assert f"wavefront {R} @" in out, out


def test_chunked_schedule_runs(capfd):
    """With a small budget the chunked schedule runs (its trace line) and
    gives the plain loop's bits, across several chunks and blocks."""
    n, m, T = 64, 40, 9
    rng = np.random.default_rng(1)
    A0, B0 = rng.random((n, n)), rng.random((n, n))
    with forced(16384):
        A, B = A0.copy(), B0.copy()
        asc.compile(JACOBI).jacobi2d(A, B, T)
    err = capfd.readouterr().err
    assert "asc_wavefront: 18 sweeps of 62 rows in chunks of" in err, err
    Ar, Br = A0.copy(), B0.copy()
    np_jacobi(Ar, Br, T)
    assert A.tobytes() == Ar.tobytes() and B.tobytes() == Br.tobytes()


# ------------------------------------------------------------ stencils

JACOBI = '''
import asc


@asc.kernel
def jacobi2d(A, B, T: int):
    n = A.shape[0]
    for t in range(T):
        for i in range(1, n - 1):
            for j in range(1, n - 1):
                B[i, j] = 0.2 * (A[i, j] + A[i, j - 1] + A[i, j + 1] + A[i + 1, j] + A[i - 1, j])
        for i in range(1, n - 1):
            for j in range(1, n - 1):
                A[i, j] = 0.2 * (B[i, j] + B[i, j - 1] + B[i, j + 1] + B[i + 1, j] + B[i - 1, j])


@asc.kernel
def heat3d(A, B, T: int):
    n = A.shape[0]
    for t in range(T):
        for i in asc.prange(1, n - 1):
            for j in range(1, n - 1):
                for k in range(1, n - 1):
                    B[i, j, k] = (0.125 * (A[i + 1, j, k] - 2.0 * A[i, j, k] + A[i - 1, j, k]) +
                                  0.125 * (A[i, j + 1, k] - 2.0 * A[i, j, k] + A[i, j - 1, k]) +
                                  0.125 * (A[i, j, k + 1] - 2.0 * A[i, j, k] + A[i, j, k - 1]) +
                                  A[i, j, k])
        for i in asc.prange(1, n - 1):
            for j in range(1, n - 1):
                for k in range(1, n - 1):
                    A[i, j, k] = (0.125 * (B[i + 1, j, k] - 2.0 * B[i, j, k] + B[i - 1, j, k]) +
                                  0.125 * (B[i, j + 1, k] - 2.0 * B[i, j, k] + B[i, j - 1, k]) +
                                  0.125 * (B[i, j, k + 1] - 2.0 * B[i, j, k] + B[i, j, k - 1]) +
                                  B[i, j, k])
'''


def np_jacobi(A, B, T):
    for _ in range(T):
        B[1:-1, 1:-1] = 0.2 * ((((A[1:-1, 1:-1] + A[1:-1, :-2]) + A[1:-1, 2:]) +
                                A[2:, 1:-1]) + A[:-2, 1:-1])
        A[1:-1, 1:-1] = 0.2 * ((((B[1:-1, 1:-1] + B[1:-1, :-2]) + B[1:-1, 2:]) +
                                B[2:, 1:-1]) + B[:-2, 1:-1])


def np_heat(A, B, T):
    def sweep(X, Y):
        c = X[1:-1, 1:-1, 1:-1]
        Y[1:-1, 1:-1, 1:-1] = (
            (0.125 * ((X[2:, 1:-1, 1:-1] - 2.0 * c) + X[:-2, 1:-1, 1:-1]) +
             0.125 * ((X[1:-1, 2:, 1:-1] - 2.0 * c) + X[1:-1, :-2, 1:-1])) +
            0.125 * ((X[1:-1, 1:-1, 2:] - 2.0 * c) + X[1:-1, 1:-1, :-2])) + c
    for _ in range(T):
        sweep(A, B)
        sweep(B, A)


@pytest.mark.parametrize("forcing", ["default", "small budget"])
@pytest.mark.parametrize("n,T", [(0, 3), (1, 3), (2, 3), (3, 5), (5, 0), (17, 1), (40, 7), (300, 4)])
def test_jacobi_matches_numpy(forcing, n, T):
    rng = np.random.default_rng(n)
    A0, B0 = rng.random((n, n)), rng.random((n, n))
    A, B = A0.copy(), B0.copy()
    # 12 rows of A and B: chunks of 8 sweeps
    ctx = forced(12 * 16 * max(n, 1)) if forcing != "default" else \
        env(ASC_WAVEFRONT=None, ASC_CFLAGS=None)
    with ctx:
        asc.compile(JACOBI).jacobi2d(A, B, T)
    np_jacobi(A0, B0, T)
    assert A.tobytes() == A0.tobytes() and B.tobytes() == B0.tobytes()


@pytest.mark.parametrize("forcing", ["default", "small budget"])
@pytest.mark.parametrize("n,T", [(3, 2), (9, 3), (24, 5)])
def test_heat_matches_numpy(forcing, n, T):
    rng = np.random.default_rng(n)
    A0, B0 = rng.random((n, n, n)), rng.random((n, n, n))
    A, B = A0.copy(), B0.copy()
    ctx = forced(12 * 16 * n * n) if forcing != "default" else \
        env(ASC_WAVEFRONT=None, ASC_CFLAGS=None)
    with ctx:
        asc.compile(JACOBI).heat3d(A, B, T)
    np_heat(A0, B0, T)
    assert A.tobytes() == A0.tobytes() and B.tobytes() == B0.tobytes()


def test_views_and_overlapping_rows(capfd):
    """Strided views whose rows are apart: the wavefront runs.  Rows that
    share memory (as_strided) take the plain serial loop: the same bits as
    with the pass off."""
    rng = np.random.default_rng(3)
    big_a, big_b = rng.random((120, 90)), rng.random((100, 95))
    outs = []
    for ctx in (forced(40000), env(ASC_WAVEFRONT="0", ASC_CFLAGS=None)):
        ba, bb = big_a.copy(), big_b.copy()
        A, B = ba[::2, ::3], bb[10:70, ::-3][:, :30]
        with ctx:
            asc.compile(JACOBI_RECT).jrect(A, B, 4)
        outs.append((ba, bb))
    assert "asc_wavefront:" in capfd.readouterr().err
    assert outs[0][0].tobytes() == outs[1][0].tobytes()
    assert outs[0][1].tobytes() == outs[1][1].tobytes()

    # rows overlapping: row i + 1 starts 10 elements after row i
    buf0 = rng.random(1000)
    outs = []
    for ctx in (forced(40000), env(ASC_WAVEFRONT="0", ASC_CFLAGS=None)):
        buf = buf0.copy()
        A = np.lib.stride_tricks.as_strided(buf, shape=(40, 20), strides=(80, 8))
        B = np.ones((40, 20))
        with ctx:
            asc.compile(JACOBI_RECT).jrect(A, B, 3)
        outs.append((buf.copy(), B.copy()))
    assert "asc_wavefront:" not in capfd.readouterr().err
    assert outs[0][0].tobytes() == outs[1][0].tobytes()
    assert outs[0][1].tobytes() == outs[1][1].tobytes()


JACOBI_RECT = '''
import asc


@asc.kernel
def jrect(A, B, T: int):
    n = A.shape[0]
    m = A.shape[1]
    for t in range(T):
        for i in range(1, n - 1):
            for j in range(1, m - 1):
                B[i, j] = 0.25 * (A[i - 1, j] + A[i + 1, j] + A[i, j - 1] + A[i, j + 1])
        for i in range(1, n - 1):
            for j in range(1, m - 1):
                A[i, j] = 0.25 * (B[i - 1, j] + B[i + 1, j] + B[i, j - 1] + B[i, j + 1])
'''


# ------------------------------------------------------------ notes


def test_notes_and_switch(tmp_path):
    src = tmp_path / "jac.py"
    src.write_text(JACOBI)
    sig = "jacobi2d(f64[:, ::1], f64[:, ::1], i64)"
    on = ascc_ir(src, sig)
    assert "; wavefront: its 2 loops run as one wavefront over their rows (radius 1)" in on
    assert "wavefront 1 @" in on and on.count(" sweep @") == 2
    off = ascc_ir(src, sig, {"ASC_WAVEFRONT": "0"})
    assert "wavefront" not in off and " sweep @" not in off


WEIGHTED = '''
import asc


@asc.kernel
def weighted(A, B, w, T: int):
    n = A.shape[0]
    for t in range(T):
        for i in range(1, n - 1):
            for j in range(1, n - 1):
                B[i, j] = w[0] * (A[i - 1, j] + A[i + 1, j]) + w[1] * A[i, j]
        for i in range(1, n - 1):
            for j in range(1, n - 1):
                A[i, j] = w[0] * (B[i - 1, j] + B[i + 1, j]) + w[1] * B[i, j]
'''


def test_invariant_loads_stay_in_sweeps(capfd, tmp_path):
    """A load invariant across rows (w[0]) stays inside the sweep (the
    hoist pass leaves sweeps whole), so the loop is still a wavefront and
    the chunked schedule runs; the bits equal both passes off."""
    n, T = 50, 6
    rng = np.random.default_rng(9)
    A0, B0, w = rng.random((n, n)), rng.random((n, n)), np.array([0.3, 0.4])
    outs = []
    for ctx in (forced(16 * n * 12), env(ASC_WAVEFRONT="0", ASC_HOIST="0", ASC_CFLAGS=None)):
        A, B = A0.copy(), B0.copy()
        with ctx:
            asc.compile(WEIGHTED).weighted(A, B, w, T)
        outs.append((A, B))
    assert "asc_wavefront: 12 sweeps" in capfd.readouterr().err
    assert outs[0][0].tobytes() == outs[1][0].tobytes()
    assert outs[0][1].tobytes() == outs[1][1].tobytes()
    src = tmp_path / "w.py"
    src.write_text(WEIGHTED)
    ir = ascc_ir(src, "weighted(f64[:, ::1], f64[:, ::1], f64[::1], i64)")
    assert "wavefront 1 @" in ir and ir.count(" sweep @") == 2


def test_timeout_stops_a_long_wavefront(tmp_path):
    """T = 10**12 steps: the stream's kernel timeout stops the wavefront
    (its rows poll the stop flag) with LaunchTimeoutError; the process goes
    on.  In a child process: the timeout is read when the runtime starts."""
    import sys
    child = tmp_path / "child.py"
    child.write_text(f'''
import sys
sys.path.insert(0, {os.path.join(ROOT, "bindings", "python")!r})
import numpy as np
import asc
m = asc.compile({JACOBI!r})
A = np.random.default_rng(0).random((300, 300))
B = A.copy()
try:
    m.jacobi2d(A, B, 10 ** 12)
    print("returned")
except asc.LaunchTimeoutError as e:
    print("timeout:", e)
m.jacobi2d(A, B, 1)
print("still usable")
''')
    e = dict(os.environ, ASC_KERNEL_TIMEOUT_MS="300", ASC_WAVEFRONT="1",
             ASC_CFLAGS="-DASC_WF_BUDGET=57600")
    r = subprocess.run([sys.executable, str(child)], capture_output=True, text=True,
                       env=e, timeout=120)
    assert r.returncode == 0, r.stderr
    assert "timeout: kernel 'jacobi2d' stopped" in r.stdout, r.stdout
    assert "still usable" in r.stdout
