# expect: 6:14: error: the matrix multiplication operator '@' is not supported in kernels
import asc

@asc.kernel
def k(x, n):
    x[0] = n @ n
