# mode: types
# signature: k(i8[1], u8[1])
# expect: 10:19: error: integer literal 300 does not fit in int8
# expect: 11:12: error: integer literal -1 does not fit in uint8
import asc


@asc.kernel
def k(a, b):
    a[0] = a[1] + 300
    b[0] = -1
    a[1] = -128
