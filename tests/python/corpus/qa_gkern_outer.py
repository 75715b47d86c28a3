# Task described at https://stackoverflow.com/questions/29731726/how-to-calculate-a-gaussian-kernel-matrix-efficiently-in-numpy/29731818#29731818
# (a Q&A thread: a normalised 2-D Gaussian kernel as the outer product of a 1-D one).
# Written for this project from that description, not copied from the page;
# plain numpy, then `import asc` and the decorator added.
"""np.linspace, a 1-D Gaussian, np.outer(k, k) divided by its .sum()."""
import numpy as np

import asc


@asc.kernel
def gkern(kernlen, nsig):
    x = np.linspace(-nsig, nsig, kernlen)
    kern1d = np.exp(-0.5 * x**2)
    kern2d = np.outer(kern1d, kern1d)
    return kern2d / kern2d.sum()


def args():
    return 7, 2.5


KERNEL = gkern
