# mode: types
# signature: k(f32[1], f32[1], f32[1])
# expect: 9:12: error: cannot store an array (Tensor[float32, 1]) into one element of Tensor[float32, 1]: index its operands, or assign to a slice (x[:] = ...)
import asc


@asc.kernel
def k(a, b, c):
    c[0] = a + b
