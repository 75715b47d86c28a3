# expect: 6:14: error: slices are not supported in kernels (index one element at a time)
import asc

@asc.kernel
def k(x, n):
    x[0] = x[1:n]
