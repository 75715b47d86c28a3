# mode: types
# signature: k(f32[1], f32[1], f32[1])
# expect: 9:12: error: unsupported operand types for +: Tensor[float32, 1] and Tensor[float32, 1] (whole-tensor arithmetic is not supported: index the tensor)
import asc


@asc.kernel
def k(a, b, c):
    c[0] = a + b
