"""Row-wise softmax: a parallel loop over rows, sequential work in each.

    python3 examples/python/softmax.py
"""
import math

import numpy as np

import asc


@asc.kernel
def softmax(x, out):
    rows, cols = x.shape
    for r in asc.prange(rows):
        m = x[r, 0]
        for j in range(1, cols):
            m = max(m, x[r, j])
        s = 0.0
        for j in range(cols):
            e = math.exp(x[r, j] - m)
            out[r, j] = e
            s += e
        for j in range(cols):
            out[r, j] = out[r, j] / s


def main():
    rng = np.random.default_rng(1)
    x = rng.standard_normal((4096, 512)).astype(np.float32)
    out = np.empty_like(x)
    softmax(x, out)
    e = np.exp(x - x.max(axis=1, keepdims=True))
    ref = e / e.sum(axis=1, keepdims=True)
    assert np.allclose(out, ref, rtol=1e-5, atol=1e-6)
    print("softmax", x.shape, "matches numpy; row sums:", out.sum(axis=1)[:3])


if __name__ == "__main__":
    main()
