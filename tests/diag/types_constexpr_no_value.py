# mode: types
# signature: k(f32[1], i64)
# expect: 8:10: error: ConstExpr parameter 'n' needs a value in the signature (e.g. i64=16)
import asc


@asc.kernel
def k(a, n: asc.ConstExpr[int]):
    a[0] = n
