# expect: 6:14: error: invalid character '$'
import asc

@asc.kernel
def k(x, n):
    x[0] = n $ 2
