# expect: 6:5: error: import is only supported at module level
import asc

@asc.kernel
def k(x, n):
    import math
