# expect: 5:1: error: recursion is not supported in kernels (f -> f)
import asc

@asc.func
def f(n):
    return f(n - 1)

@asc.kernel
def k(x, n):
    x[0] = f(n)
