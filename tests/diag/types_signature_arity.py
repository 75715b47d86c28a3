# mode: types
# signature: k(f32[1])
# expect: 8:1: error: kernel 'k' takes 2 parameters but the signature gives 1
import asc


@asc.kernel
def k(a, b):
    a[0] = b[0]
