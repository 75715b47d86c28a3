# expect: 6:5: error: 'global' statements are not supported in kernels
import asc

@asc.kernel
def k(x, n):
    global n
