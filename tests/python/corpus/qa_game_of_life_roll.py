# Task described at https://github.com/wlhays/python_examples
# (a notebook explaining a toroidal Game of Life step that counts neighbours with np.roll).
# Written for this project from that description, not copied from the page;
# plain numpy, then `import asc` and the decorator added.
"""sum() of a generator expression of np.roll(np.roll(X, i, 0), j, 1) over tuples with an if, & and | of masks."""
import numpy as np

import asc


@asc.kernel
def life_step(X):
    nbrs_count = sum(np.roll(np.roll(X, i, 0), j, 1)
                     for i in (-1, 0, 1) for j in (-1, 0, 1)
                     if (i != 0 or j != 0))
    return (nbrs_count == 3) | (X & (nbrs_count == 2))


def args():
    X = np.zeros((8, 8), dtype=np.int64)
    X[1, 2] = X[2, 3] = X[3, 1] = X[3, 2] = X[3, 3] = 1
    return (X,)


KERNEL = life_step
