# signature: parallel_add(f32[1], f32[1], f32[1])
# signature: parallel_add(f64[1], f64[1], f64[1])
# signature: parallel_add(i32[1], i32[1], i32[1])
import asc


@asc.kernel
def parallel_add(a, b, c):
    size = a.shape[0]
    asc.parallel_for(size, lambda i: c[i] = a[i] + b[i])
