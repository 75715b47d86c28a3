# expect: 5:1: error: 'async' functions are not supported in kernels
import asc

@asc.kernel
async def k(x):
    pass
