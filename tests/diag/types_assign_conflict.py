# mode: types
# signature: k(f32[1])
# expect: 12:9: error: cannot assign float32 to 'n', which has type int64
# expect: 10:5: note: 'n' first assigned here
import asc


@asc.kernel
def k(a):
    n = a.shape[0]
    x = a[0]
    n = x
