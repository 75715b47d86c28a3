# Task described at https://ogeek.cn/qa/?qa=872472%2F
# (a Q&A thread: the real cube root of negative numbers, np.cbrt against sign-copied powers).
# Written for this project from that description, not copied from the page;
# plain numpy, then `import asc` and the decorator added.
"""np.cbrt, np.copysign(np.abs(x) ** (1. / 3), x), np.sign(x) * np.abs(x) ** (1/3), np.square back."""
import numpy as np

import asc


@asc.kernel
def cube_roots(x):
    a = np.cbrt(x)
    b = np.copysign(np.abs(x) ** (1. / 3), x)
    c = np.sign(x) * np.abs(x) ** (1.0 / 3.0)
    return a, b, c, np.square(a) * a


def args():
    return (np.array([-1000.0, -27.0, -8.0, 0.0, 8.0, 27.0, 64.0, -0.125]),)


KERNEL = cube_roots
