# Ported from numba/numba-examples (https://github.com/numba/numba-examples),
# file examples/physics/lennard_jones/numba_scalar_impl.py.
# Licence of the source: BSD-2-Clause, Copyright (c) 2017, Numba.
# Port: `@numba.njit` -> `@asc.kernel` on the entry point, `@asc.func` on the helpers;
# no other change to the kernel's statements (retyped, comments ours).
"""Lennard-Jones potential energy of a cluster, scalar loops over atom pairs; returns a float (numba-examples)."""
import numpy as np  # the runner's inputs; the source imports only numba

import asc


@asc.func
def lj_numba_scalar(r):
    sr6 = (1. / r)**6
    pot = 4. * (sr6 * sr6 - sr6)
    return pot


@asc.func
def distance_numba_scalar(atom1, atom2):
    dx = atom2[0] - atom1[0]
    dy = atom2[1] - atom1[1]
    dz = atom2[2] - atom1[2]

    r = (dx * dx + dy * dy + dz * dz) ** 0.5

    return r


@asc.kernel
def potential_numba_scalar(cluster):
    energy = 0.0
    for i in range(len(cluster) - 1):
        for j in range(i + 1, len(cluster)):
            r = distance_numba_scalar(cluster[i], cluster[j])
            e = lj_numba_scalar(r)
            energy += e

    return energy


def args():
    rng = np.random.default_rng(38)
    return (rng.random((10, 3)) * 4.0,)


KERNEL = potential_numba_scalar
