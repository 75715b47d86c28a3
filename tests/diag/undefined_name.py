# expect: 6:12: error: name 'm' is not defined
import asc

@asc.kernel
def k(x, n):
    x[0] = m + 1
