# expect: 6:12: error: a lambda whose body is an assignment is only allowed as the body of asc.parallel_for
import asc

@asc.kernel
def k(x, n):
    return lambda i: x[i] = 0
