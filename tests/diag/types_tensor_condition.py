# mode: types
# signature: k(f32[1])
# expect: 9:8: error: a condition must be a scalar, not Tensor[float32, 1]
import asc


@asc.kernel
def k(a):
    if a:
        a[0] = 1.0
