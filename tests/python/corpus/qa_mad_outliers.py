# Task described at https://stackoverflow.com/questions/22354094/pythonic-way-of-detecting-outliers-in-one-dimensional-observation-data/22357811
# (a Q&A answer: outliers by the modified z-score from the median absolute deviation).
# Written for this project from that description, not copied from the page;
# plain numpy, then `import asc` and the decorator added.
"""A helper that rebinds a 1-D parameter to points[:, None], np.median(axis=0), sum(axis=-1), a threshold default."""
import numpy as np

import asc


@asc.func
def is_outlier(points, thresh=3.5):
    if len(points.shape) == 1:
        points = points[:, None]
    median = np.median(points, axis=0)
    diff = np.sum((points - median)**2, axis=-1)
    diff = np.sqrt(diff)
    med_abs_deviation = np.median(diff)
    modified_z_score = 0.6745 * diff / med_abs_deviation
    return modified_z_score > thresh


@asc.kernel
def find_outliers(x, xy):
    return is_outlier(x), is_outlier(xy, 3.0)


def args():
    rng = np.random.default_rng(23)
    x = rng.normal(0.0, 1.0, 30)
    x[[2, 9]] = [8.0, -7.5]
    xy = rng.normal(0.0, 1.0, (25, 2))
    xy[4] = [6.0, 6.0]
    return x, xy


KERNEL = find_outliers
