# expect: 6:5: error: cannot assign to function call here. Maybe you meant '==' instead of '='?
import asc

@asc.kernel
def k(x, n):
    f(n) = 1
