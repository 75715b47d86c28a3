# mode: types
# signature: k(f32[2])
# expect: 9:5: error: Tensor[float32, 2] indexed with 1 index; it needs 2
import asc


@asc.kernel
def k(a):
    a[0] = 1.0
