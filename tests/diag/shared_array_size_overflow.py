# mode: ir
# signature: k(f64[1])
# expect: 9:9: error: array of more than 1099511627776 bytes is too large
import asc


@asc.kernel
def k(a):
    t = asc.shared_array((4611686018427387904, 4), asc.float64)
    t[0, 0] = 1.0
    a[0] = t[0, 0]
