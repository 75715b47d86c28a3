"""Row softmax with vector math (docs/vecmath.md), in one run: libasc in
the default mode (SLEEF's 1-ulp exp, vectorised; the max and the sum keep
Python's order), the same text with ASC_VECMATH=libm (scalar libm exp),
libasc with fastmath=True (libmvec's exp, reductions over vector lanes),
numpy, numba parallel (bench/py_loops.py's softmax, as bench/suite.py
runs it) and C -O3 -march=native -ffast-math with OpenMP (bench/ref/
loops.c's ref_softmax, compiled here).  Medians of --reps timings taken
in turns (rotated), so a noisy neighbour slows all alike; ratios within
the run.

    python3 bench/softmax_vecmath.py [--rows 4096] [--cols 1024] [--reps 15]

Run it after scripts/build-python.sh (bench/run.sh does that).
"""
import argparse
import ctypes
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "bindings", "python"))
sys.path.insert(0, HERE)

# The max/exp/sum/divide loops of one row, as a numpy user writes them in
# a loop language, with asc.exp in a loop of its own, which vectorises as
# written.  (bench/suite.py's softmax is the numba user's text, math.exp
# and the sum in one loop: the vmchunk pass computes its exps ahead in
# chunks, docs/optimizer.md.)
SRC = '''
import asc

@asc.kernel{deco}
def softmax_{tag}(x, out):
    rows, cols = x.shape
    for r in asc.prange(rows):
        m = x[r, 0]
        for j in range(1, cols):
            m = max(m, x[r, j])
        for j in range(cols):
            out[r, j] = asc.exp(x[r, j] - m)
        s = asc.float32(0.0)
        for j in range(cols):
            s += out[r, j]
        for j in range(cols):
            out[r, j] = out[r, j] / s
'''


def kernel(tag, deco, tmp):
    import asc
    path = os.path.join(tmp, f"softmax_{tag}.py")
    with open(path, "w") as f:
        f.write(SRC.format(tag=tag, deco=deco))
    return getattr(asc.compile(path), f"softmax_{tag}")


def c_fastmath(tmp):
    """bench/ref/loops.c with -O3 -march=native -ffast-math -fopenmp."""
    cc = os.environ.get("ASC_CC", "cc").split()
    so = os.path.join(tmp, "ref_fast.so")
    src = os.path.join(HERE, "ref", "loops.c")
    flags = ["-O3", "-march=native", "-ffast-math", "-fopenmp", "-fPIC",
             "-shared"]
    subprocess.run(cc + flags + ["-o", so, src, "-lm"], check=True)
    lib = ctypes.CDLL(so)
    lib.ref_softmax.argtypes = [ctypes.c_void_p, ctypes.c_void_p,
                                ctypes.c_int64, ctypes.c_int64]
    lib.ref_softmax.restype = None
    return lib, " ".join(cc + flags)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=4096)
    ap.add_argument("--cols", type=int, default=1024)
    ap.add_argument("--reps", type=int, default=15)
    a = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="asc-softmax-bench-")
    os.environ.setdefault("ASC_CACHE_DIR", os.path.join(tmp, "cache"))
    r = np.random.default_rng(12345)
    x = r.standard_normal((a.rows, a.cols)).astype(np.float32)
    xd = x.astype(np.float64)
    e = np.exp(xd - xd.max(axis=1, keepdims=True))
    want = e / e.sum(axis=1, keepdims=True)
    impls = {}

    def asc_run(k):
        out = np.zeros_like(x)
        f = lambda: (k(x, out), out)[1]  # noqa: E731
        f()  # compiles now, under this ASC_VECMATH
        return f

    os.environ.pop("ASC_VECMATH", None)
    impls["asc default (SLEEF exp)"] = asc_run(kernel("def", "", tmp))
    impls["asc fastmath=True"] = asc_run(kernel("fast", "(fastmath=True)", tmp))
    os.environ["ASC_VECMATH"] = "libm"
    impls["asc default, ASC_VECMATH=libm"] = asc_run(kernel("libm", "", tmp))
    os.environ.pop("ASC_VECMATH")

    out_np = np.zeros_like(x)

    def np_f():
        np.subtract(x, x.max(axis=1, keepdims=True), out=out_np)
        np.exp(out_np, out=out_np)
        return np.divide(out_np, out_np.sum(axis=1, keepdims=True), out=out_np)
    impls["numpy"] = np_f
    try:
        import numba
        import py_loops
        nb = numba.njit(parallel=True)(py_loops.softmax)
        out_nb = np.zeros_like(x)
        impls["numba parallel"] = lambda: (nb(x, out_nb), out_nb)[1]
    except ImportError:
        print("numba: not installed")
    flags = None
    if shutil.which(os.environ.get("ASC_CC", "cc").split()[0]):
        lib, flags = c_fastmath(tmp)
        out_c = np.zeros_like(x)
        impls["C -ffast-math OpenMP"] = lambda: (
            lib.ref_softmax(x.ctypes.data, out_c.ctypes.data, *x.shape), out_c)[1]

    for name, f in impls.items():   # warm up, check
        got = f()
        err = np.max(np.abs(got - want) / want)
        assert err < 1e-5, f"{name}: relative error {err}"
    # In turns, each round starting one further along: the first of a
    # round pays for threads of the previous one still spinning (OpenMP's,
    # numba's) on a small machine.
    times = {name: [] for name in impls}
    names = list(impls)
    for rep in range(a.reps):
        for name in names[rep % len(names):] + names[:rep % len(names)]:
            f = impls[name]
            t0 = time.perf_counter()
            f()
            times[name].append(time.perf_counter() - t0)
    med = {name: statistics.median(ts) for name, ts in times.items()}
    base = med["asc default (SLEEF exp)"]
    fast = med["asc fastmath=True"]
    print(f"row softmax {a.rows}x{a.cols} float32, median of {a.reps}, "
          f"{os.cpu_count()} cpus" + (f"; C: {flags}" if flags else ""))
    print(f"{'implementation':34} {'ms':>8} {'default/it':>11} "
          f"{'fastmath/it':>12}")
    for name, t in med.items():
        print(f"{name:34} {t * 1e3:8.2f} {t / base:10.2f}x {t / fast:11.2f}x")
    print("(x/it: that implementation's time over asc's; above 1, asc is "
          "faster)")


if __name__ == "__main__":
    main()
