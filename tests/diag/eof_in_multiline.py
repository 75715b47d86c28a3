# expect: 6:12: error: '[' was never closed
import asc

@asc.kernel
def k(x, n):
    x[0] = [
