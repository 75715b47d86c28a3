"""The 256-bin histogram with atomics (bench/kernels/suite_kernels.py's
`histogram`, asc.prange + asc.atomic_add) with the privatize pass on and
off (ASC_PRIVATIZE=0, docs/parallelize.md), against numpy.bincount and
numba parallel (bench/py_loops.py's histogram_private) when numba is
installed.  One run, medians of --reps timings, ratios within the run.

    python3 bench/privatize_hist.py [--n 16777216] [--reps 15]
"""
import argparse
import os
import statistics
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "bindings", "python"))
sys.path.insert(0, HERE)

import asc  # noqa: E402
import py_loops  # noqa: E402

SRC = '''
import asc

@asc.kernel
def histogram_{tag}(x, hist):
    for i in asc.prange(x.shape[0]):
        b = min(int(x[i] * 256.0), 255)
        asc.atomic_add(hist, b, 1)
'''


def kernel(tag, tmp):
    path = os.path.join(tmp, f"hist_{tag}.py")
    with open(path, "w") as f:
        f.write(SRC.format(tag=tag))
    ns = {}
    exec(compile(open(path).read(), path, "exec"), ns)
    return ns[f"histogram_{tag}"]


def median_time(f, reps):
    f()
    ts = []
    for _ in range(reps):
        t0 = time.perf_counter()
        f()
        ts.append(time.perf_counter() - t0)
    return statistics.median(ts)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=16 * 1024 * 1024)
    ap.add_argument("--reps", type=int, default=15)
    a = ap.parse_args()
    import tempfile
    tmp = tempfile.mkdtemp(prefix="asc-privbench-")
    x = np.random.default_rng(0).random(a.n, np.float32)
    want = np.bincount(np.minimum((x * np.float32(256)).astype(np.int64), 255),
                       minlength=256)
    h = np.zeros(256, np.int64)
    rows = {}

    def run_asc(k):
        def f():
            h[:] = 0
            k(x, h)
        return f

    # compiled on first call: the pass reads ASC_PRIVATIZE then
    os.environ["ASC_PRIVATIZE"] = "0"
    k_off = kernel("atomics", tmp)
    run_asc(k_off)()
    assert np.array_equal(h, want)
    del os.environ["ASC_PRIVATIZE"]
    k_on = kernel("private", tmp)
    run_asc(k_on)()
    assert np.array_equal(h, want)
    rows["asc, privatize off (atomics)"] = median_time(run_asc(k_off), a.reps)
    rows["asc, privatize on"] = median_time(run_asc(k_on), a.reps)

    def np_f():
        b = (x * np.float32(256)).astype(np.int64)
        np.minimum(b, 255, out=b)
        return np.bincount(b, minlength=256)
    rows["numpy bincount"] = median_time(np_f, a.reps)
    try:
        import numba
        nf = numba.njit(parallel=True)(py_loops.histogram_private)

        def nb_f():
            h[:] = 0
            nf(x, h)
        nb_f()
        assert np.array_equal(h, want)
        rows["numba parallel"] = median_time(nb_f, a.reps)
    except ImportError:
        pass
    on = rows["asc, privatize on"]
    print(f"histogram, 256 bins, n={a.n}, {os.cpu_count()} CPUs, "
          f"median of {a.reps}")
    for name, t in rows.items():
        print(f"  {name:32s} {t * 1e3:9.3f} ms  {4 * a.n / t / 1e9:7.2f} GB/s"
              f"  asc-on/this {t / on:6.2f}x")


if __name__ == "__main__":
    main()
