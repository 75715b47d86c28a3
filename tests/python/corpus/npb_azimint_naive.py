# Ported from spcl/npbench (https://github.com/spcl/npbench),
# file npbench/benchmarks/azimint_naive/azimint_naive_numba_n.py at commit f2d7f27d87ba4881991e62c18a607aa6ba52b260.
# Licence of the source: BSD-3-Clause, Copyright (c) 2021, SPCL.
# Port: `@nb.jit(nopython=True, parallel=False, fastmath=True)` -> `@asc.kernel(fastmath=True)` on the entry point, `@asc.func(fastmath=True)` on the helpers it calls;
# no other change to the kernel's statements (retyped, comments ours).
"""Naive azimuthal integration: np.logical_and masks, a boolean gather, .mean() (npbench)."""
import numpy as np

import asc


@asc.kernel(fastmath=True)
def azimint_naive(data, radius, npt):
    rmax = radius.max()
    res = np.zeros(npt, dtype=np.float64)
    for i in range(npt):
        r1 = rmax * i / npt
        r2 = rmax * (i + 1) / npt
        mask_r12 = np.logical_and((r1 <= radius), (radius < r2))
        values_r12 = data[mask_r12]
        res[i] = values_r12.mean()
    return res


def args():
    rng = np.random.default_rng(23)
    return rng.random(200), rng.random(200), 10


KERNEL = azimint_naive
