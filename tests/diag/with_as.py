# expect: 6:25: error: 'with ... as' is not supported in kernels
import asc

@asc.kernel
def k(x, n):
    with asc.critical() as c:
        pass
