# Task described at https://github.com/Ishuvgiri/Machine-Learning-and-Algorithms-part-2-part-one-didnt-work-
# (a notebook: a logistic function helper that imports numpy inside its body, tested on scalars and arrays).
# Written for this project from that description, not copied from the page;
# plain numpy, then `import asc` and the decorator added.
"""`import numpy as np` inside a helper's body; the helper called with a number and with an array."""
import numpy as np

import asc


@asc.func
def logistic_function(x):
    import numpy as np
    y = 1 / (1 + np.exp(-x))
    return y


@asc.kernel
def logistic(x, s):
    return logistic_function(x), logistic_function(s)


def args():
    return np.linspace(-5.0, 5.0, 11), 2.0


KERNEL = logistic
