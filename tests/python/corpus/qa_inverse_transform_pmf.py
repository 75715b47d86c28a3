# Task described at https://prof.lexailabs.com/practice/inverse-transform-sampling
# (a practice problem: categorical samples from a pmf through its cumulative sum).
# Written for this project from that description, not copied from the page;
# plain numpy, then `import asc` and the decorator added.
"""np.cumsum(pmf), np.searchsorted(cdf, u, side='right'), np.bincount(minlength=K) of the draws."""
import numpy as np

import asc


@asc.kernel
def draw(pmf, u):
    cdf = np.cumsum(pmf)
    idx = np.searchsorted(cdf, u, side='right')
    idx = np.minimum(idx, len(pmf) - 1)
    counts = np.bincount(idx, minlength=len(pmf))
    return idx, counts / len(u)


def args():
    rng = np.random.default_rng(16)
    return np.array([0.2, 0.3, 0.5]), rng.random(40)


KERNEL = draw
