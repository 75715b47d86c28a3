# Ported from spcl/npbench (https://github.com/spcl/npbench),
# file npbench/benchmarks/stockham_fft/stockham_fft_numba_n.py at commit f2d7f27d87ba4881991e62c18a607aa6ba52b260.
# Licence of the source: BSD-3-Clause, Copyright (c) 2021, SPCL.
# Port: `@nb.jit(nopython=True, parallel=False, fastmath=True)` -> `@asc.kernel(fastmath=True)` on the entry point, `@asc.func(fastmath=True)` on the helpers it calls;
# no other change to the kernel's statements (retyped, comments ours).
"""Stockham FFT: complex exponentials of index grids, reshape/transpose views, a DFT matrix product (npbench)."""
import numpy as np

import asc


@asc.func(fastmath=True)
def mgrid(xn, yn):
    Xi = np.empty((xn, yn), dtype=np.uint32)
    Yi = np.empty((xn, yn), dtype=np.uint32)
    for i in range(xn):
        Xi[i, :] = i
    for j in range(yn):
        Yi[:, j] = j
    return Xi, Yi


@asc.kernel(fastmath=True)
def stockham_fft(N, R, K, x, y):
    # the R x R DFT matrix
    i_coord, j_coord = mgrid(R, R)
    dft_mat = np.empty((R, R), dtype=np.complex128)
    dft_mat = np.exp(-2.0j * np.pi * i_coord * j_coord / R)
    y[:] = x[:]
    ii_coord, jj_coord = mgrid(R, R**K)
    # K radix-R steps
    for i in range(K):
        # permute
        yv = np.reshape(y, (R**i, R, R**(K - i - 1)))
        tmp_perm = np.transpose(yv, axes=(1, 0, 2)).copy()
        # twiddle factors
        D = np.empty((R, R**i, R**(K - i - 1)), dtype=np.complex128)
        tmp = np.exp(-2.0j * np.pi * ii_coord[:, :R**i] * jj_coord[:, :R**i] / R**(i + 1))
        for k in range(R**(K - i - 1)):
            D[:, :, k] = tmp
        tmp_twid = np.reshape(tmp_perm, (N, )) * np.reshape(D, (N, ))
        # the DFT of each group
        y[:] = np.reshape(dft_mat @ np.reshape(tmp_twid, (R, R**(K - 1))), (N, ))


def args():
    rng = np.random.default_rng(42)
    R, K = 2, 3
    N = R**K
    return N, R, K, rng.random(N) + rng.random(N) * 1j, np.zeros(N, np.complex128)


KERNEL = stockham_fft
