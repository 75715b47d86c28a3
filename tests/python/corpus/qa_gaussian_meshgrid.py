# Task described at https://www.geeksforgeeks.org/how-to-generate-2-d-gaussian-array-using-numpy/?ref=lbp
# (a tutorial: a 2-D Gaussian filter on a grid made by np.meshgrid of two linspaces).
# Written for this project from that description, not copied from the page;
# plain numpy, then `import asc` and the decorator added.
"""x, y = np.meshgrid(np.linspace(...), np.linspace(...)) in a helper with defaults, np.exp of the radial distance."""
import numpy as np

import asc


@asc.func
def gaussian_filter(kernel_size, sigma=1.0, mu=0.0):
    x, y = np.meshgrid(np.linspace(-1, 1, kernel_size), np.linspace(-1, 1, kernel_size))
    dst = np.sqrt(x**2 + y**2)
    normal = 1 / (2.0 * np.pi * sigma**2)
    return np.exp(-((dst - mu)**2 / (2.0 * sigma**2))) * normal


@asc.kernel
def filters(k):
    return gaussian_filter(k), gaussian_filter(k, sigma=0.5)


def args():
    return (5,)


KERNEL = filters
