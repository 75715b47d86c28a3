# mode: types
# signature: k(f32[1])
# expect: 9:12: error: a kernel cannot return a value
import asc


@asc.kernel
def k(a):
    return a[0]
