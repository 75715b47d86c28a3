# expect: 7:17: error: math.gamma is not supported in kernels (module 'math' has no kernel builtin 'gamma')
import asc
import math

@asc.kernel
def k(x, n):
    x[0] = math.gamma(n)
