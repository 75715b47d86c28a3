# mode: types
# signature: k(c128[1], c64, bool[1])
# expect: 10:14: error: complex numbers have no order: '<' between complex128 and complex64 (as in Python; compare abs(z) or z.real)
# expect: 11:14: error: complex numbers have no order: '>=' between complex64 and a Python int literal (as in Python; compare abs(z) or z.real)
# expect: 12:14: error: complex numbers have no order: '<' between Tensor[complex128, 1] and a Python float literal (as in Python; compare abs(z) or z.real)
import asc

@asc.kernel
def k(z, s, out):
    out[0] = z[0] < s
    out[0] = s >= 0
    out[:] = z < 1.0
