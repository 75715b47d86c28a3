"""The naive transpose with the tile pass on and off (docs/optimizer.md,
"The transpose"): 4096^2 float32, range and prange forms, medians of 7,
and numpy's a.T.copy() in the same process.

    PYTHONPATH=bindings/python python3 bench/tile_transpose.py
    ASC_TILE=0 PYTHONPATH=bindings/python python3 bench/tile_transpose.py
"""
import os
import statistics
import time

import numpy as np

import asc

SRC = '''
import asc


@asc.kernel
def transpose(a, b):
    n, m = a.shape
    for i in range(n):
        for j in range(m):
            b[j, i] = a[i, j]


@asc.kernel
def transpose_p(a, b):
    n, m = a.shape
    for i in asc.prange(n):
        for j in range(m):
            b[j, i] = a[i, j]
'''


def median_ms(fn, reps=7):
    ts = []
    for _ in range(reps):
        t = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t)
    return statistics.median(ts) * 1e3


def main():
    m = asc.compile(SRC)
    a = np.random.default_rng(1).random((4096, 4096), np.float32)
    b = np.empty_like(a)
    for name in ("transpose", "transpose_p"):
        k = getattr(m, name)
        k(a, b)   # compiles (ASC_TILE is read now) and checks
        assert (b == a.T).all()
        print(f"{name} ASC_TILE={os.environ.get('ASC_TILE', '(unset)')}: "
              f"{median_ms(lambda: k(a, b)):.1f} ms")
    print(f"numpy a.T.copy(): {median_ms(lambda: a.T.copy()):.1f} ms")


if __name__ == "__main__":
    main()
