# Task described at https://stackoverflow.com/questions/32846846/quick-way-to-upsample-numpy-array-by-nearest-neighbor-tiling
# (a Q&A thread: repeat each element of a 2-D array as a B x B block).
# Written for this project from that description, not copied from the page;
# plain numpy, then `import asc` and the decorator added.
"""a.repeat(B, axis=0).repeat(B, axis=1) (method calls), np.repeat, np.tile of a row."""
import numpy as np

import asc


@asc.kernel
def upsample(a, B):
    up = a.repeat(B, axis=0).repeat(B, axis=1)
    up2 = np.repeat(np.repeat(a, 2, axis=0), 3, axis=1)
    row = np.tile(a[0], 3)
    return up, up2, row


def args():
    return np.arange(9).reshape(3, 3), 2


KERNEL = upsample
