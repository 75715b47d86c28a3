# expect: 6:5: error: 'yield' is not supported in kernels (generators are not supported)
import asc

@asc.kernel
def k(x, n):
    yield n
