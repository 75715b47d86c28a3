# Task described at http://infohost.nmt.edu/~shipman/soft/numpy/web/linalg.html
# (a reference guide: det, inv, norm and solve on small systems).
# Written for this project from that description, not copied from the page;
# plain numpy, then `import asc` and the decorator added.
"""np.linalg.det, np.linalg.inv, np.linalg.solve, np.linalg.norm (Frobenius), inv @ b against solve."""
import numpy as np

import asc


@asc.kernel
def linsys(m, good, coeffs, consts):
    d = np.linalg.det(m)
    inv = np.linalg.inv(good)
    x = np.linalg.solve(coeffs, consts)
    x2 = np.linalg.inv(coeffs) @ consts
    return d, inv, np.linalg.norm(good), x, x2


def args():
    return (np.array([[2.0, 3.0], [-1.0, -2.0]]), np.array([[2.1, 3.2], [4.3, 5.4]]),
            np.array([[2.0, 1.0], [1.0, -2.0]]), np.array([19.0, 2.0]))


KERNEL = linsys
