# mode: types
# signature: k(f32[2], f32[1], i64)
# expect: 8:12: error: cannot store an array (Tensor[float32, 1, strided]) into one element of Tensor[float32, 1]
import asc

@asc.kernel
def k(x, y, i):
    y[0] = x[i, :]
