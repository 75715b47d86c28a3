# mode: types
# signature: k(f64[:])
# expect: 12:12: error: 'k' returns float64 here but tuple[float64, float64] elsewhere
import asc


@asc.kernel
def k(a):
    n = a.shape[0]
    if n > 2:
        return a[0], a[1]
    return a[0]
