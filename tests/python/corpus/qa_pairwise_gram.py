# Task described at https://github.com/GreenSnabl/CS231n-1
# (course notebook: distances as x^2 - 2xy + y^2 with one matrix product).
# Written for this project from that description, not copied from the page;
# plain numpy, then `import asc` and the decorator added.
"""Squared norms with np.square(...).sum(1), .reshape(-1, 1), x @ y.T, np.sqrt of np.maximum."""
import numpy as np

import asc


@asc.kernel
def dists(x, y):
    x2 = np.square(x).sum(1).reshape(-1, 1)
    y2 = np.square(y).sum(1)
    d2 = x2 - 2 * (x @ y.T) + y2
    return np.sqrt(np.maximum(d2, 0.0))


def args():
    rng = np.random.default_rng(12)
    return rng.random((6, 3)), rng.random((4, 3))


KERNEL = dists
