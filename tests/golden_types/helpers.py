# signature: helpers(f32[1], i64[1])
import asc


@asc.func
def square(x):
    return x * x


@asc.func
def clamp(x, lo, hi) -> asc.float32:
    if x < lo:
        return lo
    if x > hi:
        return hi
    return x


@asc.func
def twice(x):
    y = square(x)
    return y + y


@asc.kernel
def helpers(a, ids):
    a[0] = square(a[1]) + clamp(a[2], 0.0, 1.0)
    ids[0] = square(ids[1])
    ids[1] = square(3)
    a[3] = twice(a[4])
