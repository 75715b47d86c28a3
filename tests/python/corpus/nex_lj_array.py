# Ported from numba/numba-examples (https://github.com/numba/numba-examples),
# file examples/physics/lennard_jones/numba_array_impl.py.
# Licence of the source: BSD-2-Clause, Copyright (c) 2017, Numba.
# Port: `@numba.njit` -> `@asc.kernel` on the entry point, `@asc.func` on the helpers;
# no other change to the kernel's statements (retyped, comments ours).
"""Lennard-Jones potential energy, array style: .reshape broadcasting, np.ndindex, .sum(), np.sqrt of an array, .flat (numba-examples)."""
import numpy as np

import asc


@asc.func
def lj_numba_array(r):
    sr6 = (1. / r)**6
    pot = 4. * (sr6 * sr6 - sr6)
    return pot


@asc.func
def distances_numba_array(cluster):
    # the source's stand-in for cluster[:, np.newaxis, :] - cluster[np.newaxis, :, :]
    diff = (cluster.reshape(cluster.shape[0], 1, cluster.shape[1]) -
            cluster.reshape(1, cluster.shape[0], cluster.shape[1]))
    mat = (diff * diff)
    # and for mat.sum(-1)
    out = np.empty(mat.shape[:2], dtype=mat.dtype)
    for i in np.ndindex(out.shape):
        out[i] = mat[i].sum()

    return np.sqrt(out)


@asc.kernel
def potential_numba_array(cluster):
    d = distances_numba_array(cluster)
    # zero the lower triangle (the source's stand-in for np.triu)
    for i in range(d.shape[0]):
        for j in range(d.shape[1]):
            if i > j:
                d[i, j] = 0
    # the source's stand-in for lj_numba_array(d[d > 1e-6]).sum()
    energy = 0.0
    for v in d.flat:
        if v > 1e-6:
            energy += lj_numba_array(v)
    return energy


def args():
    rng = np.random.default_rng(38)
    return (rng.random((10, 3)) * 4.0,)


KERNEL = potential_numba_array
