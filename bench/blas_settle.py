"""Why the suite pauses 0.25 s before each timed call of a BLAS row
(bench/suite.py, BLAS_SETTLE_S; docs/optimizer.md, "Measured"): the
suite's `c[:, :] = a @ b` kernel (1024^3 float32) timed D seconds after
one numpy `a @ b`, for several D, against the same kernel timed after
another asc call; and the CPU time the process burns while it sleeps
after numpy's call (numpy's OpenBLAS threads spinning).  Medians of
--reps.

    PYTHONPATH=bindings/python python3 bench/blas_settle.py
    OPENBLAS_THREAD_TIMEOUT=4 PYTHONPATH=bindings/python python3 bench/blas_settle.py
"""
import argparse
import os
import resource
import statistics
import time

import numpy as np

import asc

HERE = os.path.dirname(os.path.abspath(__file__))
DELAYS = [0.0, 0.02, 0.1, 0.25, 0.5]


def cpu():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=21)
    ap.add_argument("--n", type=int, default=1024)
    args = ap.parse_args()
    n = args.n
    k = asc.compile(os.path.join(HERE, "kernels", "suite_kernels.py")).matmul_op
    rng = np.random.default_rng(0)
    a = rng.uniform(-1, 1, (n, n)).astype(np.float32)
    b = rng.uniform(-1, 1, (n, n)).astype(np.float32)
    c = np.zeros((n, n), np.float32)
    ref = np.zeros((n, n), np.float32)
    for _ in range(3):
        k(a, b, c)
        np.matmul(a, b, out=ref)
    assert np.allclose(c, ref, rtol=1e-4, atol=1e-3)

    def timed(fn):
        t = time.perf_counter()
        fn()
        return time.perf_counter() - t

    print(f"{n}^3 float32, medians of {args.reps}; load average "
          f"{os.getloadavg()[0]:.2f}; OPENBLAS_THREAD_TIMEOUT="
          f"{os.environ.get('OPENBLAS_THREAD_TIMEOUT', '(unset)')}")
    # rounds interleave the delays (and asc after asc), so that a change
    # of the load from other programs touches them alike
    asc_t = {d: [] for d in DELAYS + ["asc"]}
    np_t, burn = {d: [] for d in DELAYS}, {d: [] for d in DELAYS}
    for _ in range(args.reps):
        for d in DELAYS + ["asc"]:
            if d == "asc":
                k(a, b, c)
                time.sleep(0.02)
            else:
                np_t[d].append(timed(lambda: np.matmul(a, b, out=ref)))
                c0, w0 = cpu(), time.perf_counter()
                time.sleep(d)
                burn[d].append((cpu() - c0) / max(time.perf_counter() - w0, 1e-9))
            asc_t[d].append(timed(lambda: k(a, b, c)))
    for d in DELAYS:
        used = (f"; while sleeping the process used "
                f"{statistics.median(burn[d]):.2f} cores" if d > 0 else "")
        print(f"asc {d:4.2f} s after numpy: {statistics.median(asc_t[d]) * 1e3:6.1f} ms   "
              f"(numpy {statistics.median(np_t[d]) * 1e3:6.1f} ms{used})")
    print(f"asc 0.02 s after asc:   {statistics.median(asc_t['asc']) * 1e3:6.1f} ms")
    print(f"load average {os.getloadavg()[0]:.2f} at the end")


if __name__ == "__main__":
    main()
