# Task described at https://www.ndled.us/stats/2021/07/23/Reconstructing-Data.html
# (a blog post: the best rank-k approximation of an image from its SVD).
# Written for this project from that description, not copied from the page;
# plain numpy, then `import asc` and the decorator added.
"""U, S, Vh = np.linalg.svd(full_matrices=False), S.copy(), S_cut[k:] = 0, np.dot(U * S_cut, Vh) (sign-free)."""
import numpy as np

import asc


@asc.kernel
def low_rank(A, k):
    U, Sigma, Vadj = np.linalg.svd(A, full_matrices=False)
    Sigma_cutoff = Sigma.copy()
    Sigma_cutoff[k:] = 0
    approx = np.dot(U * Sigma_cutoff, Vadj)
    return approx, Sigma


def args():
    rng = np.random.default_rng(25)
    return rng.random((8, 6)), 2


KERNEL = low_rank
