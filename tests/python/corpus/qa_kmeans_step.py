# Task described at https://prof.lexailabs.com/practice/kmeans-step
# (a practice problem: one k-means iteration, assignments and new centroids, empty clusters kept).
# Written for this project from that description, not copied from the page;
# plain numpy, then `import asc` and the decorator added.
"""np.add.outer of squared norms - 2 X @ C.T, argmin(axis=1), np.array of a comprehension with a conditional."""
import numpy as np

import asc


@asc.kernel
def kmeans_step(X, centroids):
    d2 = np.add.outer(np.sum(X * X, -1), np.sum(centroids * centroids, -1)) - 2 * X @ centroids.T
    assignments = np.argmin(d2, axis=1)
    K = centroids.shape[0]
    new_centroids = np.array([X[assignments == k].mean(axis=0) if np.any(assignments == k)
                              else centroids[k] for k in range(K)])
    return new_centroids, assignments


def args():
    X = np.array([[0.0, 0.0], [0.1, 0.1], [-0.1, 0.0], [10.0, 10.0], [10.2, 10.0], [10.0, 9.8]])
    return X, np.array([[1.0, 1.0], [9.0, 9.0], [-10.0, -10.0]])


KERNEL = kmeans_step
