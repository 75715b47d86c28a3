# expect: 6:9: error: the target of a kernel 'for' loop must be a single name
import asc

@asc.kernel
def k(x, n):
    for i, j in range(n):
        pass
