# mode: types
# signature: k(f32[2])
# expect: 9:5: error: Tensor[float32, 2] indexed with 3 indices; it needs 2
import asc


@asc.kernel
def k(a):
    a[0, 1, 2] = 1.0
