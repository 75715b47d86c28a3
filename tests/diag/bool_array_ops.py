# mode: types
# signature: k(bool[1], bool[1], f64[1], i8[1])
# expect: 14:14: error: numpy boolean subtract, the `-` operator, is not supported, use the bitwise_xor, the `^` operator, or the logical_xor function instead
# expect: 15:14: error: the numpy boolean negative, the `-` operator, is not supported, use the `~` operator or the logical_not function instead
# expect: 16:5: error: cannot write the int64 result of += into Tensor[bool, 1] in place (numpy's same_kind rule): convert explicitly
import asc


# numpy's bool arrays: + is or, * is and; - and unary - raise TypeError
@asc.kernel
def k(b, c, x, out):
    out[:] = b + c
    out[:] = b * c
    out[:] = b - c
    out[:] = -(x > 1.0)
    b += 1
