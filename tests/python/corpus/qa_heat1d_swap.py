# Task described at http://nbviewer.jupyter.org/github/numerical-mooc/numerical-mooc/blob/master/lessons/04_spreadout/04_01_Heat_Equation_1D_Explicit.ipynb
# (a course lesson: 1-D diffusion, forward time and centred space, boundaries held fixed).
# Written for this project from that description, not copied from the page;
# plain numpy, then `import asc` and the decorator added.
"""Two buffers: un[1:-1] = u[1:-1] + a*(u[2:] - 2*u[1:-1] + u[:-2]), then the names swapped through a temporary in the loop."""
import numpy as np

import asc


@asc.kernel
def diffuse_swap(u0, a, steps):
    u = u0.copy()
    un = u0.copy()
    for n in range(steps):
        un[1:-1] = u[1:-1] + a * (u[2:] - 2 * u[1:-1] + u[:-2])
        tmp = u
        u = un
        un = tmp
    return u


def args():
    u0 = np.zeros(30)
    u0[10:16] = 1.0
    return u0, 0.2, 25


KERNEL = diffuse_swap
