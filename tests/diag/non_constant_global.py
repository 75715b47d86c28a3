# expect: 8:12: error: 'BIG' is not a compile-time constant (module-level names used in kernels must be bool, int or float constants)
import asc

BIG = 2 ** 70

@asc.kernel
def k(x):
    x[0] = BIG
