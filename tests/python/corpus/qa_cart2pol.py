# Task described at https://discuss.datasciencedojo.com/t/cartesian-coordinates-to-polar-coordinates/1030
# (a forum guide: Cartesian to polar coordinates with np.hypot and np.arctan2).
# Written for this project from that description, not copied from the page;
# plain numpy, then `import asc` and the decorator added.
"""np.hypot, np.arctan2, np.column_stack((r, theta)), np.empty([n, 2]) filled by columns, the way back."""
import numpy as np

import asc


@asc.kernel
def to_polar(xy):
    x = xy[:, 0]
    y = xy[:, 1]
    r = np.hypot(x, y)
    theta = np.arctan2(y, x)
    polar = np.column_stack((r, theta))
    back = np.empty([len(x), 2])
    back[:, 0] = r * np.cos(theta)
    back[:, 1] = r * np.sin(theta)
    return polar, back


def args():
    return (np.array([[1.0, 4.0], [2.0, -5.0], [-3.0, 6.0], [-1.0, -1.0], [0.0, 2.0]]),)


KERNEL = to_polar
