"""asc_gemm_exact_f32/f64 (src/compiler/gemm_kernel.h: the naive i-j-p
product in its exact order, register-blocked) against numpy's `a @ b`
(numpy's OpenBLAS, which sums in its own order), float32 and float64,
--n x --n x --n, on --threads threads.  One run, medians of --reps
timings taken in turn, ratios within the run (x numpy > 1: faster).

The function is built here with the flags kernels get (cc -O3
-march=native -ffp-contract=off) into a shared object with a stand-in
team (bench/gemm_exact_shim.c: pthreads, aligned_alloc).  Each product
is also compared bit for bit with the naive loop built the same way
(timed once: `naive`).

    python3 bench/gemm_exact.py [--n 1024] [--reps 11] [--threads 2]
"""
import argparse
import ctypes
import os
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def build(cc, cflags, tmp):
    so = os.path.join(tmp, "gemm_exact_shim.so")
    subprocess.run([cc, "-std=gnu11", "-O3", "-march=native",
                    "-ffp-contract=off", "-fno-math-errno", "-fPIC",
                    "-shared", "-I" + os.path.join(ROOT, "include"),
                    "-I" + os.path.join(ROOT, "src", "compiler"),
                    os.path.join(HERE, "gemm_exact_shim.c"), "-o", so,
                    "-lpthread"] + cflags.split(), check=True)
    return ctypes.CDLL(so)


def ptr(x):
    return x.ctypes.data_as(ctypes.c_void_p)


def medians_ms(fs, reps):
    """Medians of each f's time, the fs taken in turn (same load)."""
    for f in fs:
        f()
    ts = [[] for _ in fs]
    for _ in range(reps):
        for f, t in zip(fs, ts):
            t0 = time.perf_counter()
            f()
            t.append(time.perf_counter() - t0)
    return [statistics.median(t) * 1e3 for t in ts]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=1024)
    ap.add_argument("--reps", type=int, default=11)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--cc", default=os.environ.get("CC", "cc"))
    ap.add_argument("--cflags", default="",
                    help="more flags, after the others: --cflags=-O2")
    ap.add_argument("--no-check", action="store_true",
                    help="skip the naive loop and the bit comparison")
    ap.add_argument("--dtypes", default="f32,f64")
    o = ap.parse_args()
    n = o.n
    rng = np.random.default_rng(0)
    with tempfile.TemporaryDirectory() as tmp:
        lib = build(o.cc, o.cflags, tmp)
        print(f"{n}x{n}x{n}, {o.threads} threads, {o.reps} reps, cc {o.cc}"
              f" {o.cflags}".rstrip())
        print(f"{'dtype':8} {'exact ms':>9} {'numpy ms':>9} {'exact GF/s':>11}"
              f" {'numpy GF/s':>11} {'x numpy':>8} {'naive ms':>9}  bits")
        for dt, suf in ((np.float32, "f32"), (np.float64, "f64")):
            if suf not in o.dtypes.split(","):
                continue
            a = rng.standard_normal((n, n)).astype(dt)
            b = rng.standard_normal((n, n)).astype(dt)
            c = np.empty((n, n), dt)
            ref = np.empty((n, n), dt)
            gk = getattr(lib, "gk_" + suf)
            gk.argtypes = [ctypes.c_int] + [ctypes.c_int64] * 3 + \
                [ctypes.c_void_p] * 3
            naive = getattr(lib, "naive_" + suf)
            naive.argtypes = [ctypes.c_int64] * 3 + [ctypes.c_void_p] * 3
            tnaive = float("nan")
            if not o.no_check:
                t0 = time.perf_counter()
                naive(n, n, n, ptr(a), ptr(b), ptr(ref))
                tnaive = (time.perf_counter() - t0) * 1e3

            def exact():
                if gk(o.threads, n, n, n, ptr(a), ptr(b), ptr(c)) != 0:
                    raise RuntimeError("asc_gemm_exact raised")

            def numpy_mm():
                np.matmul(a, b)

            te, tn = medians_ms([exact, numpy_mm], o.reps)
            same = o.no_check or np.array_equal(c.view(np.uint8),
                                                ref.view(np.uint8))
            gf = 2.0 * n ** 3 / 1e9
            print(f"{suf:8} {te:9.2f} {tn:9.2f} {gf / te * 1e3:11.1f}"
                  f" {gf / tn * 1e3:11.1f} {tn / te:8.3f} {tnaive:9.1f}"
                  "  " + ("-" if o.no_check else
                          "identical" if same else "DIFFER"))
            if not same:
                sys.exit(1)


if __name__ == "__main__":
    main()
