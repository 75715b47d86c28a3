# Task described at https://www.onenoughtone.com/problems/batch-normalization-feature-maps
# (a practice problem: per-channel statistics of BCHW feature maps over batch and space).
# Written for this project from that description, not copied from the page;
# plain numpy, then `import asc` and the decorator added.
"""np.sum / np.max / X.std over a tuple of axes written in place, and (B*H*W) counts from X.shape."""
import numpy as np

import asc


@asc.kernel
def channel_stats(X):
    B, C, H, W = X.shape
    mu = np.sum(X, axis=(0, 2, 3)) / (B * H * W)
    peak = np.max(X, axis=(0, 2, 3))
    spread = X.std(axis=(0, 2, 3))
    per_image = X.sum(axis=(1, 2, 3))
    return mu, peak, spread, per_image


def args():
    rng = np.random.default_rng(30)
    return (rng.standard_normal((2, 3, 2, 2)),)


KERNEL = channel_stats
