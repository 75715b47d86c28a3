# Task described at https://lightform-group.github.io/wiki/software_and_simulation/matrix-multiplication
# (a notebook page: products of stacks of matrices and vectors with numpy).
# Written for this project from that description, not copied from the page;
# plain numpy, then `import asc` and the decorator added.
"""N-D @: (2, 3, 2, 4) @ (4, 5), (3, 2, 4) @ (3, 4, 2) and a stack @ vector; np.matmul of the same."""
import numpy as np

import asc


@asc.kernel
def stacks(a, b, c, v):
    return a @ b, np.matmul(c, np.transpose(c, (0, 2, 1))), c @ v


def args():
    rng = np.random.default_rng(21)
    return rng.random((2, 3, 2, 4)), rng.random((4, 5)), rng.random((3, 2, 4)), rng.random(4)


KERNEL = stacks
