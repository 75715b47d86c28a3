# Task described at https://github.com/RandolphYang97/Simulation-Bootstrap-Shrinkage
# (a notebook: normal draws with a given covariance through a Cholesky factor, checked by np.cov).
# Written for this project from that description, not copied from the page;
# plain numpy, then `import asc` and the decorator added.
"""np.linalg.cholesky(V0), np.matmul(L, e) per draw into a preallocated array, np.cov(Z.T), np.corrcoef."""
import numpy as np

import asc


@asc.kernel
def correlated(V0, E):
    L = np.linalg.cholesky(V0)
    n = E.shape[0]
    Z = np.ones((n, 3))
    for i in range(n):
        Y = np.matmul(L, E[i])
        Z[i, :] = Y.T
    return np.cov(Z.T), np.corrcoef(Z.T), np.median(Z[:, 0])


def args():
    rng = np.random.default_rng(29)
    V0 = np.array([[1.0, 0.1, 0.3], [0.1, 2.0, 0.5], [0.3, 0.5, 3.0]])
    return V0, rng.standard_normal((40, 3))


KERNEL = correlated
