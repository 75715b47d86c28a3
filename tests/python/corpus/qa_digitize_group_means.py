# Task described at https://docs.scipy.org/doc/numpy-1.7.0/reference/generated/numpy.digitize.html
# (a reference page's worked example: which bin each value falls in, right= both ways).
# Written for this project from that description, not copied from the page;
# plain numpy, then `import asc` and the decorator added.
"""np.digitize both ways, then per-bin means with np.bincount(weights=, minlength=) and np.maximum."""
import numpy as np

import asc


@asc.kernel
def group_means(x, bins):
    left = np.digitize(x, bins)
    right = np.digitize(x, bins, right=True)
    nb = len(bins) + 1
    sums = np.bincount(left, weights=x, minlength=nb)
    counts = np.bincount(left, minlength=nb)
    means = sums / np.maximum(counts, 1)
    return left, right, means


def args():
    return np.array([1.2, 10.0, 12.4, 15.5, 20.0, 0.2, 6.4, 3.0]), np.array([0.0, 5.0, 10.0, 15.0, 20.0])


KERNEL = group_means
