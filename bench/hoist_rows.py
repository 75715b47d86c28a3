"""Invariant loads with and without the hoist pass (docs/optimizer.md,
"hoist.c").  Each kernel is compiled with ASC_HOIST=1 and with
ASC_HOIST=0 in one process; the two are timed in turn (medians of REPS,
default 21), their outputs compared byte for byte, and the ratio printed
(time with ASC_HOIST=0 / time with the pass):

* scale_exp: c[i, j] = a[i, j] * math.exp(w[i]).  The load of w[i] leaves
  the j loop, and the exponential and its error tests follow it: one per
  row instead of one per element (the C compiler does not move a libm
  call out of a loop).
* row_update: a[i, j] = a[i, j] - a[i - 1, 0] * a[i - 1, j].  The store
  writes row i, the load reads row i - 1: depend.c tells them apart; the
  C compiler, which cannot (the row stride is a run-time value), checks
  the overlap at run time and vectorises both versions alike, so this row
  shows what the pass costs where it gains nothing.

Each timed call follows an untimed call of the same kernel: a call right
after the other module's (a different parallel body) ran up to 10x slower
on the 2-core development machine, whichever side came second.

    PYTHONPATH=bindings/python python3 bench/hoist_rows.py [REPS] [N,M]
"""
import os
import statistics
import sys
import time

import numpy as np

import asc

SRC = '''
import math

import asc


@asc.kernel
def scale_exp(a, w, c):
    for i in range(a.shape[0]):
        for j in range(a.shape[1]):
            c[i, j] = a[i, j] * math.exp(w[i])


@asc.kernel
def row_update(a):
    n, m = a.shape
    for i in range(1, n):
        for j in range(m):
            a[i, j] = a[i, j] - a[i - 1, 0] * a[i - 1, j]
'''


def compiled(value):
    """The module with its kernels compiled (at their first launch) while
    ASC_HOIST=value."""
    saved = os.environ.get("ASC_HOIST")
    os.environ["ASC_HOIST"] = value
    try:
        m = asc.compile(SRC)
        m.scale_exp(np.ones((2, 3)), np.ones(2), np.ones((2, 3)))
        m.row_update(np.ones((2, 3)))
        return m
    finally:
        if saved is None:
            os.environ.pop("ASC_HOIST", None)
        else:
            os.environ["ASC_HOIST"] = saved


def main():
    reps = int(sys.argv[1]) if len(sys.argv) > 1 else 21
    shape = tuple(int(x) for x in (sys.argv[2] if len(sys.argv) > 2
                                   else "2000,2000").split(","))
    mods = {"on": compiled("1"), "off": compiled("0")}
    r = np.random.default_rng(1)
    a0 = r.uniform(0.5, 1.0, shape)
    a0[:, 0] = r.uniform(0.1, 0.5, shape[0])
    w = r.uniform(-1.0, 1.0, shape[0])

    # each: (set-up, not timed; the timed call; the output)
    def scale_exp(m):
        c = np.empty(shape)
        return lambda: None, lambda: m.scale_exp(a0, w, c), lambda: c

    def row_update(m):
        a = a0.copy()
        return lambda: np.copyto(a, a0), lambda: m.row_update(a), lambda: a

    print(f"{shape[0]}x{shape[1]} float64, medians of {reps}, "
          f"ASC_HOIST=1 and =0 in turn")
    for name, make in (("row_update", row_update), ("scale_exp", scale_exp)):
        runs = {side: make(mods[side]) for side in mods}
        ts = {"on": [], "off": []}
        for _ in range(reps):
            for side in ("on", "off"):
                runs[side][0]()
                runs[side][1]()
                runs[side][0]()
                t = time.perf_counter()
                runs[side][1]()
                ts[side].append(time.perf_counter() - t)
        same = runs["on"][2]().tobytes() == runs["off"][2]().tobytes()
        on = statistics.median(ts["on"]) * 1e3
        off = statistics.median(ts["off"]) * 1e3
        print(f"{name}: hoist {on:.2f} ms, ASC_HOIST=0 {off:.2f} ms, "
              f"ratio {off / on:.2f}x, outputs equal: {same}")
        if not same:
            sys.exit(1)


if __name__ == "__main__":
    main()
