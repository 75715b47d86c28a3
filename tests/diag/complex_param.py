# mode: types
# signature: k(c128[1], c64)
# expect: 8:7: error: parameter 'z' is complex128: complex numbers are not supported in kernels yet
# expect: 8:10: error: parameter 's' is complex64: complex numbers are not supported in kernels yet
import asc

@asc.kernel
def k(z, s):
    z[0] = s
