# expect: 7:9: error: unexpected indent
import asc

@asc.kernel
def k(x, n):
    x[0] = 1
        x[1] = 2
