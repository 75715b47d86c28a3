import numpy as np
import asc


@asc.kernel
def masked_update(z, c):
    m = np.abs(z) < 2.0
    z[m] = z[m] ** 2 + c[m]


@asc.kernel
def masked_other_view(x, m: asc.Tensor[asc.bool_, 1]):
    x[m] = x[::-1][m] + 1.0


@asc.kernel
def gather_dot(vals, cols: asc.Tensor[asc.int64, 1], x):
    return vals @ x[cols]
