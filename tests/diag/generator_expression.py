# mode: types
# signature: k(f64[1], i64)
# expect: 8:30: error: a comprehension in a kernel is unrolled at compile time, so it must run over a sequence of static length (a shape, a tuple, range() with constant bounds, zip() or enumerate() of those): this bound of range() is not a compile-time constant
import asc

@asc.kernel
def k(x, n):
    y = sum(i for i in range(n))
