# expect: 6:14: error: kernel 'for' loops iterate over range(), asc.prange() or asc.static_range()
import asc

@asc.kernel
def k(x, n):
    for i in x:
        pass
