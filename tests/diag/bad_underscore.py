# expect: 6:13: error: invalid decimal literal: '_' must separate digits
import asc

@asc.kernel
def k(x, n):
    x[0] = 1__0
