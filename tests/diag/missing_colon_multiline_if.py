# expect: 7:16: error: expected ':' (to close 'if' at line 6)
import asc

@asc.kernel
def k(x, n):
    if (n >
            0) x[0] = 1
