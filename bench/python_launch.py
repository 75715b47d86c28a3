"""Launch overhead from Python: a cached, synchronous launch of an empty
parallel kernel with asc, against numba's @njit(parallel=True) with an
empty prange loop, measured in the same run.

Both compilers may delete a loop whose body is `pass` (numba does: no
parallel region runs), so each is also measured with a prange loop that
stores one float per iteration into a 64-element array, which forces a
real parallel region (fork/join over the worker threads).

    python3 bench/python_launch.py [--calls N] [--repeat R]

A third pair returns a new 500-element array (`a * 2.0`; numba's plain
@njit, numpy's own expression beside them): the cost of making the
returned array and handing it to Python.

Prints microseconds per call (median of R repeats of N calls) for each,
and the ratio asc / numba.  numba is optional; without it only asc and a
plain Python call are shown.
"""
import argparse
import statistics
import sys
import time

import numpy as np

import asc


@asc.kernel
def empty_parallel(n):
    for i in asc.prange(n):
        pass


@asc.kernel
def tiny_parallel(a):
    for i in asc.prange(a.shape[0]):
        a[i] = 0.0


@asc.kernel
def doubled(a):
    return a * 2.0


def per_call_us(fn, calls, repeat):
    """Microseconds per call of each of `repeat` runs of `calls` calls."""
    fn()
    fn()
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        for _ in range(calls):
            fn()
        times.append((time.perf_counter() - t) / calls * 1e6)
    return times


def numba_kernels():
    try:
        import numba
    except ImportError:
        return None, None, None, None

    @numba.njit(parallel=True)
    def nb_empty(n):
        for i in numba.prange(n):
            pass

    @numba.njit(parallel=True)
    def nb_tiny(a):
        for i in numba.prange(a.shape[0]):
            a[i] = 0.0

    @numba.njit
    def nb_doubled(a):
        return a * 2.0

    nb_empty(1000)
    nb_tiny(np.zeros(64, np.float32))
    nb_doubled(np.zeros(500))
    try:
        layer = numba.threading_layer()
    except Exception as exc:  # no parallel region ran
        layer = f"unknown ({exc})"
    return nb_empty, nb_tiny, nb_doubled, f"numba {numba.__version__}, threading layer {layer}, {numba.config.NUMBA_NUM_THREADS} threads"


def measure(calls=20000, repeat=7):
    """Returns (rows, numba_info): rows are (name, [us per call of each
    repeat]) in the order printed by main(), or (name, reason) for an asc
    kernel that failed; numba_info is None without numba.  bench/suite.py
    reuses this."""
    n = 1000
    a = np.zeros(64, np.float32)
    b = np.ones(500)

    def noop(x):
        pass

    def attempt(fn):
        try:
            return per_call_us(fn, calls, repeat)
        except Exception as exc:  # a kernel that does not compile or run
            return f"{type(exc).__name__}: {str(exc).strip().splitlines()[0] if str(exc).strip() else ''}"

    rows = [("python no-op call", per_call_us(lambda: noop(n), calls, repeat)),
            ("asc   empty prange(n)", attempt(lambda: empty_parallel(n))),
            ("asc   prange storing 64 floats", attempt(lambda: tiny_parallel(a))),
            ("asc   returning 500 floats", attempt(lambda: doubled(b))),
            ("numpy returning 500 floats", per_call_us(lambda: b * 2.0, calls, repeat))]
    nb_empty, nb_tiny, nb_doubled, info = numba_kernels()
    if nb_empty is not None:
        rows += [("numba empty prange(n)", per_call_us(lambda: nb_empty(n), calls, repeat)),
                 ("numba prange storing 64 floats", per_call_us(lambda: nb_tiny(a), calls, repeat)),
                 ("numba returning 500 floats", per_call_us(lambda: nb_doubled(b), calls, repeat))]
    return rows, info


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--calls", type=int, default=20000)
    ap.add_argument("--repeat", type=int, default=7)
    args = ap.parse_args()

    props = asc.device_properties()
    print(f"asc {asc.__version__} on {props.name}: {props.cores} cores; python {sys.version.split()[0]}")
    rows, info = measure(args.calls, args.repeat)
    print(info if info is not None else "numba not installed: no reference")
    us = {name: statistics.median(t) for name, t in rows if not isinstance(t, str)}
    for name, t in rows:
        print(f"  {name:34s} {us[name]:9.3f} us/call" if name in us else f"  {name:34s} FAILED: {t}")
    if info is not None and len(us) == len(rows):
        print(f"ratio asc/numba: empty {us['asc   empty prange(n)'] / us['numba empty prange(n)']:.2f}x, "
              f"64-float store {us['asc   prange storing 64 floats'] / us['numba prange storing 64 floats']:.2f}x, "
              f"returning 500 floats {us['asc   returning 500 floats'] / us['numba returning 500 floats']:.2f}x"
              "  (< 1: asc is faster)")


if __name__ == "__main__":
    main()
