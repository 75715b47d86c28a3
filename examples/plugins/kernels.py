# The kernels of the plugin examples: a numerically safe softmax over the
# rows of a 2-D array and its gradient.  The PyTorch extension loads the
# text (ascModuleLoadPythonFile) and an ascc-built module of it; the JAX
# example compiles it with asc.compile.
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


# asc: signature softmax_rows_grad(f32[:, :], f32[:, :], f32[:, :])
@asc.kernel
def softmax_rows_grad(y, gy, gx):
    n, m = y.shape
    for i in asc.prange(n):
        d = 0.0
        for j in range(m):
            d += y[i, j] * gy[i, j]
        for j in range(m):
            gx[i, j] = y[i, j] * (gy[i, j] - d)
