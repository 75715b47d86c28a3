# mode: types
# signature: k(f32[1], f64[1])
# expect: 9:12: error: cannot store float64 into an element of Tensor[float32, 1] (convert it explicitly: asc.float32(...))
import asc


@asc.kernel
def k(a, b):
    a[0] = b[0]
