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


@asc.kernel
def zscore(a):
    # the reductions inside the expression are made first, one pass each,
    # then read: no reduction loop inside the loops of the result
    return (a - a.mean(axis=0)) / a.std(axis=0)


@asc.kernel
def vmin(x):
    # numpy's min (a NaN wins) is one pmin, spread over vector lanes
    return np.min(x)
