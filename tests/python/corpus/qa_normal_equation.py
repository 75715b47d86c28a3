# Task described at https://github.com/mishra011/deep-ml.com
# (a practice notebook: linear regression by the normal equation, a column of ones for the intercept).
# Written for this project from that description, not copied from the page;
# plain numpy, then `import asc` and the decorator added.
"""np.hstack((ones, X)), np.linalg.inv(X.T @ X) @ X.T @ y, np.vstack of two rows, np.round(theta, 4)."""
import numpy as np

import asc


@asc.kernel
def normal_equation(X, y):
    ones = np.ones((X.shape[0], 1))
    Xb = np.hstack((ones, X))
    theta = np.linalg.inv(Xb.T @ Xb) @ Xb.T @ y
    pred = Xb @ theta
    return np.round(theta, 4), np.vstack((y, pred))


def args():
    X = np.array([[1.0, 0.5], [2.0, 1.5], [3.0, 1.0], [4.0, 3.0], [5.0, 2.0]])
    return X, np.array([1.0, 2.1, 2.9, 4.2, 5.1])


KERNEL = normal_equation
