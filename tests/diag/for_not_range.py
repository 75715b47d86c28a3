# expect: 6:14: error: kernel 'for' loops iterate over range(), asc.prange(), asc.static_range() or an array (not zip() or enumerate() yet)
import asc

@asc.kernel
def k(x, y):
    for i in zip(x, y):
        pass
