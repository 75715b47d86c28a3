# expect: 6:10: error: the 'in' operator is not supported in kernels
import asc

@asc.kernel
def k(x, n):
    if n in x:
        pass
