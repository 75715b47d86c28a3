# expect: 6:9: error: a lambda whose body is an assignment is only allowed as the body of asc.parallel_for
import asc

@asc.kernel
def k(x, n):
    f = lambda i: x[i] = 0
