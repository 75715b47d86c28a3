# Task described at https://theneuralbase.com/numpy-for-ml/learn/intermediate/min-max-scaling/
# (a tutorial: min-max scaling fitted on training data, then applied to test data).
# Written for this project from that description, not copied from the page;
# plain numpy, then `import asc` and the decorator added.
"""A helper returning a tuple of two arrays (the column minima and maxima) unpacked by the kernel, then broadcast scaling."""
import numpy as np

import asc


@asc.func
def fit(X_train):
    return X_train.min(axis=0), X_train.max(axis=0)


@asc.kernel
def min_max_scale(X_train, X_test):
    X_min, X_max = fit(X_train)
    X_train_scaled = (X_train - X_min) / (X_max - X_min)
    X_test_scaled = (X_test - X_min) / (X_max - X_min)
    return X_train_scaled, X_test_scaled


def args():
    rng = np.random.default_rng(31)
    return rng.uniform(10, 100, size=(12, 3)), rng.uniform(10, 100, size=(4, 3))


KERNEL = min_max_scale
