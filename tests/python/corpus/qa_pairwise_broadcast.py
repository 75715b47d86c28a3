# Task described at https://jbencook.com/pairwise-distance-in-numpy/
# (a blog post: the distance matrix of two point sets by broadcasting).
# Written for this project from that description, not copied from the page;
# plain numpy, then `import asc` and the decorator added.
"""Pairwise distances: a[:, None, :] - b[None, :, :] (3-D broadcast), np.linalg.norm(axis=-1)."""
import numpy as np

import asc


@asc.kernel
def distance_matrix(a, b):
    diff = a[:, None, :] - b[None, :, :]
    return np.linalg.norm(diff, axis=-1)


def args():
    rng = np.random.default_rng(11)
    return rng.random((5, 2)), rng.random((4, 2))


KERNEL = distance_matrix
