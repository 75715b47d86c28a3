# mode: types
# signature: k(f32[1])
# expect: 11:9: error: cannot assign a Python float literal to 'n', which has type int64
# expect: 10:5: note: 'n' first assigned here
import asc


@asc.kernel
def k(a):
    n = a.shape[0]
    n = 0.5
