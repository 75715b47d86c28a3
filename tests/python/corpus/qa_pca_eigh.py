# Task described at https://www.oreilly.com/library/view/hands-on-unsupervised-learning/9781789348279/63c4e931-c242-4889-a8bb-6dd1f6402982.xhtml
# (a book excerpt: PCA of a zero-centred data set from the eigen-decomposition of np.cov).
# Written for this project from that description, not copied from the page;
# plain numpy, then `import asc` and the decorator added.
"""A helper returning X - mean(axis=0), np.cov(Xs.T), np.linalg.eigh, np.argsort()[::-1], |projection| (sign-free)."""
import numpy as np

import asc


@asc.func
def zero_center(Xd):
    return Xd - np.mean(Xd, axis=0)


@asc.kernel
def pca(X, n_components):
    Xs = zero_center(X)
    Q = np.cov(Xs.T)
    eigu, eigv = np.linalg.eigh(Q)
    order = np.argsort(eigu)[::-1]
    explained = eigu[order] / eigu.sum()
    proj = Xs @ eigv[:, order[:n_components]]
    return explained, np.abs(proj)


def args():
    rng = np.random.default_rng(18)
    X = rng.normal(size=(20, 3)) @ np.array([[3.0, 0.0, 0.0], [1.0, 1.0, 0.0], [0.5, 0.2, 0.3]])
    return X, 2


KERNEL = pca
