# mode: types
# signature: k(f32[1])
# expect: 10:27: error: a scratch array's shape must be an integer constant or a tuple of them
import asc


@asc.kernel
def k(a):
    n = a.shape[0]
    tmp = asc.local_array(n, asc.float32)
