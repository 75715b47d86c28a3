# expect: 6:5: error: 'nonlocal' statements are not supported in kernels
import asc

@asc.kernel
def k(x, n):
    nonlocal n
