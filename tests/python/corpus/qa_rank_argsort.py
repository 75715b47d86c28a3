# Task described at https://www.berkayantmen.com/rank.html
# (a blog post: the rank of each element as argsort of argsort).
# Written for this project from that description, not copied from the page;
# plain numpy, then `import asc` and the decorator added.
"""array.argsort().argsort() as methods, np.argsort(np.argsort(m, axis=1), axis=1), np.sort."""
import numpy as np

import asc


@asc.kernel
def ranks(nums, m):
    r = nums.argsort().argsort()
    row_ranks = np.argsort(np.argsort(m, axis=1), axis=1)
    return r, row_ranks, np.sort(m, axis=0)


def args():
    return np.array([3, 5, 0, 10, 7]), np.array([[9, 4, 15, 0, 18], [16, 19, 8, 10, 1]])


KERNEL = ranks
