# Task described at https://github.com/djkjohnston/ML_from_scratch_GA_DSI_Capstone
# (a notebook: power iteration, b = A b / ||A b||, for the dominant eigenvector).
# Written for this project from that description, not copied from the page;
# plain numpy, then `import asc` and the decorator added.
"""np.dot(A, b) and np.linalg.norm in a loop that rebinds b, the Rayleigh quotient b @ A @ b."""
import numpy as np

import asc


@asc.kernel
def power_iteration(A, b0, num_simulations):
    b_k = b0
    for _ in range(num_simulations):
        b_k1 = np.dot(A, b_k)
        b_k1_norm = np.linalg.norm(b_k1)
        b_k = b_k1 / b_k1_norm
    eigenvalue = b_k @ A @ b_k
    return b_k, eigenvalue


def args():
    rng = np.random.default_rng(17)
    m = rng.random((4, 4))
    return m.T @ m + np.eye(4), rng.random(4), 30


KERNEL = power_iteration
