# Task described at https://exchangetuts.com/python-running-cumulative-sum-with-a-given-window-1640460124584285
# (a Q&A thread: a running sum over a window by subtracting shifted cumsums).
# Written for this project from that description, not copied from the page;
# plain numpy, then `import asc` and the decorator added.
"""a.cumsum(), then b[w:] = b[w:] - b[:-w] (the target overlaps the source), moving average."""
import numpy as np

import asc


@asc.kernel
def window_sums(a, w):
    b = a.cumsum()
    b[w:] = b[w:] - b[:-w]
    avg = b[w - 1:] / w
    return b, avg


def args():
    return np.arange(1.0, 13.0), 3


KERNEL = window_sums
