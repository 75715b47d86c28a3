# expect: 6:12: error: 'await' is not supported in kernels
import asc

@asc.kernel
def k(x, n):
    x[0] = await n
