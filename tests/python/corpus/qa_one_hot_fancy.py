# Task described at https://newbe.dev/convert-array-of-indices-to-1-hot-encoded-numpy-array
# (a Q&A thread: one-hot rows from an array of class indices).
# Written for this project from that description, not copied from the page;
# plain numpy, then `import asc` and the decorator added.
"""np.zeros((a.size, a.max() + 1)) and b[np.arange(a.size), a] = 1 (two index arrays in one subscript)."""
import numpy as np

import asc


@asc.kernel
def one_hot(a):
    b = np.zeros((a.size, a.max() + 1))
    b[np.arange(a.size), a] = 1
    return b


def args():
    return (np.array([1, 0, 3, 2, 3]),)


KERNEL = one_hot
