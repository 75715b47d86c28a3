# signature: shapes(f32[3], i64[2:s])
import asc


@asc.kernel
def shapes(t, u):
    d0, d1, d2 = t.shape
    last = t.shape[-1]
    first = u.shape[0]
    nd = t.ndim
    total = len(t.shape) + nd
    shp = u.shape
    rows, cols = shp
    u[rows - 1, cols - 1] = d0 * d1 * d2 + last + first
    t[0, 0, 0] = total
