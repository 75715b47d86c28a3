# Ported from spcl/npbench (https://github.com/spcl/npbench),
# file npbench/benchmarks/mandelbrot2/mandelbrot2_numba_n.py at commit f2d7f27d87ba4881991e62c18a607aa6ba52b260.
# Licence of the source: BSD-3-Clause, Copyright (c) 2021, SPCL.
# Port: `@nb.jit(nopython=True, parallel=False, fastmath=True)` -> `@asc.kernel(fastmath=True)` on the entry point, `@asc.func(fastmath=True)` on the helpers it calls;
# no other change to the kernel's statements (retyped, comments ours).
"""Mandelbrot set keeping only the points that have not diverged: boolean compaction, np.multiply/np.add with out, .T (npbench)."""
import numpy as np

import asc


@asc.func(fastmath=True)
def mgrid(xn, yn):
    Xi = np.empty((xn, yn), dtype=np.int64)
    Yi = np.empty((xn, yn), dtype=np.int64)
    for i in range(xn):
        Xi[i, :] = i
    for j in range(yn):
        Yi[:, j] = j
    return Xi, Yi

@asc.func(fastmath=True)
def linspace(start, stop, num, dtype):
    X = np.empty((num, ), dtype=dtype)
    dist = (stop - start) / (num - 1)
    for i in range(num):
        X[i] = start + i * dist
    return X


@asc.kernel(fastmath=True)
def mandelbrot(xmin, xmax, ymin, ymax, xn, yn, itermax, horizon=2.0):
    # after thesamovar's "Fast fractals with Python and numpy" (cited by the source)
    Xi, Yi = mgrid(xn, yn)
    X = linspace(xmin, xmax, xn, dtype=np.float64)
    Y = linspace(ymin, ymax, yn, dtype=np.float64)
    C = np.reshape(X, (xn, 1)) + Y * 1j
    N_ = np.zeros(C.shape, dtype=np.int64)
    Z_ = np.zeros(C.shape, dtype=np.complex128)
    Xi = np.reshape(Xi, (xn * yn))
    Yi = np.reshape(Yi, (xn * yn))
    C = np.reshape(C, (xn * yn))

    Z = np.zeros(C.shape, np.complex128)
    for i in range(itermax):
        if not len(Z):
            break

        # only the points still iterating
        np.multiply(Z, Z, Z)
        np.add(Z, C, Z)

        # those that diverge now
        I = np.absolute(Z) > horizon
        for j in range(I.shape[0]):
            if I[j]:
                N_[Xi[j], Yi[j]] = i + 1
        for j in range(I.shape[0]):
            if I[j]:
                Z_[Xi[j], Yi[j]] = Z[j]

        # drop them
        np.logical_not(I, I)
        Z = Z[I]
        Xi, Yi = Xi[I], Yi[I]
        C = C[I]
    return Z_.T, N_.T


def args():
    return -2.0, 0.5, -1.25, 1.25, 10, 12, 20


KERNEL = mandelbrot
