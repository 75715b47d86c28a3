# expect: 9:12: error: 'helper' is not a kernel helper (decorate it with @asc.func)
import asc

def helper(a):
    return a

@asc.kernel
def k(x, n):
    x[0] = helper(n)
