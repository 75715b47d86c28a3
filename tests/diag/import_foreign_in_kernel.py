# expect: 7:12: error: 'os' names a Python module or object that kernels cannot use
import asc

@asc.kernel
def k(x, n):
    import os
    x[0] = os.getpid()
