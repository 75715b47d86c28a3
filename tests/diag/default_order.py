# expect: 5:15: error: parameter without a default follows parameter with a default
import asc

@asc.kernel
def k(x, n=1, m):
    pass
