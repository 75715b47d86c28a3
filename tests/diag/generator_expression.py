# expect: 6:15: error: generator expressions are not supported in kernels
import asc

@asc.kernel
def k(x, n):
    y = sum(i for i in range(n))
