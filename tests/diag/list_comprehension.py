# expect: 6:9: error: list comprehensions are not supported in kernels
import asc

@asc.kernel
def k(x, n):
    y = [i for i in range(n)]
