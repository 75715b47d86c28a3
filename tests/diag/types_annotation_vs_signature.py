# mode: types
# signature: k(f64[2])
# expect: 8:7: error: parameter 'a' is annotated Tensor[float32, 2] but the signature gives Tensor[float64, 2]
import asc


@asc.kernel
def k(a: asc.Tensor[asc.float32, 2]):
    a[0, 0] = 1.0
