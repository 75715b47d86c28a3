# expect: 6:17: error: slices are not supported in kernels (index one element at a time)
import asc

@asc.kernel
def k(x, y, i):
    y[0] = x[i, :]
