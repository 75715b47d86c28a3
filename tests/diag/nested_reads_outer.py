# expect: 7:12: error: nested function 'f' reads 'n' of the function around it, so it can only be the body of asc.parallel_for; to call it, pass 'n' as a parameter (or define 'f' at module level with @asc.func)
import asc

@asc.kernel
def k(x, n):
    f = lambda i: i + n
    x[0] = f(1)
