"""Matrix multiply: write the three loops.

    python3 examples/python/matmul.py

The kernel below is the product as a textbook writes it, with the rows
split over the cores by `asc.prange`.  The compiler recognises this nest
(three loops, one sum of a[i, p] * b[p, j] per element) and runs it as a
matrix product: a cache-blocked, vectorised micro-kernel that still adds
the products of each element in the loops' order, so the result is bit
for bit what the loops compute (docs/optimizer.md, "gemmrec").  `c[:, :] =
a @ b` in a kernel is the other short way (a BLAS; docs/arrays.md).

Do not tile the loops by hand, as one would in C: a tiled nest (loops over
blocks of 64, min() bounds, c[i, j] += ...) is no longer the shape the
compiler recognises, so it runs as written, and it is about fifty times
slower than these three loops (153 ms against 2.9 ms for 512 x 512 on a
2-core machine).  To see the decision, run
`ascc --emit=ir --signature 'matmul(f32[2], f32[2], f32[2])'
examples/python/matmul.py`: a `; gemmrec:` note sits above the nest.
"""
import time

import numpy as np

import asc


@asc.kernel
def matmul(a, b, c):
    n, k = a.shape
    m = b.shape[1]
    for i in asc.prange(n):
        for j in range(m):
            s = 0.0
            for p in range(k):
                s += a[i, p] * b[p, j]
            c[i, j] = s


def main():
    rng = np.random.default_rng(2)
    n = 512
    a = rng.random((n, n), dtype=np.float32)
    b = rng.random((n, n), dtype=np.float32)
    c = np.empty((n, n), np.float32)
    matmul(a, b, c)                 # the first call compiles
    assert np.allclose(c, a @ b, rtol=1e-4)
    best = float("inf")
    for _ in range(5):
        t = time.perf_counter()
        matmul(a, b, c)
        best = min(best, time.perf_counter() - t)
    print("matmul %dx%d: %.2f ms, %.1f GFLOP/s, matches numpy"
          % (n, n, best * 1e3, 2 * n**3 / best / 1e9))


if __name__ == "__main__":
    main()
