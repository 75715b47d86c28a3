# expect: 6:15: error: f-strings are not supported in kernels
import asc

@asc.kernel
def k(x, n):
    assert n, f"n={n}"
