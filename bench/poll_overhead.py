"""Cost of the cancellation polls (docs/streams.md, "Cancellation") on the
benchmark suite's kernels: each kernel compiled twice in one process, with
the polls (the default) and without them (ASC_CFLAGS=-DASC_NO_POLL, an
internal switch that removes the polls and the chunking of counted loops),
timed in alternation so that a noisy neighbour slows both alike.  Prints
the medians and (off - on) / off.

    bash bench/run.sh --only kernels    # the suite itself
    PYTHONPATH=bindings/python python3 bench/poll_overhead.py [--reps N]

The runtime's side of cancellation (parallel loops hand out chunks of at
most 65536 iterations and check the stop flag between them) is not
switched off: both columns include it.
"""
import argparse
import os
import statistics
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
KERNELS = os.path.join(HERE, "kernels", "suite_kernels.py")
SEED = os.path.join(ROOT, "examples", "python", "seed_kernels.asc")


def build(flags):
    import asc
    os.environ["ASC_CFLAGS"] = flags
    suite, seed = asc.compile(KERNELS), asc.compile(SEED)
    return suite, seed


def data(rng):
    """One set of arrays, shared by both builds (placement and alignment
    then cannot differ between the columns)."""
    n = 4 << 20
    d = {"a": rng.random(n, np.float32), "b": rng.random(n, np.float32),
         "ma": rng.random((256, 256)), "mb": rng.random((256, 256)),
         "mc": np.empty((256, 256)),
         "x": rng.random((1, 16, 64, 64), np.float32),
         "w": rng.random((32, 16, 3, 3), np.float32),
         "o": np.empty((1, 32, 62, 62), np.float32),
         "sx": rng.random((1024, 1024), np.float32),
         "hist": np.zeros(256, np.int64), "out": np.zeros(1, np.float64)}
    d["c"] = np.empty_like(d["a"])
    d["so"] = np.empty_like(d["sx"])
    d["ad"], d["bd"] = d["a"].astype(np.float64), d["b"].astype(np.float64)
    return d


def cases(suite, seed, d):
    return {
        "vadd": lambda: suite.vadd(d["a"], d["b"], d["c"]),
        "saxpy": lambda: suite.saxpy(np.float32(2.0), d["a"], d["b"], d["c"]),
        "matmul": lambda: suite.matmul(d["ma"], d["mb"], d["mc"]),
        "conv2d": lambda: seed.conv2d(d["x"], d["w"], d["o"]),
        "softmax": lambda: suite.softmax(d["sx"], d["so"]),
        "histogram": lambda: suite.histogram(d["a"], d["hist"]),
        "dot": lambda: suite.dot(d["ad"], d["bd"], d["out"]),
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--reps", type=int, default=21)
    ap.add_argument("--only", default="", help="comma-separated kernels")
    args = ap.parse_args()
    d = data(np.random.default_rng(1))
    on = cases(*build(""), d)
    for f in on.values():   # specialise now, with the polls
        f()
    off = cases(*build("-DASC_NO_POLL"), d)
    for f in off.values():
        f()
    os.environ.pop("ASC_CFLAGS")
    print(f"{'kernel':10} {'polls on':>10} {'polls off':>10} {'cost':>7}")
    total_on = total_off = 0.0
    names = [n for n in on if not args.only or n in args.only.split(",")]
    for name in names:
        t = {"on": [], "off": []}
        for rep in range(args.reps):
            order = (("on", on), ("off", off))
            for mode, fs in order if rep % 2 else order[::-1]:
                t0 = time.perf_counter()
                fs[name]()
                t[mode].append(time.perf_counter() - t0)
        m_on, m_off = statistics.median(t["on"]), statistics.median(t["off"])
        total_on += m_on
        total_off += m_off
        print(f"{name:10} {m_on * 1e3:8.2f}ms {m_off * 1e3:8.2f}ms "
              f"{(m_on - m_off) / m_off * 100:+6.1f}%")
    print(f"{'suite':10} {total_on * 1e3:8.2f}ms {total_off * 1e3:8.2f}ms "
          f"{(total_on - total_off) / total_off * 100:+6.1f}%")


if __name__ == "__main__":
    sys.exit(main())
