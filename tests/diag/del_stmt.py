# expect: 6:5: error: 'del' statements are not supported in kernels
import asc

@asc.kernel
def k(x, n):
    del n
