# expect: 6:37: error: positional argument follows keyword argument
import asc

@asc.kernel
def k(x, n):
    t = asc.local_array(shape=(4,), asc.float32)
