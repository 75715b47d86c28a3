# mode: types
# signature: k(f32[2])
# expect: 9:17: error: tuple index out of range: tuple[int64, int64] has 2 elements
import asc


@asc.kernel
def k(a):
    n = a.shape[5]
