# Task described at https://quanchobi.io/posts/logistic-regression-from-scratch
# (a tutorial: logistic regression with a sigmoid, cross-entropy and gradient descent).
# Written for this project from that description, not copied from the page;
# plain numpy, then `import asc` and the decorator added.
"""A lambda for the sigmoid and a nested def for the gradient inside the kernel, X.T @ err, a training loop."""
import numpy as np

import asc


@asc.kernel
def train(X, y, lr, iters):
    sigmoid = lambda z: 1.0 / (1.0 + np.exp(-z))

    def gradient(w, b):
        err = sigmoid(X @ w + b) - y
        return X.T @ err / X.shape[0], np.mean(err)

    w = np.zeros(X.shape[1])
    b = 0.0
    for _ in range(iters):
        dw, db = gradient(w, b)
        w = w - lr * dw
        b = b - lr * db
    p = sigmoid(X @ w + b)
    loss = -np.mean(y * np.log(p) + (1 - y) * np.log(1 - p))
    return w, b, loss


def args():
    X = np.array([[0.5, 1.5], [1.0, 1.0], [1.5, 0.5], [3.0, 0.5], [2.0, 2.0], [1.0, 2.5]])
    return X, np.array([0.0, 0.0, 0.0, 1.0, 1.0, 1.0]), 0.1, 50


KERNEL = train
