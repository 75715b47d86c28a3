# expect: 5:1: error: recursion is not supported in kernels (f -> g -> f)
import asc

@asc.func
def f(n):
    return g(n)

@asc.func
def g(n):
    return f(n)

@asc.kernel
def k(x, n):
    x[0] = f(n)
