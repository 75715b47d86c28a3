# expect: 9:12: error: 'helper' is a Python function; decorate it with @asc.func to call it from a kernel
import asc

def helper(a):
    return a

@asc.kernel
def k(x, n):
    x[0] = helper(n)
