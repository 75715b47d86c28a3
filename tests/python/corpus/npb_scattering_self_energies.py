# Ported from spcl/npbench (https://github.com/spcl/npbench),
# file npbench/benchmarks/scattering_self_energies/scattering_self_energies_numba_n.py at commit f2d7f27d87ba4881991e62c18a607aa6ba52b260.
# Licence of the source: BSD-3-Clause, Copyright (c) 2021, SPCL.
# Port: `@nb.jit(nopython=True, parallel=False, fastmath=True)` -> `@asc.kernel(fastmath=True)` on the entry point, `@asc.func(fastmath=True)` on the helpers it calls;
# no other change to the kernel's statements (retyped, comments ours).
"""Scattering self-energies (OMEN): complex128 matrix products of sub-arrays in an 8-deep loop nest (npbench)."""
import numpy as np

import asc


@asc.kernel(fastmath=True)
def scattering_self_energies(neigh_idx, dH, G, D, Sigma):
    for k in range(G.shape[0]):
        for E in range(G.shape[1]):
            for q in range(D.shape[0]):
                for w in range(D.shape[1]):
                    for i in range(D.shape[-2]):
                        for j in range(D.shape[-1]):
                            for a in range(neigh_idx.shape[0]):
                                for b in range(neigh_idx.shape[1]):
                                    if E - w >= 0:
                                        dHG = G[k, E - w, neigh_idx[a, b]] @ dH[a, b, i]
                                        dHD = dH[a, b, j] * D[q, w, a, b, i, j]
                                        Sigma[k, E, a] += dHG @ dHD


def args():
    rng = np.random.default_rng(42)
    c = lambda shape: rng.random(shape) + rng.random(shape) * 1j
    Nkz, NE, Nqz, Nw, N3D, NA, NB, Norb = 2, 3, 2, 2, 2, 3, 2, 2
    neigh_idx = np.empty((NA, NB), dtype=np.int32)
    for i in range(NA):
        neigh_idx[i] = np.positive(np.arange(i - NB / 2, i + NB / 2) % NA)
    return (neigh_idx, c((NA, NB, N3D, Norb, Norb)), c((Nkz, NE, NA, Norb, Norb)),
            c((Nqz, Nw, NA, NB, N3D, N3D)), np.zeros((Nkz, NE, NA, Norb, Norb), np.complex128))


KERNEL = scattering_self_energies
