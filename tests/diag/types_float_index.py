# mode: types
# signature: k(f32[1])
# expect: 9:7: error: a tensor index must be an integer, not a Python float literal
import asc


@asc.kernel
def k(a):
    a[0.5] = 1.0
