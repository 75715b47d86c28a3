# mode: types
# signature: k(i32[1], f32[1])
# expect: 9:31: error: atomic_add on Tensor[int32, 1]: cannot convert float32 to int32
import asc


@asc.kernel
def k(counts, w):
    asc.atomic_add(counts, 0, w[0])
