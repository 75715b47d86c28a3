# expect: 6:12: error: invalid hexadecimal literal
import asc

@asc.kernel
def k(x, n):
    x[0] = 0xg1
