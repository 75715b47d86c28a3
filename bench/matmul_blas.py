"""`c = a @ b` in a kernel (asc_krt.gemm on the BLAS the runtime loads,
docs/arrays.md) against numpy's `a @ b` (numpy's own OpenBLAS), float32
and float64, --n x --n x --n.  One run, medians of --reps timings,
ratios within the run (x numpy > 1: the kernel is faster).

  c = a @ b              the product alone (a new array in the kernel)
  out[...] = a @ b       the product, then copied into a parameter

With ASC_BLAS=0 the kernels run the compiler's loops instead (slow at
1024: pass a smaller --n).

    python3 bench/matmul_blas.py [--n 1024] [--reps 11]
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
def product(a, b):
    c = a @ b

@asc.kernel
def product_into(a, b, out):
    out[...] = a @ b
'''


def medians_ms(fa, fn, reps):
    """Medians of fa's and fn's times, taken in turn (same machine load)."""
    fa()
    fn()
    ta, tn = [], []
    for _ in range(reps):
        for f, ts in ((fa, ta), (fn, tn)):
            t0 = time.perf_counter()
            f()
            ts.append(time.perf_counter() - t0)
    return statistics.median(ta) * 1e3, statistics.median(tn) * 1e3


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=1024)
    ap.add_argument("--reps", type=int, default=11)
    o = ap.parse_args()
    m = asc.compile(SRC)
    rng = np.random.default_rng(0)
    n = o.n
    print("ASC_BLAS=%s, %d cores, numpy %s" %
          (os.environ.get("ASC_BLAS", "(unset)"), os.cpu_count(),
           np.__version__))
    print("%-26s %10s %10s %10s %9s" % ("row", "asc ms", "numpy ms",
                                        "GFLOP/s", "x numpy"))
    for dt in (np.float32, np.float64):
        a = rng.random((n, n)).astype(dt)
        b = rng.random((n, n)).astype(dt)
        out = np.zeros((n, n), dt)
        m.product_into(a, b, out)
        ref = a @ b
        tol = 1e-4 if dt == np.float32 else 1e-10
        assert np.allclose(out, ref, rtol=tol, atol=tol * n)
        name = np.dtype(dt).name
        rows = [("c = a @ b  %s[%d]" % (name, n), lambda: m.product(a, b)),
                ("out[...] = a @ b  %s" % name,
                 lambda: m.product_into(a, b, out))]
        for label, fa in rows:
            ta, tn = medians_ms(fa, lambda: a @ b, o.reps)
            print("%-26s %10.2f %10.2f %10.1f %8.2fx" %
                  (label, ta, tn, 2.0 * n ** 3 / ta / 1e6, tn / ta))


if __name__ == "__main__":
    main()
