# mode: types
# signature: k(f32[1])
# expect: 9:20: error: range bounds must be integers, not float32
import asc


@asc.kernel
def k(a):
    for i in range(a[0]):
        a[i] = 0.0
