# expect: 10:12: error: f() missing required argument 'b'
import asc

@asc.func
def f(a, b):
    return a + b

@asc.kernel
def k(x, n):
    x[0] = f(n)
