# expect: 6:11: error: assignment expressions (:=) are not supported in kernels
import asc

@asc.kernel
def k(x, n):
    if (y := n):
        x[0] = y
