# Task described at https://statisticalpoint.com/numpy-most-frequent-value
# (a tutorial: the most frequent value(s) of an array with np.unique(return_counts=True)).
# Written for this project from that description, not copied from the page;
# plain numpy, then `import asc` and the decorator added.
"""values, counts = np.unique(a, return_counts=True); values[counts.argmax()]; values[counts == counts.max()]."""
import numpy as np

import asc


@asc.kernel
def mode(my_array):
    values, counts = np.unique(my_array, return_counts=True)
    first = values[counts.argmax()]
    every = values[counts == counts.max()]
    return first, every, np.unique(my_array)


def args():
    return (np.array([1, 2, 4, 4, 4, 5, 6, 7, 12, 12, 12]),)


KERNEL = mode
