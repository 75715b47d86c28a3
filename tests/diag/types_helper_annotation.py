# mode: types
# signature: k(f32[1], f32[1:s], f64[1])
# expect: 16:16: error: argument 't' of 'get' is annotated Tensor[float32, 1]; cannot pass Tensor[float64, 1]
# expect: 17:19: error: argument 'i' of 'get' is annotated int64; cannot pass a Python float literal
import asc


@asc.func
def get(t: asc.Tensor[asc.float32, 1], i: asc.int64) -> asc.float32:
    return t[i]


@asc.kernel
def k(a, b, d):
    a[0] = get(a, 1) + get(b, 2)
    a[1] = get(d, 0)
    a[2] = get(a, 0.5)
