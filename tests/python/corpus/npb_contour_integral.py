# Ported from spcl/npbench (https://github.com/spcl/npbench),
# file npbench/benchmarks/contour_integral/contour_integral_numba_n.py at commit f2d7f27d87ba4881991e62c18a607aa6ba52b260.
# Licence of the source: BSD-3-Clause, Copyright (c) 2021, SPCL.
# Port: `@nb.jit(nopython=True, parallel=False, fastmath=True)` -> `@asc.kernel(fastmath=True)` on the entry point, `@asc.func(fastmath=True)` on the helpers it calls;
# no other change to the kernel's statements (retyped, comments ours).
"""Contour integral over complex points: complex128 temporaries, np.power, np.linalg.solve/inv (npbench)."""
import numpy as np

import asc


@asc.kernel(fastmath=True)
def contour_integral(NR, NM, slab_per_bc, Ham, int_pts, Y):
    P0 = np.zeros((NR, NM), dtype=np.complex128)
    P1 = np.zeros((NR, NM), dtype=np.complex128)
    for z in int_pts:
        Tz = np.zeros((NR, NR), dtype=np.complex128)
        for n in range(slab_per_bc + 1):
            zz = np.power(z, slab_per_bc / 2 - n)
            Tz += zz * Ham[n]
        if NR == NM:
            X = np.linalg.inv(Tz)
        else:
            X = np.linalg.solve(Tz, Y)
        if abs(z) < 1.0:
            X = -X
        P0 += X
        P1 += z * X
    return P0, P1


def args():
    rng = np.random.default_rng(25)
    c = lambda shape: rng.random(shape) + rng.random(shape) * 1j
    return 4, 3, 2, c((3, 4, 4)), c((5, )), c((4, 3))


KERNEL = contour_integral
