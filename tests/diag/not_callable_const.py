# expect: 8:12: error: 'N' is not callable
import asc

N = 3

@asc.kernel
def k(x):
    x[0] = N(1)
