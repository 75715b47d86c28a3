# expect: 6:9: error: dict and set displays are not supported in kernels
import asc

@asc.kernel
def k(x, n):
    d = {1: 2}
