# expect: 6:12: error: integer literal too large (the limit is 2**64 - 1)
import asc

@asc.kernel
def k(x, n):
    x[0] = 99999999999999999999999
