# Task described at https://scipython.com/book/chapter-6-numpy/examples/creating-a-rotation-matrix-in-numpy/
# (a book example: a 2-D rotation matrix as a numpy array built from cos and sin).
# Written for this project from that description, not copied from the page;
# plain numpy, then `import asc` and the decorator added.
"""np.array(((c, -s), (s, c))) of scalars, np.array([[c, s], [-s, c]]), np.radians, points @ R.T, R @ R^-1."""
import numpy as np

import asc


@asc.kernel
def rotate(points, degrees):
    theta = np.radians(degrees)
    c, s = np.cos(theta), np.sin(theta)
    R = np.array(((c, -s), (s, c)))
    R_inv = np.array([[c, s], [-s, c]])
    return points @ R.T, R @ R_inv


def args():
    return np.array([[1.0, 0.0], [0.0, 1.0], [2.0, 3.0], [-1.0, 0.5]]), 30.0


KERNEL = rotate
