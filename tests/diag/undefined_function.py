# expect: 6:12: error: name 'foo' is not defined
import asc

@asc.kernel
def k(x, n):
    x[0] = foo(n)
