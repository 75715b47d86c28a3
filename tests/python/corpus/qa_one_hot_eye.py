# Task described at https://syntaxfix.com/question/5802/convert-array-of-indices-to-1-hot-encoded-numpy-array
# (a Q&A thread: one-hot rows by indexing an identity matrix with the labels).
# Written for this project from that description, not copied from the page;
# plain numpy, then `import asc` and the decorator added.
"""np.max(x) + 1 as the class count, np.eye(n)[x] (rows gathered by an int array), a helper returning it."""
import numpy as np

import asc


@asc.func
def onehottify(x, n):
    return np.eye(n)[x]


@asc.kernel
def encode(labels):
    n = np.max(labels) + 1
    return onehottify(labels, n)


def args():
    return (np.array([2, 0, 1, 1, 4, 0]),)


KERNEL = encode
