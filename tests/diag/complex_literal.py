# mode: types
# signature: k(f64[1], i64)
# expect: 8:12: error: complex numbers are not supported in kernels yet
import asc

@asc.kernel
def k(x, n):
    x[0] = 3j
