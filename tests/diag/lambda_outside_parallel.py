# expect: 6:9: error: lambda is only supported as the body of asc.parallel_for
import asc

@asc.kernel
def k(x, n):
    f = lambda i: i + 1
