# Task described at https://publish.obsidian.md/nicam/Python+Tips/pairwise+distance+problem
# (a notes page: M[i, j] = X[i] - X[j] without loops).
# Written for this project from that description, not copied from the page;
# plain numpy, then `import asc` and the decorator added.
"""X[:, np.newaxis] - X[np.newaxis, :], then np.triu(k=1), np.tril, np.diag and np.trace of the pairwise table."""
import numpy as np

import asc


@asc.kernel
def pair_stats(X):
    M = X[:, np.newaxis] - X[np.newaxis, :]
    n = X.shape[0]
    upper = np.triu(np.abs(M), k=1)
    mean_gap = upper.sum() / (n * (n - 1) / 2)
    energy = np.trace(M @ M.T)
    sq_norms = np.diag(M @ M.T)
    antisym = np.tril(M, k=-1) + np.triu(M, k=1).T
    return M, mean_gap, energy, sq_norms, antisym


def args():
    rng = np.random.default_rng(13)
    return (rng.random(7) * 10,)


KERNEL = pair_stats
