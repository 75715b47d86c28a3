# Task described at https://fturci.github.io/intro-coding-data-analysis/10/exercises_part1.html
# (a course exercise: a square grid holding a circular mask of given centre and radius).
# Written for this project from that description, not copied from the page;
# plain numpy, then `import asc` and the decorator added.
"""yy, xx = np.mgrid[0:n, 0:n] unpacked, a circle and a rectangle mask, .astype(int)."""
import numpy as np

import asc


@asc.kernel
def masks(n, x0, y0, radius):
    yy, xx = np.mgrid[0:n, 0:n]
    circular_mask = (xx - x0)**2 + (yy - y0)**2 <= radius**2
    rect_mask = (np.abs(xx - x0) <= radius) & (np.abs(yy - y0) <= radius // 2)
    return circular_mask.astype(int), rect_mask


def args():
    return 20, 8, 10, 4


KERNEL = masks
