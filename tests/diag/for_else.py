# expect: 8:5: error: 'else' after a 'for' loop is not supported in kernels
import asc

@asc.kernel
def k(x, n):
    for i in range(n):
        pass
    else:
        pass
