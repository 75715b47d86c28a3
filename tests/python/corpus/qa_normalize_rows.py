# Task described at https://py4u.org/questions/8904694/
# (a Q&A thread: normalise the rows of a 2-D array to sum 1, or to unit length).
# Written for this project from that description, not copied from the page;
# plain numpy, then `import asc` and the decorator added.
"""np.add.reduce(a, axis=1)[:, np.newaxis] divides, np.linalg.norm(axis=-1)[:, None], w *= 1.0 / w.sum(1, keepdims=True) in place."""
import numpy as np

import asc


@asc.kernel
def normalise(a, w):
    row_sums = np.add.reduce(a, axis=1)
    l1 = a / row_sums[:, np.newaxis]
    l2 = a / np.linalg.norm(a, axis=-1)[:, np.newaxis]
    w *= 1.0 / w.sum(1, keepdims=True)
    return l1, l2


def args():
    return np.arange(0.0, 27.0, 3.0).reshape(3, 3) + 1.0, np.arange(1.0, 13.0).reshape(3, 4)


KERNEL = normalise
