"""Data-parallel gradient descent with asc.distributed: each rank holds a
shard of a linear-regression data set, computes its gradient with an asc
kernel, and the gradients are summed with an allreduce queued on the same
stream, followed by the weight update kernel.  The host waits once, at
the end.

    mpirun -np 4 python3 examples/python/mpi_sgd.py

Checks that every rank ends with the same weights and that they match
plain numpy full-batch gradient descent on one process.
"""
import sys

import numpy as np
from mpi4py import MPI

import asc
import asc.distributed as dist


@asc.kernel
def gradient(x, y, w, g):
    # g[j] = sum_i (x[i, :] . w - y[i]) * x[i, j]
    n = x.shape[0]
    d = x.shape[1]
    for j in asc.prange(d):
        s = 0.0
        for i in range(n):
            p = 0.0
            for k in range(d):
                p += x[i, k] * w[k]
            s += (p - y[i]) * x[i, j]
        g[j] = s


@asc.kernel
def update(w, g, scale):
    for j in range(w.shape[0]):
        w[j] = w[j] - scale * g[j]


def data(n, d):
    rng = np.random.default_rng(7)
    x = rng.standard_normal((n, d))
    w_true = np.arange(1, d + 1, dtype=np.float64) / d
    y = x @ w_true + 0.01 * rng.standard_normal(n)
    return x, y


def main():
    n, d, steps, lr = 1200, 8, 40, 0.5
    comm = dist.Comm(MPI.COMM_WORLD)
    rank, size = comm.rank, comm.size
    x, y = data(n, d)
    lo, hi = rank * n // size, (rank + 1) * n // size
    xs, ys = np.ascontiguousarray(x[lo:hi]), np.ascontiguousarray(y[lo:hi])
    w = np.zeros(d)
    g = np.empty(d)
    s = asc.Stream()
    for _ in range(steps):
        gradient[1, s](xs, ys, w, g)
        comm.allreduce(g, op="sum", stream=s)     # in place, stream-ordered
        update[1, s](w, g, lr / n)
    s.synchronize()

    everyone = np.empty((size, d))
    comm.allgather(w, everyone, stream=s)
    s.synchronize()
    assert all(np.array_equal(everyone[r], w) for r in range(size)), everyone

    ref = np.zeros(d)
    for _ in range(steps):
        ref -= lr / n * (x.T @ (x @ ref - y))
    err = float(np.max(np.abs(w - ref)))
    if rank == 0:
        print(f"mpi_sgd: {size} ranks, {steps} steps, weights {np.round(w, 4)}, "
              f"max |w - numpy| = {err:.2e}")
    comm.destroy()
    if err > 1e-9:
        print(f"rank {rank}: weights differ from numpy by {err}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
