# The kernel of the PyTorch plugin example: a numerically safe softmax
# over the rows of a 2-D array.  Loaded as text by the extension
# (ascModuleLoadPythonFile) and compiled ahead of time by ascc.
import numpy as np

import asc


# asc: signature softmax_rows(f32[:, :], f32[:, :])
@asc.kernel
def softmax_rows(x, out):
    n, m = x.shape
    for i in asc.prange(n):
        mx = x[i, 0]
        for j in range(m):
            mx = max(mx, x[i, j])
        s = 0.0
        for j in range(m):
            e = np.exp(x[i, j] - mx)
            out[i, j] = e
            s += e
        for j in range(m):
            out[i, j] = out[i, j] / s
