# expect: 6:9: error: asc.kernel is a decorator, not a value
import asc

@asc.kernel
def k(x, n):
    y = asc.kernel
