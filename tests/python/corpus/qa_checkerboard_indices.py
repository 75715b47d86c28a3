# Task described at https://newbetuts.com/2169478-how-to-make-a-checkerboard-in-numpy
# (a Q&A thread: a checkerboard array without Python loops).
# Written for this project from that description, not copied from the page;
# plain numpy, then `import asc` and the decorator added.
"""np.indices(shape).sum(axis=0) % 2 in a helper whose shape parameter has a tuple default."""
import numpy as np

import asc


@asc.func
def checkerboard(shape=(4, 6)):
    return np.indices(shape).sum(axis=0) % 2


@asc.kernel
def boards(n):
    return checkerboard(), checkerboard((n, n, 2))


def args():
    return (3,)


KERNEL = boards
