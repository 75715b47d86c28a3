# expect: 6:25: error: the body of asc.parallel_for must be a lambda or a function defined in the kernel
import asc

@asc.kernel
def k(x, n):
    asc.parallel_for(n, x)
