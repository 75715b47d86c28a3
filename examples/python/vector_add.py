"""Vector add with @asc.kernel: synchronous, then asynchronous on a stream
with events timing it.

    python3 examples/python/vector_add.py
"""
import numpy as np

import asc


@asc.kernel
def vector_add(a, b, c):
    for i in asc.prange(a.shape[0]):
        c[i] = a[i] + b[i]


def main():
    n = 10_000_000
    a = asc.asarray(np.arange(n, dtype=np.float32))
    b = asc.asarray(np.ones(n, dtype=np.float32))
    c = asc.empty(n, asc.float32)

    vector_add(a, b, c)                       # one block, default stream, waits
    assert np.array_equal(c.numpy(), a.numpy() + 1)

    stream = asc.Stream()
    start, end = asc.Event(), asc.Event()
    start.record(stream)
    for _ in range(10):
        vector_add[1, stream](a, b, c)        # queued; returns at once
    end.record(stream)
    end.synchronize()
    ms = start.elapsed_time(end) / 10
    gbs = 3 * 4 * n / (ms * 1e-3) / 1e9
    print(f"vector_add n={n}: {ms:.3f} ms per launch, {gbs:.1f} GB/s")


if __name__ == "__main__":
    main()
