# mode: types
# signature: k(f32[1])
# expect: 9:12: error: cannot store an array (Tensor[float32, 1]) into one element of Tensor[float32, 1]
import asc


@asc.kernel
def k(a):
    a[0] = asc.sin(a)
