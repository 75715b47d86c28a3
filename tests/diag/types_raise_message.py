# mode: types
# signature: k(f32[1])
# expect: 10:26: error: an exception message must be a string, not float32
import asc


@asc.kernel
def k(a):
    if a[0] < 0:
        raise ValueError(a[0])
