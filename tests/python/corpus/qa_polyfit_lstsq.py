# Task described at https://chazeon.com/notes/linear-algebra/least-square-fitting/
# (notes: polynomial fitting as least squares on a Vandermonde matrix with numpy.linalg.lstsq).
# Written for this project from that description, not copied from the page;
# plain numpy, then `import asc` and the decorator added.
"""A list comprehension of powers into np.column_stack, np.linalg.lstsq(A, y, rcond=None)[0], A @ coef."""
import numpy as np

import asc


@asc.kernel
def polyfit(x, y, deg):
    A = np.column_stack([x**k for k in range(deg, -1, -1)])
    coef = np.linalg.lstsq(A, y, rcond=None)[0]
    resid = y - A @ coef
    return coef, np.sum(resid**2)


def args():
    x = np.array([0.0, 1.0, 2.0, 3.0, 4.0, 5.0])
    return x, np.array([0.0, 0.8, 0.9, 0.1, -0.8, -1.0]), 3


KERNEL = polyfit
