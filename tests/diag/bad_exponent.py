# expect: 6:13: error: invalid float literal: exponent has no digits
import asc

@asc.kernel
def k(x, n):
    x[0] = 1e+
