# signature: lists(f64[2], f32[1])
# signature: lists(f64[3], f32[1])
import numpy as np
import asc


@asc.kernel
def lists(a, out):
    s = tuple(d + 1 for d in a.shape)
    p = np.array([1, 2.5])
    z = np.zeros([d for d in a.shape])
    t = sum(i for i in range(3))
    out[0] = s[0] + p[0] + z.ndim + t
