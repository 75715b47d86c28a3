# Task described at https://github.com/sahs1404/dl-from-scratch-wids
# (a notebook: batch normalisation of a (B, C, H, W) tensor over the batch and spatial axes).
# Written for this project from that description, not copied from the page;
# plain numpy, then `import asc` and the decorator added.
"""np.mean / np.var over axis=(0, 2, 3) with keepdims=True, the axes a tuple default of the helper."""
import numpy as np

import asc


@asc.func
def batch_norm(X, gamma, beta, epsilon=1e-5, axes=(0, 2, 3)):
    mean = np.mean(X, axis=axes, keepdims=True)
    var = np.var(X, axis=axes, keepdims=True)
    X_norm = (X - mean) / np.sqrt(var + epsilon)
    return gamma * X_norm + beta


@asc.kernel
def bn(X, gamma, beta):
    C = X.shape[1]
    return batch_norm(X, gamma.reshape(1, C, 1, 1), beta.reshape(1, C, 1, 1))


def args():
    rng = np.random.default_rng(28)
    return rng.standard_normal((2, 3, 4, 4)), np.array([1.0, 0.5, 2.0]), np.array([0.0, 0.1, -0.2])


KERNEL = bn
