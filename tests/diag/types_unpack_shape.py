# mode: types
# signature: k(f32[4])
# expect: 9:5: error: cannot unpack the shape of a 4-dimensional tensor into 3 names
import asc


@asc.kernel
def k(x):
    b, c, h = x.shape
