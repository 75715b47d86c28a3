# expect: 5:10: error: *args parameters are not supported in kernels
import asc

@asc.kernel
def k(x, *rest):
    pass
