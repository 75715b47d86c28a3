# mode: types
# signature: k(i32[1])
# expect: 9:20: error: integer power with a negative exponent (int32 ** a Python int literal): make the base a float
import asc


@asc.kernel
def k(a):
    a[0] = a[1] ** -1
