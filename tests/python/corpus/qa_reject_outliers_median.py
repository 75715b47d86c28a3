# Task described at https://stackoverflow.com/questions/11686720/is-there-a-numpy-builtin-to-reject-outliers-from-a-list
# (a Q&A thread: drop the points far from the median, scaled by the median deviation).
# Written for this project from that description, not copied from the page;
# plain numpy, then `import asc` and the decorator added.
"""np.abs(data - np.median(data)), a conditional expression on a number, data[s < m] (a masked result)."""
import numpy as np

import asc


@asc.kernel
def reject_outliers(data, m):
    d = np.abs(data - np.median(data))
    mdev = np.median(d)
    s = d / (mdev if mdev else 1.0)
    return data[s < m]


def args():
    return np.array([2.0, 4.0, 5.0, 1.0, 6.0, 5.0, 40.0, 3.0, -20.0]), 2.0


KERNEL = reject_outliers
