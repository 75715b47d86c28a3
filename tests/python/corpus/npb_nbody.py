# Ported from spcl/npbench (https://github.com/spcl/npbench),
# file npbench/benchmarks/nbody/nbody_numba_n.py at commit f2d7f27d87ba4881991e62c18a607aa6ba52b260.
# Licence of the source: BSD-3-Clause, Copyright (c) 2021, SPCL.
# Port: `@nb.jit(nopython=True, parallel=False, fastmath=True)` -> `@asc.kernel(fastmath=True)` on the entry point, `@asc.func(fastmath=True)` on the helpers it calls;
# no other change to the kernel's statements (retyped, comments ours).
"""N-body simulation (Philip Mocz, 2020, as adapted by npbench): .T broadcasting, masked power, @, np.hstack, np.triu, tuple returns."""
import numpy as np

import asc


@asc.func(fastmath=True)
def getAcc(pos, mass, G, softening):
    """Accelerations from Newton's law of gravity: pos is N x 3, mass N x 1."""
    # positions r = [x, y, z] of all particles, as column vectors
    x = pos[:, 0:1]
    y = pos[:, 1:2]
    z = pos[:, 2:3]

    # pairwise separations r_j - r_i
    dx = x.T - x
    dy = y.T - y
    dz = z.T - z

    # 1 / r^3 of every pair
    inv_r3 = (dx**2 + dy**2 + dz**2 + softening**2)
    I = inv_r3 > 0
    for i in range(I.shape[0]):
        for j in range(I.shape[1]):
            if I[i, j]:
                inv_r3[i, j] **= -1.5

    ax = G * (dx * inv_r3) @ mass
    ay = G * (dy * inv_r3) @ mass
    az = G * (dz * inv_r3) @ mass

    a = np.hstack((ax, ay, az))

    return a


@asc.func(fastmath=True)
def getEnergy(pos, vel, mass, G):
    """Kinetic and potential energy of the system."""
    KE = 0.5 * np.sum(mass * vel**2)

    x = pos[:, 0:1]
    y = pos[:, 1:2]
    z = pos[:, 2:3]

    dx = x.T - x
    dy = y.T - y
    dz = z.T - z

    # 1 / r of every pair
    inv_r = np.sqrt(dx**2 + dy**2 + dz**2)
    I = inv_r > 0
    for i in range(I.shape[0]):
        for j in range(I.shape[1]):
            if I[i, j]:
                inv_r[i, j] = 1.0 / inv_r[i, j]

    # the upper triangle counts each pair once
    PE = G * np.sum(np.triu(-(mass * mass.T) * inv_r, 1))

    return KE, PE


@asc.kernel(fastmath=True)
def nbody(mass, pos, vel, N, Nt, dt, G, softening):
    # to the centre-of-mass frame
    vel -= (np.sum(mass * vel, axis=0) / vel.shape[0]) / np.mean(mass)

    acc = getAcc(pos, mass, G, softening)

    KE = np.empty(Nt + 1, dtype=np.float64)
    PE = np.empty(Nt + 1, dtype=np.float64)
    KE[0], PE[0] = getEnergy(pos, vel, mass, G)

    t = 0.0

    # leapfrog: kick, drift, kick
    for i in range(Nt):
        vel += acc * dt / 2.0
        pos += vel * dt
        acc = getAcc(pos, mass, G, softening)
        vel += acc * dt / 2.0
        t += dt
        KE[i + 1], PE[i + 1] = getEnergy(pos, vel, mass, G)

    return KE, PE


def args():
    rng = np.random.default_rng(42)
    n = 8
    return 20.0 * np.ones((n, 1)) / n, rng.random((n, 3)), rng.random((n, 3)), n, 3, 0.01, 1.0, 0.1


KERNEL = nbody
