# mode: types
# signature: k(f32[1])
# expect: 9:20: error: sin() takes a scalar, not Tensor[float32, 1]
import asc


@asc.kernel
def k(a):
    a[0] = asc.sin(a)
