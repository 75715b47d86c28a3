# Task described at https://stackoverflow.com/questions/25534440/how-to-perform-a-rolling-sum-along-a-matrix-axis
# (a Q&A thread: a rolling sum with lag H along the rows of a T x k matrix).
# Written for this project from that description, not copied from the page;
# plain numpy, then `import asc` and the decorator added.
"""Loop of np.sum(X[t-H:t, :], axis=0) and the same from np.cumsum(axis=0) and np.concatenate."""
import numpy as np

import asc


@asc.kernel
def rolling(X, H):
    T, k = X.shape
    Xcum = np.zeros((T - H, k))
    for t in range(H, T):
        Xcum[t - H, :] = np.sum(X[t - H:t, :], axis=0)
    c = np.concatenate((np.zeros((1, k)), np.cumsum(X, axis=0)), axis=0)
    fast = c[H:T] - c[0:T - H]
    return Xcum, fast


def args():
    T, k = 12, 3
    return np.arange(T).reshape(T, 1) * np.ones((T, k)), 4


KERNEL = rolling
