"""Run the PyAsc article's conv2d and parallel_add (seed_kernels.asc)
and check them against numpy.

    python3 examples/python/seed_kernels.py
"""
import os
import time

import numpy as np

import asc

HERE = os.path.dirname(os.path.abspath(__file__))


def conv2d_reference(x, w):
    b, c, h, wd = x.shape
    oc, _, kh, kw = w.shape
    out = np.zeros((b, oc, h - kh + 1, wd - kw + 1), x.dtype)
    for i in range(kh):
        for j in range(kw):
            patch = x[:, :, i:i + out.shape[2], j:j + out.shape[3]]
            out += np.einsum("bchw,oc->bohw", patch, w[:, :, i, j])
    return out


def main():
    seed = asc.compile(os.path.join(HERE, "seed_kernels.asc"))
    print("compiled", seed)

    rng = np.random.default_rng(0)
    n = 1_000_000
    a = rng.random(n, dtype=np.float32)
    b = rng.random(n, dtype=np.float32)
    c = np.empty_like(a)
    seed.parallel_add(a, b, c)
    assert np.array_equal(c, a + b)
    t = time.perf_counter()
    seed.parallel_add(a, b, c)
    print(f"parallel_add  n={n}: {1e3 * (time.perf_counter() - t):.3f} ms, matches numpy")

    x = rng.random((2, 3, 34, 34), dtype=np.float32)
    w = rng.random((8, 3, 3, 3), dtype=np.float32)
    out = np.empty((2, 8, 32, 32), np.float32)
    seed.conv2d(x, w, out)
    ref = conv2d_reference(x, w)
    assert np.allclose(out, ref, rtol=1e-4, atol=1e-4)
    t = time.perf_counter()
    seed.conv2d(x, w, out)
    print(f"conv2d {x.shape} * {w.shape}: {1e3 * (time.perf_counter() - t):.3f} ms, matches numpy")


if __name__ == "__main__":
    main()
