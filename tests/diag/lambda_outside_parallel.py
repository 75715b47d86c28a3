# expect: 6:10: error: lambda is only supported as the body of asc.parallel_for or assigned to a name (f = lambda x: ..., then f(...))
import asc

@asc.kernel
def k(x, n):
    y = (lambda i: i + 1)(n)
