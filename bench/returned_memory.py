"""What a returned array's memory costs: a kernel that returns a new
8 MB array (`x * 2.0` of 1M float64), called again and again, against
numpy's `x * 2.0` in the same process.  For each: the median time of a
call and the page faults it took (getrusage's minor faults), with no
pause between calls and with a pause before each (an allocator that
gives freed memory back to the system soon faults it in again on the
next call, 2,000 faults for 8 MB).  docs/arrays.md, "Returned arrays".

    python3 bench/returned_memory.py [--mb 8] [--reps 30]
"""
import argparse
import os
import resource
import statistics
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "bindings", "python"))

import asc  # noqa: E402

TEXT = """
import asc

@asc.kernel
def twice(x):
    return x * 2.0
"""


def faults():
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt


def measure(f, x, reps, pause):
    f(x)
    f(x)
    ts, fl = [], []
    for _ in range(reps):
        if pause:
            time.sleep(pause)
        f0 = faults()
        t0 = time.perf_counter()
        y = f(x)
        ts.append(time.perf_counter() - t0)
        fl.append(faults() - f0)
        del y
    return statistics.median(ts) * 1e3, statistics.median(fl)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mb", type=float, default=8.0)
    ap.add_argument("--reps", type=int, default=30)
    args = ap.parse_args()
    m = asc.compile(TEXT)
    x = np.random.default_rng(0).random(int(args.mb * 1e6 / 8))
    np.testing.assert_array_equal(m.twice(x), x * 2.0)
    print(f"a new {args.mb:g} MB float64 array returned by each call; "
          f"medians of {args.reps} calls")
    print(f"{'pause':>8} {'asc ms':>8} {'faults':>7} {'numpy ms':>9} "
          f"{'faults':>7} {'np/asc':>7}")
    for pause in (0.0, 0.25, 2.0):
        reps = args.reps if pause < 1 else max(3, args.reps // 6)
        a_ms, a_f = measure(m.twice, x, reps, pause)
        n_ms, n_f = measure(lambda v: v * 2.0, x, reps, pause)
        print(f"{pause:>7g}s {a_ms:>8.3f} {a_f:>7.0f} {n_ms:>9.3f} "
              f"{n_f:>7.0f} {n_ms / a_ms:>7.2f}")


if __name__ == "__main__":
    main()
