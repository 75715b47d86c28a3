# Task described at https://github.com/pashukalma/probabilistic_
# (a notebook: multivariate normal samples from standard normals and a Cholesky factor).
# Written for this project from that description, not copied from the page;
# plain numpy, then `import asc` and the decorator added.
"""np.linalg.cholesky, np.dot(z, l.T) + np.reshape(mu, (-1, len(mu))), np.cov(X, rowvar=False)."""
import numpy as np

import asc


@asc.func
def sample_mvn(mu, sigma, z):
    l = np.linalg.cholesky(sigma)
    return np.dot(z, l.T) + np.reshape(mu, (-1, len(mu)))


@asc.kernel
def samples(mu, A, z):
    sigma = np.dot(A, A.T) + np.eye(len(mu))
    X = sample_mvn(mu, sigma, z)
    return X, np.cov(X, rowvar=False)


def args():
    rng = np.random.default_rng(24)
    return np.array([1.0, -2.0, 0.5]), rng.standard_normal((3, 3)), rng.standard_normal((50, 3))


KERNEL = samples
