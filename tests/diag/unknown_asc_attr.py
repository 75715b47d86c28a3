# expect: 6:16: error: asc.frobnicate is not supported in kernels (module 'asc' has no kernel builtin 'frobnicate')
import asc

@asc.kernel
def k(x, n):
    x[0] = asc.frobnicate(n)
