# Task described at https://codewithsundeep.com/discussion/solution/49946881
# (a Q&A thread: a multiplication table in numpy without the double loop).
# Written for this project from that description, not copied from the page;
# plain numpy, then `import asc` and the decorator added.
"""rng * rng[:, None], np.multiply.outer, np.add.outer, np.subtract.outer of np.arange."""
import numpy as np

import asc


@asc.kernel
def tables(n):
    rng = np.arange(1, n + 1)
    t1 = rng * rng[:, None]
    t2 = np.multiply.outer(rng, rng)
    return t1, t2, np.add.outer(rng, rng), np.subtract.outer(rng, rng)


def args():
    return (6,)


KERNEL = tables
