# Task described at http://nbviewer.jupyter.org/github/numerical-mooc/numerical-mooc/blob/master/lessons/04_spreadout/04_01_Heat_Equation_1D_Explicit.ipynb
# (a course lesson: 1-D diffusion, forward time and centred space, boundaries held fixed).
# Written for this project from that description, not copied from the page;
# plain numpy, then `import asc` and the decorator added.
"""A time loop: Ttemp = T + a*(np.roll(T, 1) + np.roll(T, -1) - 2*T), T[do_me] = Ttemp[do_me] (a mask made by np.ones_like(dtype=bool))."""
import numpy as np

import asc


@asc.kernel
def diffuse(T0, a, steps):
    T = T0.copy()
    do_me = np.ones_like(T0, dtype=np.bool_)
    do_me[0] = False
    do_me[-1] = False
    for i in range(steps):
        Ttemp = T + a * (np.roll(T, 1) + np.roll(T, -1) - 2 * T)
        T[do_me] = Ttemp[do_me]
    return T


def args():
    x = np.linspace(0.0, 1.0, 41)
    return np.where(np.abs(x - 0.4) < 0.1, 1.0, 0.0), 0.25, 30


KERNEL = diffuse
