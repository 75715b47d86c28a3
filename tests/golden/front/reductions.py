import numpy as np
import asc


@asc.kernel
def dot(x, y):
    # two vectors of one length (checked): each read with its own stride
    return np.dot(x, y)


@asc.kernel
def bsum(a, b):
    # a and b broadcast: each axis of size 1 of either is read with stride 0
    return (a + b).sum(axis=1)
