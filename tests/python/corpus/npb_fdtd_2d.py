# Ported from spcl/npbench (https://github.com/spcl/npbench),
# file npbench/benchmarks/polybench/fdtd_2d/fdtd_2d_numba_n.py at commit f2d7f27d87ba4881991e62c18a607aa6ba52b260.
# Licence of the source: BSD-3-Clause, Copyright (c) 2021, SPCL.
# Port: `@nb.jit(nopython=True, parallel=False, fastmath=True)` -> `@asc.kernel(fastmath=True)` on the entry point, `@asc.func(fastmath=True)` on the helpers it calls;
# no other change to the kernel's statements (retyped, comments ours).
"""FDTD 2-d: shifted-slice stencils with in-place -= (polybench)."""
import numpy as np

import asc


@asc.kernel(fastmath=True)
def kernel(TMAX, ex, ey, hz, _fict_):
    for t in range(TMAX):
        ey[0, :] = _fict_[t]
        ey[1:, :] -= 0.5 * (hz[1:, :] - hz[:-1, :])
        ex[:, 1:] -= 0.5 * (hz[:, 1:] - hz[:, :-1])
        hz[:-1, :-1] -= 0.7 * (ex[:-1, 1:] - ex[:-1, :-1] +
                               ey[1:, :-1] - ey[:-1, :-1])


def args():
    rng = np.random.default_rng(21)
    return 4, rng.random((6, 7)), rng.random((6, 7)), rng.random((6, 7)), np.arange(4.0)


KERNEL = kernel
