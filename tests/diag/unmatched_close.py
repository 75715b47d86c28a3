# expect: 6:13: error: unmatched ')'
import asc

@asc.kernel
def k(x, n):
    x[0] = 1)
