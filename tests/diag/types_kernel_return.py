# mode: types
# signature: k(f32[1])
# expect: 11:12: error: 'k' returns Tensor[float32, 1] here but float32 elsewhere
import asc


@asc.kernel
def k(a):
    if a[0] > 0:
        return a[0]
    return a
