# Task described at https://errorhandle.ai/batch-matrix-multiplication-in-numpy
# (a Q&A answer: a batch of matrix products with np.einsum('ijk,ikl->ijl')).
# Written for this project from that description, not copied from the page;
# plain numpy, then `import asc` and the decorator added.
"""np.einsum('ijk,ikl->ijl', a, b) and the same batch as a 3-D a @ b."""
import numpy as np

import asc


@asc.kernel
def bmm(a, b):
    return np.einsum('ijk,ikl->ijl', a, b), a @ b


def args():
    rng = np.random.default_rng(19)
    return rng.random((3, 2, 5)), rng.random((3, 5, 4))


KERNEL = bmm
