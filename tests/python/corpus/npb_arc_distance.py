# Ported from spcl/npbench (https://github.com/spcl/npbench),
# file npbench/benchmarks/pythran/arc_distance/arc_distance_numba_n.py at commit f2d7f27d87ba4881991e62c18a607aa6ba52b260.
# Licence of the source: BSD-3-Clause, Copyright (c) 2021, SPCL.
# Port: `@nb.jit(nopython=True, parallel=False, fastmath=True)` -> `@asc.kernel(fastmath=True)` on the entry point, `@asc.func(fastmath=True)` on the helpers it calls;
# no other change to the kernel's statements (retyped, comments ours).
"""Arc distance between point pairs (a pythran benchmark): whole-array trigonometry, returned (npbench)."""
import numpy as np

import asc


@asc.kernel(fastmath=True)
def arc_distance(theta_1, phi_1, theta_2, phi_2):
    """Pairwise arc distance of the points in two vectors."""
    temp = (np.sin((theta_2 - theta_1) / 2)**2 +
            np.cos(theta_1) * np.cos(theta_2) * np.sin((phi_2 - phi_1) / 2)**2)
    distance_matrix = 2 * (np.arctan2(np.sqrt(temp), np.sqrt(1 - temp)))
    return distance_matrix


def args():
    rng = np.random.default_rng(34)
    return tuple(rng.random(10) for _ in range(4))


KERNEL = arc_distance
