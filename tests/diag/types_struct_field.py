# mode: types
# signature: k(f64[1])
# expect: 15:11: error: cannot assign float64 to field 'x', which has type int32
import asc


class P:
    x: asc.int32
    y: asc.int32


@asc.kernel
def k(a):
    p = P(1, 2)
    p.x = a[0]
