# Task described at https://codedump.io/share/zuJuQGqgeb1d/1/applying-a-disc-shaped-mask-to-several-locations-in-a-numpy-array
# (a Q&A thread: a boolean mask of discs of radius r around several centres).
# Written for this project from that description, not copied from the page;
# plain numpy, then `import asc` and the decorator added.
"""y, x = np.ogrid[-a:n-a, -b:n-b] (open grids broadcast), mask |= x*x + y*y <= r*r in a loop."""
import numpy as np

import asc


@asc.kernel
def disc_masks(centers, n, r):
    mask = np.zeros((n, n), dtype=np.bool_)
    for i in range(centers.shape[0]):
        a = centers[i, 0]
        b = centers[i, 1]
        y, x = np.ogrid[-a:n - a, -b:n - b]
        mask |= x * x + y * y <= r * r
    return mask


def args():
    return np.array([[1, 1], [7, 2], [2, 8]]), 10, 2


KERNEL = disc_masks
