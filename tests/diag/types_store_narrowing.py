# mode: types
# signature: k(f32[1], f64[1])
# expect: 10:12: error: cannot store an array (Tensor[float64, 1]) into one element of Tensor[float32, 1]
import asc


# scalars convert on store like numpy's item assignment; a whole tensor does not
@asc.kernel
def k(a, b):
    a[0] = b
