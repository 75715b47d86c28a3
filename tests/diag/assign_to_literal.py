# expect: 6:5: error: cannot assign to literal
import asc

@asc.kernel
def k(x, n):
    1 = n
