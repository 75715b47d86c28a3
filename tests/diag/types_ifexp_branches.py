# mode: types
# signature: k(f32[1])
# expect: 9:9: error: the branches of a conditional expression have types Tensor[float32, 1] and a Python float literal
import asc


@asc.kernel
def k(a):
    x = a if a[0] > 0 else 0.0
