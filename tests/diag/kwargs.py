# expect: 5:10: error: **kwargs parameters are not supported in kernels
import asc

@asc.kernel
def k(x, **kw):
    pass
