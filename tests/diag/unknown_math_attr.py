# expect: 7:17: error: math.factorial is not supported in kernels (module 'math' has no kernel builtin 'factorial')
import asc
import math

@asc.kernel
def k(x, n):
    x[0] = math.factorial(n)
