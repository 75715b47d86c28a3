import numpy as np
import asc


@asc.kernel
def k(a, out):
    e = np.empty([a.shape[0], 2])
    s = tuple(d + 1 for d in a.shape)
    v = [a[i] * 2 for i in range(3)]
    t = sum(x * y for x, y in zip(range(3), (4, 5, 6)))
    g = sum(v)
    n = np.array([[i + j for j in range(2)] for i in range(2)])
    out[0] = s[0] + t + g + n[0, 0] + e.shape[1]
