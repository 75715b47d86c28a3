# Task described at https://w3toppers.com/multiple-matrix-multiplication/
# (a Q&A answer: many matrices times many vectors, np.einsum('ijk,ik->ij')).
# Written for this project from that description, not copied from the page;
# plain numpy, then `import asc` and the decorator added.
"""np.einsum('ijk,ik->ij'), np.einsum('ii', m) and np.einsum('ij,ij->i') row dots."""
import numpy as np

import asc


@asc.kernel
def many_matvec(matrices, vectors, m):
    out = np.einsum('ijk,ik->ij', matrices, vectors)
    tr = np.einsum('ii', m)
    dots = np.einsum('ij,ij->i', vectors, vectors)
    return out, tr, dots


def args():
    rng = np.random.default_rng(20)
    return rng.random((4, 3, 3)), rng.random((4, 3)), rng.random((3, 3))


KERNEL = many_matvec
