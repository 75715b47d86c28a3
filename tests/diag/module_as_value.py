# expect: 6:9: error: module 'asc' cannot be used as a value
import asc

@asc.kernel
def k(x, n):
    y = asc
