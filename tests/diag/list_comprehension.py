# mode: types
# signature: k(f64[1], i64)
# expect: 8:33: error: a comprehension in a kernel is unrolled at compile time, so its condition ('if') must be known at compile time for each element (a comparison of the loop variables and constants); this one depends on run-time values (make the element `x if c else y`, or fill an array in a loop)
import asc

@asc.kernel
def k(x, n):
    y = [i for i in range(4) if i > n]
    x[0] = y[0]
