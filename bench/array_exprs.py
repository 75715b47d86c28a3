"""Whole-array statements in kernels (docs/arrays.md) against numpy running
the same statement and numba @njit(parallel=True) compiling it, when numba
is installed.  One run, medians of --reps timings, ratios within the run.

  fused    a[:] = b * c + d                     (--n float32 values)
  fused, ASC_NTSTORE=0   the same kernel compiled without streaming stores
           (docs/arrays.md), the reference for what they gain
  stencil  B[1:-1, 1:-1] = 0.2 * (five views of A)   (--m x --m float64)

    python3 bench/array_exprs.py [--n 16777216] [--m 2048] [--reps 11]
"""
import argparse
import os
import statistics
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "bindings", "python"))

import asc  # noqa: E402

SRC = '''
import asc

@asc.kernel
def fused(a, b, c, d):
    a[:] = b * c + d

@asc.kernel
def stencil(A, B):
    B[1:-1, 1:-1] = 0.2 * (A[1:-1, 1:-1] + A[1:-1, :-2] + A[1:-1, 2:] +
                           A[2:, 1:-1] + A[:-2, 1:-1])
'''


def np_fused(a, b, c, d):
    a[:] = b * c + d


def np_stencil(A, B):
    B[1:-1, 1:-1] = 0.2 * (A[1:-1, 1:-1] + A[1:-1, :-2] + A[1:-1, 2:] +
                           A[2:, 1:-1] + A[:-2, 1:-1])


def median_ms(f, reps):
    f()
    ts = []
    for _ in range(reps):
        t0 = time.perf_counter()
        f()
        ts.append(time.perf_counter() - t0)
    return statistics.median(ts) * 1e3


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=16 * 1024 * 1024)
    ap.add_argument("--m", type=int, default=2048)
    ap.add_argument("--reps", type=int, default=11)
    o = ap.parse_args()
    m = asc.compile(SRC)
    try:
        import numba
        nb_fused = numba.njit(parallel=True)(np_fused)
        nb_stencil = numba.njit(parallel=True)(np_stencil)
    except ImportError:
        nb_fused = nb_stencil = None
    rng = np.random.default_rng(0)
    b, c, d = (rng.random(o.n, dtype=np.float32) for _ in range(3))
    a = np.empty_like(b)
    A = rng.random((o.m, o.m))
    B = np.zeros_like(A)
    m.fused(a, b, c, d)
    assert np.array_equal(a, b * c + d)
    # ASC_NTSTORE is read when the kernel compiles: at its first launch
    saved = os.environ.get("ASC_NTSTORE")
    os.environ["ASC_NTSTORE"] = "0"
    try:
        m0 = asc.compile(SRC)
        m0.fused(a, b, c, d)
    finally:
        if saved is None:
            del os.environ["ASC_NTSTORE"]
        else:
            os.environ["ASC_NTSTORE"] = saved
    assert np.array_equal(a, b * c + d)
    m.stencil(A, B)
    ref = np.zeros_like(A)
    np_stencil(A, ref)
    assert np.array_equal(B, ref)
    rows = [
        ("fused f32[%d]" % o.n, lambda: m.fused(a, b, c, d),
         lambda: np_fused(a, b, c, d),
         nb_fused and (lambda: nb_fused(a, b, c, d))),
        ("fused ASC_NTSTORE=0", lambda: m0.fused(a, b, c, d),
         lambda: np_fused(a, b, c, d),
         nb_fused and (lambda: nb_fused(a, b, c, d))),
        ("stencil f64[%d,%d]" % (o.m, o.m), lambda: m.stencil(A, B),
         lambda: np_stencil(A, B),
         nb_stencil and (lambda: nb_stencil(A, B))),
    ]
    print("%-22s %10s %10s %10s %12s %12s" % ("row", "asc ms", "numpy ms",
                                             "numba ms", "x numpy",
                                             "x numba"))
    for name, fa, fn, fb in rows:
        ta = median_ms(fa, o.reps)
        tn = median_ms(fn, o.reps)
        tb = median_ms(fb, o.reps) if fb else float("nan")
        print("%-22s %10.2f %10.2f %10.2f %11.2fx %11.2fx" %
              (name, ta, tn, tb, tn / ta, tb / ta))


if __name__ == "__main__":
    main()
