# Task described at https://newbetuts.com/2169478-how-to-make-a-checkerboard-in-numpy
# (a Q&A thread: a checkerboard of squares of side sq, built from small blocks).
# Written for this project from that description, not copied from the page;
# plain numpy, then `import asc` and the decorator added.
"""np.array([[0, 1], [1, 0]]) (a list literal), np.tile(block, (n, n)), np.repeat twice."""
import numpy as np

import asc


@asc.kernel
def board(n, sq):
    block = np.array([[0, 1], [1, 0]])
    cells = np.tile(block, (n // 2, n // 2))
    return np.repeat(np.repeat(cells, sq, axis=0), sq, axis=1)


def args():
    return 6, 2


KERNEL = board
