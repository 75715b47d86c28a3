# Task described at https://github.com/dmollaaliod/comp348-2018
# (a course notebook: PageRank by repeated products with a damped transition matrix, until the change is small).
# Written for this project from that description, not copied from the page;
# plain numpy, then `import asc` and the decorator added.
"""A bounded loop: oldPR = PR (a name bound to another's array), PR = np.dot(M, PR), break when np.max(np.abs(oldPR - PR)) < eps."""
import numpy as np

import asc


@asc.kernel
def pagerank(A, d, eps, max_iters):
    n = A.shape[0]
    M = d * A + (1 - d) * (1.0 / n * np.ones((n, n)))
    PR = 1.0 / n * np.ones((n, 1))
    iterations = 0
    for i in range(max_iters):
        oldPR = PR
        PR = np.dot(M, PR)
        iterations += 1
        if np.max(np.abs(oldPR - PR)) < eps:
            break
    return PR, iterations


def args():
    A = np.array([[0.0, 0.0, 1.0, 0.5],
                  [1.0 / 3.0, 0.0, 0.0, 0.0],
                  [1.0 / 3.0, 0.5, 0.0, 0.5],
                  [1.0 / 3.0, 0.5, 0.0, 0.0]])
    return A, 0.85, 1e-4, 100


KERNEL = pagerank
