# expect: 6:14: error: method calls are not supported in kernels ('.tolist()'; array methods kernels accept: sum
import asc

@asc.kernel
def k(x, n):
    x[0] = x.tolist()
