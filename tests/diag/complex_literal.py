# expect: 6:12: error: complex literals are not supported in kernels
import asc

@asc.kernel
def k(x, n):
    x[0] = 3j
