# Task described at https://tmramalho.github.io/blog/2013/12/16/how-to-do-inverse-transformation-sampling-in-scipy-and-numpy/
# (a blog post: sampling from data through its histogram's cumulative distribution).
# Written for this project from that description, not copied from the page;
# plain numpy, then `import asc` and the decorator added.
"""np.histogram(density=True) unpacked, np.diff, cum_values[1:] = np.cumsum(...), np.searchsorted, np.interp-free linear inverse."""
import numpy as np

import asc


@asc.kernel
def inverse_sample(data, r, n_bins):
    hist, bin_edges = np.histogram(data, bins=n_bins, density=True)
    cum_values = np.zeros(bin_edges.shape)
    cum_values[1:] = np.cumsum(hist * np.diff(bin_edges))
    idx = np.searchsorted(cum_values, r)
    idx = np.clip(idx, 1, n_bins)
    lo = cum_values[idx - 1]
    hi = cum_values[idx]
    t = (r - lo) / (hi - lo)
    return bin_edges[idx - 1] + t * (bin_edges[idx] - bin_edges[idx - 1])


def args():
    rng = np.random.default_rng(15)
    return rng.normal(0.0, 1.0, 200), rng.random(16), 10


KERNEL = inverse_sample
