# mode: types
# signature: k(f32[1], i64)
# expect: 8:12: error: cannot store an array (Tensor[float32, 1, strided]) into one element of Tensor[float32, 1]: index its operands, or assign to a slice (x[:] = ...)
import asc

@asc.kernel
def k(x, n):
    x[0] = x[1:n]
