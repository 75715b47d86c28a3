# expect: 6:14: error: kernel 'for' loops iterate over range(), asc.prange(), asc.static_range(), an array, zip() or enumerate()
import asc

@asc.kernel
def k(x, y):
    for i in reversed(x):
        pass
