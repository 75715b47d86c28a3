"""Tiled matrix multiply.  TILE is a module-level constant: it is frozen
into the kernel and is part of its cache key.

    python3 examples/python/matmul.py
"""
import time

import numpy as np

import asc

TILE = 64


@asc.kernel
def matmul(a: asc.Tensor[asc.float32, 2], b: asc.Tensor[asc.float32, 2],
           c: asc.Tensor[asc.float32, 2]):
    n, k = a.shape
    m = b.shape[1]
    for i0 in asc.prange(0, n, TILE):
        for j0 in range(0, m, TILE):
            for i in range(i0, min(i0 + TILE, n)):
                for j in range(j0, min(j0 + TILE, m)):
                    c[i, j] = 0.0
            for p0 in range(0, k, TILE):
                for i in range(i0, min(i0 + TILE, n)):
                    for p in range(p0, min(p0 + TILE, k)):
                        aip = a[i, p]
                        for j in range(j0, min(j0 + TILE, m)):
                            c[i, j] += aip * b[p, j]


def main():
    rng = np.random.default_rng(2)
    n = 512
    a = rng.random((n, n), dtype=np.float32)
    b = rng.random((n, n), dtype=np.float32)
    c = np.empty((n, n), np.float32)
    matmul(a, b, c)
    assert np.allclose(c, a @ b, rtol=1e-3)
    t = time.perf_counter()
    matmul(a, b, c)
    dt = time.perf_counter() - t
    print(f"matmul {n}x{n}: {dt * 1e3:.2f} ms, {2 * n**3 / dt / 1e9:.1f} GFLOP/s, matches numpy")


if __name__ == "__main__":
    main()
