# signature: promote(i8[1], u8[1], f64[1])
# signature: promote(bf16[1], f16[1], f64[1])
# signature: promote(u64[1], i64[1], f64[1])
# signature: promote(i32[1], f32[1], f64[1])
# signature: promote(bool[1], bool[1], f64[1])
# signature: promote(u32[1], i16[1], f64[1])
import asc


@asc.kernel
def promote(a, b, out):
    add = a[0] + b[0]
    sub = a[0] - b[0]
    mul_int_literal = a[0] * 2
    mul_float_literal = a[0] * 0.5
    div = a[0] / b[0]
    floordiv = a[0] // b[0]
    mod = a[0] % 3
    power = a[0] ** 2
    less = a[0] < b[0]
    chained = 0 < a[0] <= b[0]
    neg = -a[0]
    literal_only = 1 + 2
    literal_float = 1 + 2.5
    literal_div = 7 / 2
    out[0] = 1.5
